/* IPv6 load balances (ECMP): a route with several paths points at an
 * IP6_ADJ_LB adjacency whose if_index names one of ip6_lbs[], a table of
 * 16, 32 or 64 buckets each holding a path's adjacency (REWRITE or GLEAN).
 * The shares by weight, the stickiness of updates and the growth by
 * doubling are nodes/fib_lb.h's, the same code as IPv4's load balances.
 * ip6-lookup picks bucket (ip6_flow_hash & mask) for each packet of an LB
 * route, so one flow stays on one path and the nodes after see only the
 * path's adjacency.
 *
 * Updates run under the graph barrier; a bucket is one aligned 32-bit
 * store and a growing table's new half is written before its mask
 * (release), so a racing lookup sees the old path or the new one. */
#ifndef SLUICE_NODES_IP6_IP6_LB_H
#define SLUICE_NODES_IP6_IP6_LB_H

#include <stdint.h>
#include <string.h>

#include "nodes/fib_lb.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_route.h"

#define IP6_LB_MAX 1024 /* load balances (multipath routes with distinct path sets) */
#define IP6_LB_MAX_PATHS FIB_LB_MAX_PATHS

struct ip6_lb {
	uint32_t mask; /* buckets - 1 (read with acquire) */
	uint32_t buckets[FIB_LB_MAX_BUCKETS];
};

extern struct ip6_lb ip6_lbs[IP6_LB_MAX];

/* A 32-bit hash of the flow: both addresses, the next header and, for TCP,
 * UDP and SCTP directly after the fixed header, the ports (a packet with
 * extension headers before them hashes by addresses and next header only:
 * still one flow, one path). Folded to 64 bits and mixed with MurmurHash3's
 * fmix64 (ip_flow_mix, ip4.h), as ip4_flow_hash: no seed, so a test can tell which path a port
 * takes. The flow label is left out: Linux hosts set it per socket and
 * may change it (net.ipv6.auto_flowlabels, RFC 6437 §3), which would move
 * a flow between paths. */
static inline uint32_t ip6_flow_hash(const struct ip6_header *h)
{
	uint64_t s[2], d[2];
	memcpy(s, &h->src, 16);
	memcpy(d, &h->dst, 16);
	uint64_t k = s[0] ^ (s[1] * 0x9e3779b97f4a7c15ull) ^ (d[0] * 0xc2b2ae3d27d4eb4full) ^ d[1];
	uint32_t ports = 0, nh = h->next_header;
	if ((nh == 6 || nh == 17 || nh == 132) && ntohs(h->payload_length) >= 4)
		memcpy(&ports, (const uint8_t *)h + IP6_HDR_LEN, 4);
	return ip_flow_mix(k, ports, (uint8_t)nh);
}

/* The path adjacency a flow of hash h takes through LB adjacency a. */
static inline uint32_t ip6_lb_pick(const struct ip6_adj *a, uint32_t h)
{
	const struct ip6_lb *lb = &ip6_lbs[a->if_index < IP6_LB_MAX ? a->if_index : 0];
	uint32_t mask = __atomic_load_n(&lb->mask, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&lb->buckets[h & mask], __ATOMIC_RELAXED);
}

/* ---- control calls (barrier held; ip6_route.c) ---- */

/* A new LB over n (2..IP6_LB_MAX_PATHS) path adjacencies, taking over the
 * caller's references: its LB adjacency (one reference), or -ENOSPC
 * (references kept by the caller). */
int ip6_lb_create(const struct fib_lb_path *paths, uint32_t n);

/* Replace LB adjacency lb_adj's paths (references taken over, the old
 * ones released), keeping the buckets of the paths that stay. */
void ip6_lb_update(uint32_t lb_adj, const struct fib_lb_path *paths, uint32_t n);

/* lb_adj's paths (at most max into out): how many, 0 when not an LB. */
uint32_t ip6_lb_paths(uint32_t lb_adj, struct fib_lb_path *out, uint32_t max);

/* Release LB slot l and its paths' adjacencies (its adjacency went). */
void ip6_lb_free(uint32_t l);

/* Forget every LB (ip6_main_free). */
void ip6_lb_reset(void);

#endif
