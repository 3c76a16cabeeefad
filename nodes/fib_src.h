/* The routes-per-source store both families keep beside their FIB
 * (nodes/ip4/ip4_route_src.c, nodes/ip6/ip6_route_src.c): a hash of
 * prefixes, each with one slot per source; the FIB holds only the best.
 * Control path only (barrier held); a prefix's bytes are paid once per
 * route, never per packet. A source's one path is kept in the entry,
 * several in an array of their own, so the 100,000s of single-path routes
 * a routing daemon brings cost no more than one path each.
 *
 * Chained by (prefix, len). Growing rehashes under the barrier, so it goes
 * a few buckets per update (Redis's incremental rehash): while old is set,
 * its buckets from moved on still hold entries and are searched too. A
 * walk of every entry settles the rehash first.
 *
 * A template, as the key and the path differ per family:
 *   FIB_SRC_ENTRY(ENTRY, KEY, PATH, N_SRC)  struct ENTRY
 *   FIB_SRC_DEFINE(p, ENTRY, KEY, PATH, N_SRC, MAXP, QUIESCE)
 * define static p_store and p_get, p_drop_if_empty, p_best, p_paths,
 * p_set_paths, p_clear, p_copy, p_check_paths, p_merge, p_commit,
 * p_remove_src, p_settle and p_free. Before FIB_SRC_DEFINE the family
 * declares or defines (static):
 *   uint32_t key_hash(const KEY *, uint8_t len);
 *   bool key_eq(const KEY *, const KEY *);
 *   int check_path(PATH *, char *err, size_t errlen)  (completes it)
 *   bool same_path(const PATH *, const PATH *);
 *   bool multipath_ok(const PATH *)  (may be one of several paths)
 *   int install_best(struct ENTRY *, char *err, size_t errlen)
 * and QUIESCE is the statement run before an update's install_best. */
#ifndef SLUICE_NODES_FIB_SRC_H
#define SLUICE_NODES_FIB_SRC_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/fib_defer.h"

#define FIB_SRC_REHASH_STEP 16u /* old buckets moved per update */

#define FIB_SRC_ENTRY(ENTRY, KEY, PATH, N_SRC)                                                              \
	struct ENTRY {                                                                                      \
		struct ENTRY *next;                                                                         \
		KEY key; /* the masked prefix */                                                            \
		uint8_t len;                                                                                \
		uint8_t present;         /* bit per source */                                               \
		uint8_t n[N_SRC];        /* paths per source */                                             \
		PATH one[N_SRC];         /* a source's path when it has one */                              \
		PATH *more[N_SRC];       /* its paths when several (malloc) */                              \
	}

