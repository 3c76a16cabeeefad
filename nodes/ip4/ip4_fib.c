/* The IPv4 FIB: DIR-24-8 with per-entry depths, a per-length route hash and
 * the adjacency table. See ip4_fib.h for the contract. This file holds the
 * tables' updates, the route store and the walk (the lookups, bulk too,
 * are inline in ip4_fib.h); ip4_fib_mem.c creates the tables on the pages
 * asked for, ip4_fib_adj.c keeps the adjacencies.
 *
 * Entry (32 bits, tbl24 and tbl8 alike):
 *   bit 31      EXT: bits 24..0 name a tbl8 group (tbl24 entries only)
 *   bits 30..25 depth of the route whose result this is (0: /0 or no route)
 *   bits 24..0  the result (IP4_FIB_MISS with depth 0 when nothing matches)
 *
 * Invariant: every entry holds the longest route covering its addresses.
 * Add P/d rewrites, within P's range, only the entries of depth <= d (longer
 * routes stay). Delete P/d rewrites only the entries of depth == d in P's
 * range - exactly P's own - with the longest remaining route shorter than d
 * that covers P: any shorter prefix covering one address of P covers all of
 * P, so that fallback is the same for the whole range.
 *
 * tbl8 groups: a group holds the 256 /32s under one tbl24 entry. Its entries
 * of depth <= 24 all hold the same value (the longest route of depth <= 24
 * covering that /24), so a group is uniform again exactly when it has no
 * entry of depth > 24; n_long counts those and a group whose count drops to
 * zero folds back into its tbl24 entry and waits for ip4_fib_quiesce.
 *
 * Cost, measured by bench/ip4 with 1.07M routes of the BGP-like mix: the
 * average add touches ~50 entries (a /24 one, a /16 256; a /8 65,536 but
 * there are ~200 of them) plus one hash insert; a delete adds the search for
 * its fallback, one probe per prefix length in use below it.
 */
#include "nodes/fib_rules.h"
#include "nodes/ip4/ip4_fib_private.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>


static inline uint32_t e_make(uint32_t depth, uint32_t value)
{
	return (depth << IP4_FIB_E_DEPTH_SHIFT) | value;
}

static inline uint32_t e_depth(uint32_t e)
{
	return (e >> IP4_FIB_E_DEPTH_SHIFT) & 0x3f;
}

static inline uint32_t mask_of(uint32_t len)
{
	return len ? ~0u << (32 - len) : 0;
}

/* Entries the datapath may be reading: one aligned 32-bit store each. */
static inline void e_store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* ---- the route store: one open-addressing hash per prefix length ---- */

static inline uint32_t rule_hash(uint32_t k)
{
	k ^= k >> 16;
	k *= 0x85ebca6bu;
	k ^= k >> 13;
	k *= 0xc2b2ae35u;
	k ^= k >> 16;
	return k;
}

static inline bool rule_key_eq(uint32_t a, uint32_t b)
{
	return a == b;
}

FIB_RULES_DEFINE(rule, struct rule_slot, struct rule_table, uint32_t, rule_hash, rule_key_eq)

void ip4_rules_free(struct ip4_fib *fib)
{
	for (int l = 0; l <= 32; l++)
		rule_free(&fib->rules[l]);
}

uint64_t ip4_rules_bytes(const struct ip4_fib *fib)
{
	uint64_t b = 0;
	for (int l = 0; l <= 32; l++)
		b += rule_bytes(&fib->rules[l]);
	return b;
}

/* ---- tbl8 groups ---- */

static uint32_t group_alloc(struct ip4_fib *fib)
{
	uint32_t g = fib->free_groups[--fib->n_free];
	if (g >= atomic_load_explicit(&fib->groups_hw, memory_order_relaxed))
		atomic_store_explicit(&fib->groups_hw, g + 1, memory_order_relaxed);
	return g;
}

static void group_retire(struct ip4_fib *fib, uint32_t g)
{
	fib->pending_groups[fib->n_pending++] = g;
}

void ip4_fib_quiesce(struct ip4_fib *fib)
{
	while (fib->n_pending)
		fib->free_groups[fib->n_free++] = fib->pending_groups[--fib->n_pending];
}

/* ---- updates ---- */

/* The longest route shorter than len covering prefix, as an entry (depth and
 * result); 0 (depth 0, IP4_FIB_MISS) when there is none. */
static uint32_t fallback_entry(const struct ip4_fib *fib, uint32_t prefix, uint32_t len)
{
	uint64_t lens = fib->len_used & ((1ull << len) - 1);
	while (lens) {
		uint32_t l = 63 - (uint32_t)__builtin_clzll(lens);
		const struct rule_slot *s = rule_find(&fib->rules[l], prefix & mask_of(l));
		if (s)
			return e_make(l, s->val);
		lens &= ~(1ull << l);
	}
	return 0;
}

