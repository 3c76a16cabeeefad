/* The route store both FIBs keep beside their lookup tables (nodes/ip4/
 * ip4_fib.c, nodes/ip6/ip6_fib_store.c): one open-addressing hash per
 * prefix length, the routes as added. It answers the exact-match get, the
 * walk and the covering-route search of a delete; the lookup tables hold
 * only what lookups need. Linear probing at load <= 1/2, backward-shift
 * deletion (no tombstones), shrinking below 1/8 so memory comes back.
 * Control side only, never read by the datapath.
 *
 * A template, as the key differs (a u32 for IPv4, two u64 halves for
 * IPv6): FIB_RULES_DEFINE(p, SLOT, TABLE, KEY, HASH, EQ) defines static
 * p_find, p_insert (a key known to be absent) and p_remove over
 *   SLOT  { KEY key; uint32_t val; }   val FIB_RULE_EMPTY: a free slot
 *   TABLE { SLOT *slots; uint32_t mask, n; }
 * with uint32_t HASH(KEY) and bool EQ(KEY, KEY).
 */
#ifndef SLUICE_NODES_FIB_RULES_H
#define SLUICE_NODES_FIB_RULES_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define FIB_RULE_EMPTY UINT32_MAX
#define FIB_RULE_TABLE_MIN 16u

#define FIB_RULES_DEFINE(p, SLOT, TABLE, KEY, HASH, EQ)                                                 \
	static SLOT *p##_find(const TABLE *rt, KEY key)                                                \
	{                                                                                                \
		if (!rt->slots)                                                                          \
			return NULL;                                                                     \
		for (uint32_t i = HASH(key) & rt->mask;; i = (i + 1) & rt->mask) {                      \
			SLOT *s = &rt->slots[i];                                                         \
			if (s->val == FIB_RULE_EMPTY)                                                    \
				return NULL;                                                             \
			if (EQ(s->key, key))                                                             \
				return s;                                                                \
		}                                                                                        \
	}                                                                                                \
                                                                                                         \
	static void p##_place(TABLE *rt, KEY key, uint32_t val)                                        \
	{                                                                                                \
		uint32_t i = HASH(key) & rt->mask;                                                       \
		while (rt->slots[i].val != FIB_RULE_EMPTY)                                               \
			i = (i + 1) & rt->mask;                                                          \
		rt->slots[i] = (SLOT){ key, val };                                                       \
	}                                                                                                \
                                                                                                         \
	static int p##_resize(TABLE *rt, uint32_t cap)                                                 \
	{                                                                                                \
		SLOT *old = rt->slots;                                                                   \
		uint32_t old_cap = old ? rt->mask + 1 : 0;                                               \
		SLOT *s = malloc((size_t)cap * sizeof(*s));                                              \
		if (!s)                                                                                  \
			return -ENOMEM;                                                                  \
		for (uint32_t i = 0; i < cap; i++)                                                       \
			s[i].val = FIB_RULE_EMPTY;                                                       \
		rt->slots = s;                                                                           \
		rt->mask = cap - 1;                                                                      \
		for (uint32_t i = 0; i < old_cap; i++)                                                   \
			if (old[i].val != FIB_RULE_EMPTY)                                                \
				p##_place(rt, old[i].key, old[i].val);                                   \
		free(old);                                                                               \
		return 0;                                                                                \
	}                                                                                                \
                                                                                                         \
	static int p##_insert(TABLE *rt, KEY key, uint32_t val)                                        \
	{                                                                                                \
		uint32_t cap = rt->slots ? rt->mask + 1 : 0;                                             \
		if ((uint64_t)(rt->n + 1) * 2 > cap) {                                                   \
			int rc = p##_resize(rt, cap ? cap * 2 : FIB_RULE_TABLE_MIN);                     \
			if (rc)                                                                          \
				return rc;                                                               \
		}                                                                                        \
		p##_place(rt, key, val);                                                                 \
		rt->n++;                                                                                 \
		return 0;                                                                                \
	}                                                                                                \
                                                                                                         \
	static void p##_remove(TABLE *rt, SLOT *s)                                                     \
	{                                                                                                \
		uint32_t i = (uint32_t)(s - rt->slots);                                                  \
		for (uint32_t j = (i + 1) & rt->mask;; j = (j + 1) & rt->mask) {                        \
			if (rt->slots[j].val == FIB_RULE_EMPTY)                                          \
				break;                                                                   \
			uint32_t home = HASH(rt->slots[j].key) & rt->mask;                               \
			/* Slot j may stay when its home lies cyclically in (i, j]. */                   \
			bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);         \
			if (!stays) {                                                                    \
				rt->slots[i] = rt->slots[j];                                             \
				i = j;                                                                   \
			}                                                                                \
		}                                                                                        \
		rt->slots[i].val = FIB_RULE_EMPTY;                                                       \
		rt->n--;                                                                                 \
		uint32_t cap = rt->mask + 1;                                                             \
		if (rt->n == 0) {                                                                        \
			free(rt->slots);                                                                 \
			rt->slots = NULL;                                                                \
			rt->mask = 0;                                                                    \
		} else if (cap > FIB_RULE_TABLE_MIN && (uint64_t)rt->n * 8 < cap) {                      \
			p##_resize(rt, cap / 2); /* on failure the table simply stays big */             \
		}                                                                                        \
	}

#endif
