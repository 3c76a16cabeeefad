/* Internals of the IPv6 FIB shared by its files: ip6_fib.c (the trie's
 * updates, add/delete, flush, bulk lookup), ip6_fib_store.c (the route
 * store: one hash per prefix length; get, walk) and ip6_fib_mem.c
 * (create/destroy, the memory modes, stats). The datapath sees only
 * ip6_fib.h. */
#ifndef SLUICE_NODES_IP6_IP6_FIB_PRIVATE_H
#define SLUICE_NODES_IP6_IP6_FIB_PRIVATE_H

#include "nodes/fib_rules.h"
#include "nodes/ip6/ip6_addr.h"
#include "nodes/ip6/ip6_fib.h"

#define IP6_FIB_TBL24_ENTRIES (1u << 24)
#define IP6_FIB_TBL24_BYTES ((size_t)IP6_FIB_TBL24_ENTRIES * sizeof(uint32_t))
#define IP6_FIB_GROUP_ENTRIES 256u
#define IP6_FIB_GROUP_BYTES (IP6_FIB_GROUP_ENTRIES * sizeof(uint32_t))
#define IP6_FIB_LEVELS 14 /* tbl24 (level 0) and 13 strides of 8 bits */

/* A 128-bit key in host order: hi holds address bytes 0..7. */
struct ip6_key {
	uint64_t hi, lo;
};

/* ---- the route store: one open-addressing hash per prefix length ---- */

struct ip6_rule_slot {
	struct ip6_key key; /* masked prefix */
	uint32_t val;       /* result, or FIB_RULE_EMPTY */
};

struct ip6_rule_table {
	FIB_RULE_TABLE_FIELDS(struct ip6_rule_slot)
};


struct ip6_fib {
	struct ip6_fib_tables t; /* first: the inline lookups cast to it */
	uint32_t *tbl24;
	uint32_t *groups;
	uint8_t *depth24;      /* per tbl24 entry: its route's length */
	uint8_t *depth_groups; /* per group entry, likewise */
	enum ip6_fib_pages tbl24_pages, groups_pages;
	uint32_t n_groups;
	uint32_t max_routes;
	uint32_t n_routes;
	uint64_t len_used[3]; /* bit l: some route of length l (0..128) */

	uint16_t *n_long;      /* per group: entries that are EXT or hold a
	                        * route longer than the parent slot */
	uint8_t *level;        /* per group: its level (1..13) */
	uint32_t n_by_level[IP6_FIB_LEVELS]; /* groups linked, per level */
	uint32_t *free_groups; /* stack */
	uint32_t n_free;
	uint32_t *pending_groups; /* freed, waiting for ip6_fib_quiesce */
	uint32_t n_pending;

	struct ip6_rule_table rules[129];
};

static inline struct ip6_key ip6_key_of(const ip6_addr_a2 *a)
{
	struct ip6_key k = { 0, 0 };
	for (int i = 0; i < 8; i++) {
		k.hi = (k.hi << 8) | a->s6_addr[i];
		k.lo = (k.lo << 8) | a->s6_addr[8 + i];
	}
	return k;
}

static inline struct in6_addr ip6_addr_of(struct ip6_key k)
{
	struct in6_addr a;
	for (int i = 7; i >= 0; i--) {
		a.s6_addr[i] = (uint8_t)k.hi;
		a.s6_addr[8 + i] = (uint8_t)k.lo;
		k.hi >>= 8;
		k.lo >>= 8;
	}
	return a;
}

static inline struct ip6_key ip6_key_mask(struct ip6_key k, unsigned len)
{
	if (len <= 64) {
		k.lo = 0;
		k.hi &= len ? ~0ull << (64 - len) : 0;
	} else {
		k.lo &= ~0ull << (128 - len);
	}
	return k;
}

/* Byte i (0..15) of the key, as in the address. */
static inline uint8_t ip6_key_byte(struct ip6_key k, unsigned i)
{
	return (uint8_t)(i < 8 ? k.hi >> (56 - 8 * i) : k.lo >> (56 - 8 * (i - 8)));
}

static inline bool ip6_len_used(const struct ip6_fib *fib, unsigned len)
{
	return fib->len_used[len >> 6] >> (len & 63) & 1;
}

/* ip6_fib_store.c */
struct ip6_rule_slot *ip6_rule_find(const struct ip6_rule_table *rt, struct ip6_key key);
int ip6_rule_insert(struct ip6_rule_table *rt, struct ip6_key key, uint32_t val);
void ip6_rule_remove(struct ip6_rule_table *rt, struct ip6_rule_slot *s);
void ip6_rules_free(struct ip6_fib *fib);

#endif
