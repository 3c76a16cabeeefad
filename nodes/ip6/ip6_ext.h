/* The IPv6 extension-header walk ip6-input makes (RFC 8200 §4): from the
 * fixed header to the upper layer, bounded in number (IP6_EXT_MAX) and
 * length (IP6_EXT_MAX_BYTES), with the options of Hop-by-Hop headers (and
 * of Destination Options headers for packets to sluice) walked in bounds
 * too (IP6_OPT_MAX), and Routing headers judged per RFC 5095.
 *
 * Private to nodes/ip6: the verdicts are ip6-input's error codes.
 */
#ifndef SLUICE_NODES_IP6_EXT_H
#define SLUICE_NODES_IP6_EXT_H

#include <stdbool.h>
#include <stdint.h>

/* What the walk found wrong; each is one of ip6-input's counters. */
enum ip6_ext_verdict {
	IP6_EXT_OK = 0,
	IP6_EXT_TOO_MANY,       /* more than IP6_EXT_MAX headers */
	IP6_EXT_TOO_LONG,       /* more than IP6_EXT_MAX_BYTES of them */
	IP6_EXT_TRUNCATED,      /* a header beyond the packet */
	IP6_EXT_HBH_NOT_FIRST,  /* Parameter Problem code 1 (RFC 8200 §4.1) */
	IP6_EXT_OPT_TOO_MANY,   /* more than IP6_OPT_MAX options in a header */
	IP6_EXT_OPT_TRUNCATED,  /* an option beyond its header */
	IP6_EXT_OPT_DISCARD,    /* unrecognized option, action 01: silently (§4.2) */
	IP6_EXT_OPT_UNKNOWN,    /* unrecognized option, action 10/11: Parameter Problem code 2 */
	IP6_EXT_RH0,            /* type 0 with segments left, to us: Parameter Problem code 0 (RFC 5095 §3) */
	IP6_EXT_RH_UNKNOWN,     /* other type with segments left, to us: Parameter Problem code 0 (§4.4) */
	IP6_EXT_RH0_TRANSIT,    /* type 0 with segments left, in transit: dropped by policy */
};

/* Next Header values the walk steps over (the common layout, RFC 8200
 * §4, RFC 6564): 1 at each; ip6-input's fast path takes a packet whose
 * fixed header is followed by anything else (TCP, UDP, ICMPv6, ESP...). */
extern const uint8_t ip6_ext_is_header[256];

struct ip6_ext_walk {
	uint8_t l4_proto;    /* the Next Header after the last extension header */
	uint16_t l4_offset;  /* from the IPv6 header */
	bool router_alert;   /* a Hop-by-Hop router alert for MLD (RFC 2711) */
	uint8_t icmp_code;   /* Parameter Problem's code for the verdicts that send one */
	uint32_t pointer;    /* ...and its pointer (from the IPv6 header) */
};

/* Walk the len bytes at p (an IPv6 packet, header first). local: the
 * packet is addressed to sluice (Destination Options and Routing headers
 * are then its to process); mcast_dst: action 11 options then send
 * nothing. */
enum ip6_ext_verdict ip6_ext_walk(const uint8_t *p, uint32_t len, bool local, bool mcast_dst, struct ip6_ext_walk *w);

#endif