/* Every entry e of p's live buckets (settle first); e may be freed. */
#define FIB_SRC_FOREACH(p, ENTRY, e)                                                                        \
	for (uint32_t p##_i_ = 0; p##_store.b && p##_i_ <= p##_store.mask; p##_i_++)                        \
		for (struct ENTRY *e = p##_store.b[p##_i_], *p##_nx_; e && ((p##_nx_ = e->next), 1); e = p##_nx_)

#define FIB_SRC_DEFINE(p, ENTRY, KEY, PATH, N_SRC, MAXP, QUIESCE)                                           \
	static struct {                                                                                     \
		struct ENTRY **b;                                                                           \
		uint32_t mask; /* buckets - 1 */                                                            \
		uint32_t n;                                                                                 \
		uint32_t n_src[N_SRC];                                                                      \
		struct ENTRY **old; /* the buckets being moved out, or NULL */                              \
		uint32_t old_mask, moved;                                                                   \
		uint64_t rehashed; /* entries moved, ever (tests bound it per update) */                    \
	} p##_store;                                                                                        \
                                                                                                            \
	static struct ENTRY **p##_chain_find(struct ENTRY **pp, const KEY *k, uint8_t len)                  \
	{                                                                                                   \
		while (*pp && ((*pp)->len != len || !key_eq(&(*pp)->key, k)))                               \
			pp = &(*pp)->next;                                                                  \
		return pp;                                                                                  \
	}                                                                                                   \
                                                                                                            \
	/* The link holding k/len, or (absent) the end of its chain in the                                  \
	 * live buckets, where an insert goes. */                                                           \
	static struct ENTRY **p##_slot_of(const KEY *k, uint8_t len)                                        \
	{                                                                                                   \
		if (!p##_store.b)                                                                           \
			return NULL;                                                                        \
		uint32_t h = key_hash(k, len);                                                              \
		struct ENTRY **pp = p##_chain_find(&p##_store.b[h & p##_store.mask], k, len);               \
		if (*pp || !p##_store.old || (h & p##_store.old_mask) < p##_store.moved)                    \
			return pp;                                                                          \
		struct ENTRY **op = p##_chain_find(&p##_store.old[h & p##_store.old_mask], k, len);         \
		return *op ? op : pp;                                                                       \
	}                                                                                                   \
                                                                                                            \
	/* Move FIB_SRC_REHASH_STEP old buckets over; free the old array after                              \
	 * the last. */                                                                                     \
	static void p##_rehash_step(void)                                                                   \
	{                                                                                                   \
		for (uint32_t end = p##_store.moved + FIB_SRC_REHASH_STEP; p##_store.old && p##_store.moved < end; \
		     p##_store.moved++) {                                                                   \
			if (p##_store.moved > p##_store.old_mask) {                                         \
				fib_free(p##_store.old);                                                        \
				p##_store.old = NULL;                                                       \
				break;                                                                      \
			}                                                                                   \
			for (struct ENTRY *e = p##_store.old[p##_store.moved], *nx; e; e = nx) {            \
				nx = e->next;                                                               \
				uint32_t h = key_hash(&e->key, e->len) & p##_store.mask;                    \
				e->next = p##_store.b[h];                                                   \
				p##_store.b[h] = e;                                                         \
				p##_store.rehashed++;                                                       \
			}                                                                                   \
			p##_store.old[p##_store.moved] = NULL;                                              \
		}                                                                                           \
	}                                                                                                   \
                                                                                                            \
	static __attribute__((unused)) void p##_settle(void)                                                \
	{                                                                                                   \
		while (p##_store.old)                                                                       \
			p##_rehash_step();                                                                  \
	}                                                                                                   \
                                                                                                            \
	/* Keep the chains short: at one entry per bucket, twice the buckets                                \
	 * (fresh zero pages from calloc), which the updates that follow fill. */                           \
	static int p##_grow(void)                                                                           \
	{                                                                                                   \
		p##_rehash_step();                                                                          \
		if (p##_store.b && (p##_store.n < p##_store.mask + 1 || p##_store.old))                     \
			return 0;                                                                           \
		uint32_t nb = p##_store.b ? 2 * (p##_store.mask + 1) : 256;                                 \
		struct ENTRY **b = calloc(nb, sizeof(*b));                                                  \
		if (!b)                                                                                     \
			return -ENOMEM;                                                                     \
		p##_store.old = p##_store.b;                                                                \
		p##_store.old_mask = p##_store.mask;                                                        \
		p##_store.moved = 0;                                                                        \
		p##_store.b = b;                                                                            \
		p##_store.mask = nb - 1;                                                                    \
		return 0;                                                                                   \
	}                                                                                                   \
                                                                                                            \
	static struct ENTRY *p##_get(const KEY *k, uint8_t len, bool create)                                \
	{                                                                                                   \
		struct ENTRY **pp = p##_slot_of(k, len);                                                    \
		if (pp && *pp)                                                                              \
			return *pp;                                                                         \
		if (!create || p##_grow())                                                                  \
			return NULL;                                                                        \
		struct ENTRY *e = calloc(1, sizeof(*e));                                                    \
		if (!e)                                                                                     \
			return NULL;                                                                        \
		e->key = *k;                                                                                \
		e->len = len;                                                                               \
		*p##_slot_of(k, len) = e;                                                                   \
		p##_store.n++;                                                                              \
		return e;                                                                                   \
	}                                                                                                   \
                                                                                                            \
	static void p##_drop_if_empty(struct ENTRY *e)                                                      \
	{                                                                                                   \
		if (e->present)                                                                             \
			return;                                                                             \
		struct ENTRY **pp = p##_slot_of(&e->key, e->len);                                           \
		*pp = e->next;                                                                              \
		fib_free(e); /* after the hold (fib_defer.h) */                                             \
		p##_store.n--;                                                                              \
		p##_rehash_step();                                                                          \
	}                                                                                                   \
                                                                                                            \
	/* The best source present (precedence is the enum's order), or -1. */                              \
	static int p##_best(const struct ENTRY *e)                                                          \
	{                                                                                                   \
		for (int s = 0; s < (N_SRC); s++)                                                           \
			if (e->present & (1u << s))                                                         \
				return s;                                                                   \
		return -1;                                                                                  \
	}                                                                                                   \
                                                                                                            \
	static PATH *p##_paths(struct ENTRY *e, int s)                                                      \
	{                                                                                                   \
		return e->n[s] > 1 ? e->more[s] : &e->one[s];                                               \
	}                                                                                                   \
                                                                                                            \
	/* src's paths become a copy of q[0..n) (n >= 1). 0 or -ENOMEM. */                                  \
	static int p##_set_paths(struct ENTRY *e, int src, const PATH *q, uint32_t n)                       \
	{                                                                                                   \
		PATH *m = NULL;                                                                             \
		if (n > 1) {                                                                                \
			if (!(m = malloc(n * sizeof(*m))))                                                  \
				return -ENOMEM;                                                             \
			memcpy(m, q, n * sizeof(*m));                                                       \
		} else {                                                                                    \
			e->one[src] = q[0];                                                                 \
		}                                                                                           \
		fib_free(e->more[src]);                                                                     \
		e->more[src] = m;                                                                           \
		e->n[src] = (uint8_t)n;                                                                     \
		if (!(e->present & (1u << src)))                                                            \
			p##_store.n_src[src]++;                                                             \
		e->present |= 1u << src;                                                                    \
		return 0;                                                                                   \
	}                                                                                                   \
                                                                                                            \
	static void p##_clear(struct ENTRY *e, int src)                                                     \
	{                                                                                                   \
		if (e->present & (1u << src))                                                               \
			p##_store.n_src[src]--;                                                             \
		e->present &= ~(1u << src);                                                                 \
		fib_free(e->more[src]);                                                                     \
		e->more[src] = NULL;                                                                        \
		e->n[src] = 0;                                                                              \
	}                                                                                                   \
                                                                                                            \
	/* src's paths for k/len into out: how many (0: none). */                                           \
	static uint32_t p##_copy(const KEY *k, uint8_t len, int src, PATH *out)                             \
	{                                                                                                   \
		struct ENTRY *e = p##_get(k, len, false);                                                   \
		if (!e || !(e->present & (1u << src)))                                                      \
			return 0;                                                                           \
		memcpy(out, p##_paths(e, src), e->n[src] * sizeof(*out));                                   \
		return e->n[src];                                                                           \
	}                                                                                                   \
                                                                                                            \
	/* Check (and complete) q[0..n) in place, the length checked before. */                             \
	static int p##_check_paths(PATH *q, uint32_t n, char *err, size_t errlen)                           \
	{                                                                                                   \
		if (n < 1 || n > (MAXP)) {                                                                  \
			snprintf(err, errlen, "1 to %u paths", (unsigned)(MAXP));                           \
			return -EINVAL;                                                                     \
		}                                                                                           \
		for (uint32_t i = 0; i < n; i++) {                                                          \
			int rc = check_path(&q[i], err, errlen);                                            \
			if (rc)                                                                             \
				return rc;                                                                  \
			if (n > 1 && !multipath_ok(&q[i])) {                                                \
				snprintf(err, errlen, "only next hops and devices make a multipath route");  \
				return -EINVAL;                                                             \
			}                                                                                   \
			for (uint32_t k = 0; k < i; k++)                                                    \
				if (same_path(&q[k], &q[i])) {                                              \
					snprintf(err, errlen, "the same path twice");                       \
					return -EINVAL;                                                     \
				}                                                                           \
		}                                                                                           \
		return 0;                                                                                   \
	}                                                                                                   \
                                                                                                            \
	/* cur[0..m) with add[0..n) merged in (a path already there is                                      \
	 * replaced, keeping its gen when keep_gen): the new count, or                                      \
	 * -EINVAL past MAXP. */                                                                            \
	static int p##_merge(PATH *cur, uint32_t m, PATH *add, uint32_t n, bool keep_gen, char *err,          \
			     size_t errlen)                                                                 \
	{                                                                                                   \
		for (uint32_t i = 0; i < n; i++) {                                                          \
			uint32_t k = 0;                                                                     \
			while (k < m && !same_path(&cur[k], &add[i]))                                       \
				k++;                                                                        \
			if (k == (MAXP)) {                                                                  \
				snprintf(err, errlen, "at most %u paths", (unsigned)(MAXP));                \
				return -EINVAL;                                                             \
			}                                                                                   \
			if (keep_gen && k < m)                                                              \
				add[i].gen = cur[k].gen;                                                    \
			cur[k] = add[i];                                                                    \
			m += k == m;                                                                        \
		}                                                                                           \
		return (int)m;                                                                              \
	}                                                                                                   \
                                                                                                            \
	/* src's route for k/len becomes q[0..n) (checked) and the FIB its                                  \
	 * best; when the FIB refuses, nothing changes. */                                                  \
	static int p##_commit(const KEY *k, uint8_t len, int src, const PATH *q, uint32_t n, char *err,     \
			      size_t errlen)                                                                \
	{                                                                                                   \
		PATH old[MAXP];                                                                             \
		struct ENTRY *e = p##_get(k, len, true);                                                    \
		uint32_t old_n = e && (e->present & (1u << src)) ? e->n[src] : 0;                           \
		if (old_n)                                                                                  \
			memcpy(old, p##_paths(e, src), old_n * sizeof(*old));                               \
		if (!e || p##_set_paths(e, src, q, n)) {                                                    \
			if (e)                                                                              \
				p##_drop_if_empty(e);                                                       \
			snprintf(err, errlen, "out of memory");                                             \
			return -ENOMEM;                                                                     \
		}                                                                                           \
		QUIESCE;                                                                                    \
		int rc = install_best(e, err, errlen);                                                      \
		if (rc) { /* the FIB kept the old route: so does the store */                               \
			if (!old_n || p##_set_paths(e, src, old, old_n))                                    \
				p##_clear(e, src);                                                          \
			p##_drop_if_empty(e);                                                               \
		}                                                                                           \
		return rc;                                                                                  \
	}                                                                                                   \
                                                                                                            \
	/* src's route in e goes; the next best (or nothing) takes the FIB. */                              \
	static void p##_remove_src(struct ENTRY *e, int src, char *err, size_t errlen)                      \
	{                                                                                                   \
		p##_clear(e, src);                                                                          \
		QUIESCE;                                                                                    \
		install_best(e, err, errlen); /* a removal, or a path that was good before */               \
		p##_drop_if_empty(e);                                                                       \
	}                                                                                                   \
                                                                                                            \
	static void p##_free(void)                                                                          \
	{                                                                                                   \
		p##_settle();                                                                               \
		FIB_SRC_FOREACH(p, ENTRY, e)                                                                \
		{                                                                                           \
			for (int s = 0; s < (N_SRC); s++)                                                   \
				free(e->more[s]);                                                           \
			free(e);                                                                            \
		}                                                                                           \
		free(p##_store.b);                                                                          \
		memset(&p##_store, 0, sizeof(p##_store));                                                   \
	}

#endif
