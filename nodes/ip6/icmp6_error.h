/* ICMPv6 error messages (RFC 4443 §2.4, §3) built in place of the packet
 * they are about, for the ip6 nodes that drop one with an error to tell.
 *
 * Rules, RFC 4443 §2.4:
 *   (c) the message quotes as much of the invoking packet as fits in the
 *       minimum MTU (1280 bytes);
 *   (e) none about an ICMPv6 error message or a Redirect, nor about a
 *       packet sent to a multicast address or as link-layer multicast or
 *       broadcast, except Packet Too Big and Parameter Problem code 2;
 *       none about a packet whose source does not name one node
 *       (unspecified or multicast);
 *   (f) rate-limited: a token bucket per thread, ICMP6_ERROR_RATE per
 *       second in bursts of ICMP6_ERROR_BURST (the figures of sluice's
 *       ICMPv4 errors, nodes/ip4/ip4-rewrite.c).
 * Its source is the address the packet was sent to when that is one of
 * ours, else the rx interface's address for the packet's source (RFC 4443
 * §2.2). Until ip6-lookup routes it, it leaves by the interface the packet
 * came in on, to the link-layer source (the previous hop).
 */
#ifndef SLUICE_NODES_IP6_ICMP6_ERROR_H
#define SLUICE_NODES_IP6_ICMP6_ERROR_H

#include <stdint.h>

#include "graph/buffer.h"
#include "nodes/ip4/ip4.h"

/* Destination Unreachable codes (RFC 4443 §3.1) sluice sends. */
#define ICMP6_DU_ADMIN_PROHIBITED 1 /* communication administratively prohibited (a prohibit route) */
#define ICMP6_DU_ADDR_UNREACHABLE 3 /* address resolution failed (RFC 4861 §7.2.2) */

#define ICMP6_ERROR_RATE 100 /* per second and thread */
#define ICMP6_ERROR_BURST 10

/* Per thread (a node's runtime data). */
struct icmp6_error_bucket {
	struct icmp_rate_bucket rate;
};

enum icmp6_error_verdict {
	ICMP6_ERROR_BUILT = 0,   /* b is the message, at its Ethernet header, tx_if set */
	ICMP6_ERROR_NOT_ALLOWED, /* §2.4(e), or no room or no source address: drop b */
	ICMP6_ERROR_RATE_LIMITED,
};

/* Turn b (at its IPv6 header, received from Ethernet; ip6_opaque's
 * l4_proto and l4_offset set, l4_proto 0xff when unknown) into the error
 * type/code with param (the MTU of Packet Too Big, the pointer of
 * Parameter Problem). *now is read once per frame (0: not yet). */
enum icmp6_error_verdict icmp6_error_make(struct icmp6_error_bucket *bk, uint64_t *now, struct buffer *b, uint8_t type,
					  uint8_t code, uint32_t param);

#endif
