/* Internals of the IPv4 FIB shared by its files: ip4_fib.c (the DIR-24-8
 * tables, the route store, add/delete, walk), ip4_fib_mem.c
 * (create/destroy, the memory modes, stats) and ip4_fib_adj.c (the
 * adjacency table), ip4_fib_lb.c (load balances). The datapath sees only ip4_fib.h. */
#ifndef SLUICE_NODES_IP4_IP4_FIB_PRIVATE_H
#define SLUICE_NODES_IP4_IP4_FIB_PRIVATE_H

#include "nodes/fib_rules.h"
#include "nodes/ip4/ip4_fib.h"

#define IP4_FIB_TBL24_ENTRIES (1u << 24)
#define IP4_FIB_TBL24_BYTES ((size_t)IP4_FIB_TBL24_ENTRIES * sizeof(uint32_t))
#define IP4_FIB_GROUP_ENTRIES 256u
#define IP4_FIB_GROUP_BYTES (IP4_FIB_GROUP_ENTRIES * sizeof(uint32_t))

/* ---- the route store: one open-addressing hash per prefix length ---- */

struct rule_slot {
	uint32_t key; /* masked prefix */
	uint32_t val; /* result, or FIB_RULE_EMPTY */
};

struct rule_table {
	FIB_RULE_TABLE_FIELDS(struct rule_slot)
};

struct ip4_fib {
	struct ip4_fib_tables t; /* first: the inline lookups cast to it */
	uint32_t *tbl24;
	uint32_t *tbl8;
	struct ip4_adj *adj;
	enum ip4_fib_pages tbl24_pages, tbl8_pages;
	uint32_t n_tbl8;
	uint32_t max_routes;
	uint32_t n_routes;
	uint64_t len_used; /* bit l: some route of length l exists */

	uint16_t *n_long;   /* per group: entries of depth > 24 */
	uint32_t *free_groups; /* stack; pending sits on top of the same array's
	                        * other end (n_tbl8 slots hold both) */
	uint32_t n_free;
	uint32_t *pending_groups;
	uint32_t n_pending;

	uint32_t max_adj;
	uint32_t n_adj;      /* live, drop included */
	uint32_t adj_hw;     /* slots ever used: 1..adj_hw - 1 are candidates */
	uint32_t *adj_free;  /* stack of released indices */
	uint32_t n_adj_free;

	struct rule_table rules[33];

	/* Page faults kept out of barrier holds (ip4_fib_prefault): which
	 * 2 MB regions of tbl24 are populated, a bit each; the groups from 0
	 * up to groups_populated are, and groups_hw is one past the highest
	 * group ever allocated (stored under the barrier, read outside it). */
	_Atomic uint64_t tbl24_populated[(IP4_FIB_TBL24_BYTES >> 21) / 64 + 1];
	_Atomic uint32_t groups_populated, groups_hw;

	/* load balances (ip4_fib_lb.c): buckets for the datapath, paths here */
	struct ip4_lb *lb;
	struct ip4_lb_ctl *lb_ctl;
	uint32_t max_lb;
	uint32_t lb_hw;      /* slots ever used */
	uint32_t *lb_free;   /* stack of released indices */
	uint32_t n_lb_free;
};

struct ip4_lb_ctl {
	uint32_t n_paths;
	struct ip4_lb_path paths[IP4_LB_MAX_PATHS];
};

/* Free the route store's arrays (ip4_fib.c, where the template lives). */
void ip4_rules_free(struct ip4_fib *fib);

/* Bytes of the route store's arrays, a resize in flight included. */
uint64_t ip4_rules_bytes(const struct ip4_fib *fib);

/* A fresh adjacency slot holding *init. Index or -ENOSPC. */
int ip4_adj_alloc(struct ip4_fib *fib, const struct ip4_adj *init);

/* Release an LB's paths and its slot (its adjacency's last reference went:
 * ip4_fib_adj.c). */
void ip4_lb_free(struct ip4_fib *fib, uint32_t lb_index);


#endif
