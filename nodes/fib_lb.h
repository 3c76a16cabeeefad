/* Load-balance buckets shared by both FIBs (nodes/ip4/ip4_fib_lb.c,
 * nodes/ip6/ip6_lb.c): a route's several paths as a power-of-two table of
 * 16, 32 or 64 buckets, each a path's adjacency index, as VPP's
 * load_balance_t. A packet takes bucket (flow hash & (size - 1)).
 *
 * Shares: path i of weight w_i out of W gets B * w_i / W buckets. B is the
 * smallest of 16, 32, 64 (and not below the table's current size) for
 * which every share is whole; else 64 and Hamilton's largest-remainder
 * rounding, every path at least one bucket. So 1:3 is 4/12 of 16 buckets
 * exactly, and three equal paths 22/21/21 of 64 (a 1.6% skew at most).
 *
 * Stickiness: an update keeps each bucket whose path is still there and
 * within its new share, and gives only the freed buckets to the paths
 * below their share, so a removed path's flows move and no other flow does
 * (RFC 2992 analyses how recomputed hash-threshold regions disrupt flows of
 * the paths that stay too; Linux's resilient nexthop groups keep buckets
 * the same way). A table that grows is first doubled by copying (bucket k
 * of 2B is bucket k mod B of B, the one a flow's hash & (B - 1) chose), so
 * growing moves no flow either; it never shrinks.
 *
 * Control path only; the buckets are written with relaxed aligned stores,
 * each a whole adjacency index, so a racing lookup sees the old path or
 * the new one. */
#ifndef SLUICE_NODES_FIB_LB_H
#define SLUICE_NODES_FIB_LB_H

#include <stdint.h>

#define FIB_LB_MAX_PATHS 16
#define FIB_LB_MIN_BUCKETS 16
#define FIB_LB_MAX_BUCKETS 64

struct fib_lb_path {
	uint32_t adj_index; /* the family's REWRITE or GLEAN adjacency */
	uint32_t weight;    /* 1..256 (0 counts as 1) */
};

/* The table size for these weights, at least min_b (a power of two). */
uint32_t fib_lb_buckets_for(const struct fib_lb_path *paths, uint32_t n, uint32_t min_b);

/* Fill buckets[0..b) with paths by their shares; want[k] is bucket k's
 * current adjacency (0: none), kept where its path stays within share. */
void fib_lb_assign(uint32_t *buckets, const uint32_t *want, uint32_t b, const struct fib_lb_path *paths,
		   uint32_t n);

/* Replace a live table's paths: *mask (buckets - 1) grows first when the
 * new weights want more buckets (the copies, then the mask, release), then
 * the buckets are assigned keeping what may stay. */
void fib_lb_update(uint32_t *buckets, uint32_t *mask, const struct fib_lb_path *paths, uint32_t n);

#endif