/* Write ne over the group entries [lo, lo + n) that the update owns: for an
 * add those of depth <= d, for a delete those of depth == d. Keeps n_long in
 * step. */
static void group_write(struct ip4_fib *fib, uint32_t g, uint32_t lo, uint32_t n, uint32_t ne,
			uint32_t d, bool del)
{
	uint32_t *grp = &fib->tbl8[(size_t)g * IP4_FIB_GROUP_ENTRIES];
	bool new_long = e_depth(ne) > 24;
	for (uint32_t k = lo; k < lo + n; k++) {
		uint32_t od = e_depth(grp[k]);
		if (del ? od != d : od > d)
			continue;
		fib->n_long[g] += (uint16_t)new_long - (uint16_t)(od > 24);
		e_store(&grp[k], ne);
	}
}

/* Apply an add (ne of depth d over prefix/d) or a delete (entries of depth d
 * in prefix/d become ne, the fallback) to the tables. Cannot fail: an add
 * that needs a new group has checked that one is free. */
static void tables_update(struct ip4_fib *fib, uint32_t prefix, uint32_t d, uint32_t ne, bool del)
{
	if (d <= 24) {
		uint32_t first = prefix >> 8, n = 1u << (24 - d);
		for (uint32_t i = first; i < first + n; i++) {
			uint32_t e = fib->tbl24[i];
			if (e & IP4_FIB_E_EXT)
				/* Only entries of depth <= 24 can match: n_long unchanged. */
				group_write(fib, e & IP4_FIB_E_VALUE_MASK, 0, IP4_FIB_GROUP_ENTRIES, ne, d, del);
			else if (del ? e_depth(e) == d : e_depth(e) <= d)
				e_store(&fib->tbl24[i], ne);
		}
		return;
	}
	uint32_t i = prefix >> 8, lo = prefix & 0xff, n = 1u << (32 - d);
	uint32_t e = fib->tbl24[i];
	if (!(e & IP4_FIB_E_EXT)) {
		/* Only an add gets here (a deleted /25+ route lives in a group). Fill
		 * the group unseen, then link it with a release store. */
		uint32_t g = group_alloc(fib);
		uint32_t *grp = &fib->tbl8[(size_t)g * IP4_FIB_GROUP_ENTRIES];
		for (uint32_t k = 0; k < IP4_FIB_GROUP_ENTRIES; k++)
			grp[k] = (k - lo < n) ? ne : e;
		fib->n_long[g] = (uint16_t)n;
		__atomic_store_n(&fib->tbl24[i], IP4_FIB_E_EXT | g, __ATOMIC_RELEASE);
		return;
	}
	uint32_t g = e & IP4_FIB_E_VALUE_MASK;
	group_write(fib, g, lo, n, ne, d, del);
	if (fib->n_long[g] == 0) {
		/* Uniform again: every entry holds the /24's covering value. */
		e_store(&fib->tbl24[i], fib->tbl8[(size_t)g * IP4_FIB_GROUP_ENTRIES]);
		group_retire(fib, g);
	}
}

int ip4_fib_add(struct ip4_fib *fib, uint32_t prefix, uint8_t len, uint32_t result)
{
	if (len > 32 || result >= IP4_FIB_RESULT_LIMIT)
		return -EINVAL;
	prefix &= mask_of(len);
	struct rule_table *rt = &fib->rules[len];
	struct rule_slot *s = rule_find(rt, prefix);
	if (s) {
		s->val = result;
	} else {
		if (fib->max_routes && fib->n_routes >= fib->max_routes)
			return -ENOSPC;
		if (len > 24 && !(fib->tbl24[prefix >> 8] & IP4_FIB_E_EXT) && fib->n_free == 0)
			return -ENOSPC;
		int rc = rule_insert(rt, prefix, result);
		if (rc)
			return rc;
		fib->n_routes++;
		fib->len_used |= 1ull << len;
	}
	tables_update(fib, prefix, len, e_make(len, result), false);
	return 0;
}

int ip4_fib_del(struct ip4_fib *fib, uint32_t prefix, uint8_t len)
{
	if (len > 32)
		return -EINVAL;
	prefix &= mask_of(len);
	struct rule_table *rt = &fib->rules[len];
	struct rule_slot *s = rule_find(rt, prefix);
	if (!s)
		return -ENOENT;
	rule_remove(rt, s);
	fib->n_routes--;
	if (rt->n == 0)
		fib->len_used &= ~(1ull << len);
	tables_update(fib, prefix, len, fallback_entry(fib, prefix, len), true);
	return 0;
}

int ip4_fib_get(const struct ip4_fib *fib, uint32_t prefix, uint8_t len, uint32_t *result)
{
	if (len > 32)
		return -EINVAL;
	const struct rule_slot *s = rule_find(&fib->rules[len], prefix & mask_of(len));
	if (!s)
		return -ENOENT;
	if (result)
		*result = s->val;
	return 0;
}

void ip4_fib_flush(struct ip4_fib *fib)
{
	for (uint32_t i = 0; i < IP4_FIB_TBL24_ENTRIES; i++) {
		uint32_t e = fib->tbl24[i];
		if (!e)
			continue;
		e_store(&fib->tbl24[i], 0);
		if (e & IP4_FIB_E_EXT)
			group_retire(fib, e & IP4_FIB_E_VALUE_MASK);
	}
	ip4_rules_free(fib);
	fib->n_routes = 0;
	fib->len_used = 0;
}

/* ---- page faults out of the barrier ----
 *
 * tbl24 and the groups are THP-advised and touched only as used (AUTO), so
 * the first write into a 2 MB region faults it in: zeroing 2 MB, and with
 * THP defrag "madvise" perhaps compacting memory first, milliseconds on a
 * busy box, inside the barrier hold of whichever update wrote first. A
 * control thread about to apply updates calls this first, outside the
 * barrier: MADV_POPULATE_WRITE (Linux 5.14) faults the pages in without
 * changing them, safe beside lookups and updates. Regions done are
 * remembered, so the system calls stop once the table is in. */
#define REGION_SHIFT 21
#define GROUPS_AHEAD 2048u /* 2 MB of groups past the highest in use */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static void populate(void *p, size_t bytes)
{
	madvise(p, bytes, MADV_POPULATE_WRITE); /* before 5.14: EINVAL, the fault comes later */
}

void ip4_fib_prefault(struct ip4_fib *fib, uint32_t prefix_h, uint8_t len)
{
	if (!fib || len > 32)
		return;
	uint32_t first = (prefix_h & mask_of(len)) >> 8, n = len <= 24 ? 1u << (24 - len) : 1;
	size_t lo = ((size_t)first * 4) >> REGION_SHIFT, hi = ((size_t)(first + n - 1) * 4) >> REGION_SHIFT;
	for (size_t r = lo; r <= hi; r++) {
		uint64_t bit = 1ull << (r & 63);
		if (atomic_load_explicit(&fib->tbl24_populated[r >> 6], memory_order_relaxed) & bit)
			continue;
		populate((uint8_t *)fib->tbl24 + (r << REGION_SHIFT), 1u << REGION_SHIFT);
		atomic_fetch_or_explicit(&fib->tbl24_populated[r >> 6], bit, memory_order_relaxed);
	}
	if (len <= 24)
		return;
	uint32_t want = atomic_load_explicit(&fib->groups_hw, memory_order_relaxed) + GROUPS_AHEAD;
	want = want < fib->n_tbl8 ? want : fib->n_tbl8;
	uint32_t done = atomic_load_explicit(&fib->groups_populated, memory_order_relaxed);
	if (done >= want ||
	    !atomic_compare_exchange_strong_explicit(&fib->groups_populated, &done, want, memory_order_relaxed,
						     memory_order_relaxed))
		return; /* populated, or another thread is on it */
	size_t b0 = (size_t)done * IP4_FIB_GROUP_BYTES, b1 = (size_t)want * IP4_FIB_GROUP_BYTES;
	b0 &= ~(size_t)4095;
	populate((uint8_t *)fib->tbl8 + b0, b1 - b0);
}

/* ---- walk (stats: ip4_fib_mem.c) ---- */

static int route_cmp(const void *a, const void *b)
{
	const struct ip4_route *x = a, *y = b;
	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
	return (int)x->len - (int)y->len;
}

int ip4_fib_walk(const struct ip4_fib *fib, int (*fn)(const struct ip4_route *r, void *ctx),
		 void *ctx)
{
	if (!fib->n_routes)
		return 0;
	struct ip4_route *v = malloc((size_t)fib->n_routes * sizeof(*v));
	if (!v)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t l = 0; l <= 32; l++) {
		uint32_t pos = 0;
		for (const struct rule_slot *s; (s = rule_next(&fib->rules[l], &pos));)
			v[n++] = (struct ip4_route){ s->key, (uint8_t)l, s->val };
	}
	qsort(v, n, sizeof(*v), route_cmp);
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = fn(&v[i], ctx);
	free(v);
	return rc;
}

uint32_t ip4_fib_routes_of_len(const struct ip4_fib *fib, uint8_t len, struct ip4_route *out, uint32_t max)
{
	if (len > 32)
		return 0;
	const struct rule_table *rt = &fib->rules[len];
	uint32_t pos = 0, n = 0;
	for (const struct rule_slot *s; n < max && (s = rule_next(rt, &pos));)
		out[n++] = (struct ip4_route){ s->key, len, s->val };
	return max ? n : rt->n;
}
