/* The IPv6 FIB's trie: add, delete, flush and the bulk lookup. See
 * ip6_fib.h for the contract, docs/architecture.md for the choice.
 *
 * Levels: level 0 is tbl24 (entries for /24 slots); a group at level L
 * (1..13) holds the 256 slots of length 24 + 8L under one slot of level
 * L - 1, its "parent slot", of length base = 24 + 8(L - 1).
 *
 * Depths (control side, never read by lookups): a leaf's is the length of
 * the route it holds (0 with IP6_FIB_MISS when none); an EXT entry's is the
 * length of the longest route of length <= its slot's covering it, which is
 * what the group below holds in each of its entries that no longer route
 * overrides ("inherited" entries).
 *
 * Invariant: every leaf holds the longest route covering its addresses. In
 * a group, an entry holds a route longer than base or the inherited one, so
 * the group is uniform exactly when n_long (its EXT entries and leaves
 * deeper than base) is zero; it then folds into its parent slot.
 *
 * Add P/d: down the path of P to the level whose slots are >= d long
 * (creating groups as needed, each filled with its parent's leaf before the
 * release store that links it), then over P's slots there: every leaf of
 * depth <= d becomes d's; every EXT entry of depth <= d takes depth d and
 * the same rule applies to the whole group under it (its entries of depth
 * <= d are exactly its inherited ones). Delete P/d: the same walk with
 * "depth == d" and the longest remaining route shorter than d covering P
 * (the same for all of P: any shorter prefix covering one address of P
 * covers all of it), then the groups on P's path fold, deepest first, while
 * they are uniform.
 */
#include "nodes/ip6/ip6_fib_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#define NO_GROUP UINT32_MAX

/* What an update writes and over which entries. */
struct update {
	uint32_t ne; /* new leaf (result) */
	uint8_t nd;  /* its depth */
	uint8_t d;   /* the route's length: add owns depth <= d, delete == d */
	bool del;
	unsigned own_lo, own_span; /* owned depths: [own_lo, own_lo + own_span] */
};

/* Entries the datapath may be reading: one aligned 32-bit store each. */
static inline void e_store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline uint32_t *group_entries(struct ip6_fib *fib, uint32_t g)
{
	return &fib->groups[(size_t)g << 8];
}

static inline const uint32_t *group_entries_c(const struct ip6_fib *fib, uint32_t g)
{
	return &fib->groups[(size_t)g << 8];
}

static inline uint8_t *group_depths(struct ip6_fib *fib, uint32_t g)
{
	return &fib->depth_groups[(size_t)g << 8];
}

/* ---- groups ---- */

/* A free group (the caller checked there is one) for level, every entry
 * leaf e of depth dd: what its parent slot held. */
static uint32_t group_new(struct ip6_fib *fib, uint32_t e, uint8_t dd, unsigned level)
{
	uint32_t g = fib->free_groups[--fib->n_free];
	fib->level[g] = (uint8_t)level;
	fib->n_by_level[level]++;
	uint32_t *ent = group_entries(fib, g);
	/* Two loops, not one: each vectorises (a group is 20 cold lines). */
	for (uint32_t k = 0; k < IP6_FIB_GROUP_ENTRIES; k++)
		ent[k] = e;
	memset(group_depths(fib, g), dd, IP6_FIB_GROUP_ENTRIES);
	fib->n_long[g] = 0;
	return g;
}

static void group_retire(struct ip6_fib *fib, uint32_t g)
{
	fib->n_by_level[fib->level[g]]--;
	fib->pending_groups[fib->n_pending++] = g;
}

void ip6_fib_quiesce(struct ip6_fib *fib)
{
	while (fib->n_pending)
		fib->free_groups[fib->n_free++] = fib->pending_groups[--fib->n_pending];
}

/* Groups an add of key/d must create: the levels below the first leaf on
 * its path, down to the one whose slots are >= d long. */
static uint32_t groups_needed(const struct ip6_fib *fib, struct ip6_key key, unsigned d)
{
	if (d <= 24)
		return 0;
	unsigned levels = (d - 24 + 7) / 8, l = 0;
	uint32_t e = fib->tbl24[key.hi >> 40];
	while (l < levels && (e & IP6_FIB_E_EXT)) {
		l++;
		e = group_entries_c(fib, ip6_fib_e_group(e))[ip6_key_byte(key, 2 + l)];
	}
	return levels - l;
}

/* ---- updates ---- */

/* Whether u owns an entry of depth od: one compare for both kinds (an
 * add's window is [0, d], a delete's [d, d]). */
static inline bool owns(const struct update *u, unsigned od)
{
	return od - u->own_lo <= u->own_span;
}

/* Apply u to every entry it owns in group g: the whole group under an
 * owned EXT entry. Its base is >= d, so
 * none of its leaves changes from or to "long" (its n_long stays) and no
 * entry needs more than its depth, its store and, when EXT, the same
 * below. Deletes in table order spend most of their time here (a /32's
 * delete rewrites every group under it). */
static void group_update(struct ip6_fib *fib, uint32_t g, const struct update *u)
{
	uint32_t *ent = group_entries(fib, g);
	uint8_t *dep = group_depths(fib, g);
	const uint8_t nd = u->nd;
	const uint32_t ne = u->ne;
	for (uint32_t k = 0; k < IP6_FIB_GROUP_ENTRIES; k++) {
		if (!owns(u, dep[k]))
			continue;
		dep[k] = nd;
		uint32_t e = ent[k];
		if (e & IP6_FIB_E_EXT)
			group_update(fib, ip6_fib_e_group(e), u);
		else
			e_store(&ent[k], ne);
	}
}

/* Apply u to entries [lo, lo + n) of one table: tbl24 (g NO_GROUP) or
 * group g, whose slots are slot_len long; the groups under owned EXT
 * entries whole (group_update). */
static void range_update(struct ip6_fib *fib, uint32_t *ent, uint8_t *dep, uint32_t lo,
			 uint32_t n, uint32_t g, unsigned slot_len, const struct update *u)
{
	unsigned base = slot_len - 8;
	for (uint32_t k = lo; k < lo + n; k++) {
		unsigned od = dep[k];
		if (!owns(u, od))
			continue;
		uint32_t e = ent[k];
		dep[k] = u->nd;
		if (e & IP6_FIB_E_EXT) {
			group_update(fib, ip6_fib_e_group(e), u);
			continue;
		}
		if (g != NO_GROUP)
			fib->n_long[g] += (uint16_t)((u->nd > base) - (od > base));
		e_store(&ent[k], u->ne);
	}
}

/* One step of a path: group g at its level, reached from slot of the
 * parent table (ent/dep), which is group pg (NO_GROUP: tbl24). */
struct path_step {
	uint32_t g, pg, slot;
	uint32_t *ent;
	uint8_t *dep;
};

/* Fold the groups of path[1..l], deepest first, while uniform: the parent
 * slot takes the group's one leaf (its depth, the inherited one, is already
 * there), the group waits for ip6_fib_quiesce. */
static void fold_up(struct ip6_fib *fib, const struct path_step *path, unsigned l)
{
	for (; l >= 1; l--) {
		const struct path_step *p = &path[l];
		if (fib->n_long[p->g])
			return;
		e_store(&p->ent[p->slot], group_entries(fib, p->g)[0]);
		group_retire(fib, p->g);
		/* The parent slot is a leaf now: long only if deeper than its
		 * own group's base (24 + 8(l - 2)). */
		if (p->pg != NO_GROUP && p->dep[p->slot] <= 24 + 8 * (l - 2))
			fib->n_long[p->pg]--;
	}
}

/* The longest route of length in [lo, len) covering key: true with *res
 * and *depth, or false. One probe per length in use in the interval. */
static bool covering(const struct ip6_fib *fib, struct ip6_key key, unsigned len, unsigned lo,
		     uint32_t *res, uint8_t *depth)
{
	for (int w = (int)(len >> 6); w >= (int)(lo >> 6); w--) {
		uint64_t bits = fib->len_used[w];
		if ((unsigned)w == len >> 6)
			bits &= (1ull << (len & 63)) - 1;
		if ((unsigned)w == lo >> 6)
			bits &= ~0ull << (lo & 63);
		while (bits) {
			unsigned l = 64 * (unsigned)w + 63 - (unsigned)__builtin_clzll(bits);
			const struct ip6_rule_slot *s = ip6_rule_find(&fib->rules[l], ip6_key_mask(key, l));
			if (s) {
				*res = s->val;
				*depth = (uint8_t)l;
				return true;
			}
			bits &= ~(1ull << (l & 63));
		}
	}
	return false;
}

/* What a delete of key/d falls back to, into u: the longest remaining
 * route shorter than d covering key, else IP6_FIB_MISS. In a group (base
 * >= 0) only lengths in (base, d) need a probe: a shorter covering route
 * is the group's inherited one, whose length the parent slot's depth pd
 * gives; so a /48's delete probes at most 8 lengths, not every one in use
 * below 48. */
static void fallback(const struct ip6_fib *fib, struct ip6_key key, unsigned d, int base,
		     unsigned pd, struct update *u)
{
	if (base < 0 ? covering(fib, key, d, 0, &u->ne, &u->nd)
		     : covering(fib, key, d, (unsigned)base + 1, &u->ne, &u->nd) ||
			       covering(fib, key, pd + 1, pd, &u->ne, &u->nd))
		return;
	u->ne = IP6_FIB_MISS;
	u->nd = 0;
}

/* Apply u for route key/d to the trie. Cannot fail: an add that needs
 * groups has checked they are free; a delete never needs one. */
static void tables_update(struct ip6_fib *fib, struct ip6_key key, unsigned d,
			  struct update *u)
{
	uint32_t slot = (uint32_t)(key.hi >> 40);
	if (d <= 24) {
		if (u->del)
			fallback(fib, key, d, -1, 0, u);
		range_update(fib, fib->tbl24, fib->depth24, slot, 1u << (24 - d), NO_GROUP, 24, u);
		return;
	}
	struct path_step path[IP6_FIB_LEVELS];
	uint32_t *ent = fib->tbl24, g = NO_GROUP;
	uint8_t *dep = fib->depth24;
	unsigned l = 0;
	for (unsigned slot_len = 32;; slot_len += 8) {
		l++;
		uint32_t e = ent[slot], c;
		if (e & IP6_FIB_E_EXT) {
			c = ip6_fib_e_group(e);
		} else {
			/* Only an add gets here (a route deeper than this slot lives in a
			 * group under it). The slot turns EXT: long in its group. */
			if (u->del)
				return;
			c = group_new(fib, e, dep[slot], l);
			if (g != NO_GROUP && dep[slot] <= slot_len - 16)
				fib->n_long[g]++;
			__atomic_store_n(&ent[slot], ip6_fib_e_ext(c), __ATOMIC_RELEASE);
		}
		path[l] = (struct path_step){ c, g, slot, ent, dep };
		g = c;
		ent = group_entries(fib, c);
		dep = group_depths(fib, c);
		uint32_t b = ip6_key_byte(key, 2 + l);
		if (d <= slot_len) {
			if (u->del)
				fallback(fib, key, d, (int)slot_len - 8, path[l].dep[path[l].slot], u);
			range_update(fib, ent, dep, b, 1u << (slot_len - d), g, slot_len, u);
			break;
		}
		slot = b;
	}
	if (u->del)
		fold_up(fib, path, l);
}

int ip6_fib_add(struct ip6_fib *fib, const ip6_addr_a2 *prefix, uint8_t len, uint32_t result)
{
	if (len > 128 || result >= IP6_FIB_RESULT_LIMIT)
		return -EINVAL;
	struct ip6_key key = ip6_key_mask(ip6_key_of(prefix), len);
	struct ip6_rule_table *rt = &fib->rules[len];
	struct ip6_rule_slot *s = ip6_rule_find(rt, key);
	if (s) {
		s->val = result;
	} else {
		if (fib->max_routes && fib->n_routes >= fib->max_routes)
			return -ENOSPC;
		if (groups_needed(fib, key, len) > fib->n_free)
			return -ENOSPC;
		int rc = ip6_rule_insert(rt, key, result);
		if (rc)
			return rc;
		fib->n_routes++;
		fib->len_used[len >> 6] |= 1ull << (len & 63);
	}
	struct update u = { .ne = result, .nd = len, .d = len, .del = false, .own_lo = 0, .own_span = len };
	tables_update(fib, key, len, &u);
	return 0;
}

int ip6_fib_del(struct ip6_fib *fib, const ip6_addr_a2 *prefix, uint8_t len)
{
	if (len > 128)
		return -EINVAL;
	struct ip6_key key = ip6_key_mask(ip6_key_of(prefix), len);
	struct ip6_rule_table *rt = &fib->rules[len];
	struct ip6_rule_slot *s = ip6_rule_find(rt, key);
	if (!s)
		return -ENOENT;
	ip6_rule_remove(rt, s);
	fib->n_routes--;
	if (rt->n == 0)
		fib->len_used[len >> 6] &= ~(1ull << (len & 63));
	struct update u = { .d = len, .del = true, .own_lo = len, .own_span = 0 };
	tables_update(fib, key, len, &u);
	return 0;
}

static void subtree_retire(struct ip6_fib *fib, uint32_t g)
{
	const uint32_t *ent = group_entries(fib, g);
	for (uint32_t k = 0; k < IP6_FIB_GROUP_ENTRIES; k++)
		if (ent[k] & IP6_FIB_E_EXT)
			subtree_retire(fib, ip6_fib_e_group(ent[k]));
	group_retire(fib, g);
}

void ip6_fib_flush(struct ip6_fib *fib)
{
	for (uint32_t i = 0; i < IP6_FIB_TBL24_ENTRIES; i++) {
		uint32_t e = fib->tbl24[i];
		if (!e && !fib->depth24[i])
			continue;
		e_store(&fib->tbl24[i], IP6_FIB_MISS);
		fib->depth24[i] = 0;
		if (e & IP6_FIB_E_EXT)
			subtree_retire(fib, ip6_fib_e_group(e));
	}
	ip6_rules_free(fib);
}

/* ---- bulk lookup ---- */

/* Per chunk, stride by stride: prefetch every pending address's next entry,
 * then load them. Prefetches retire at once, so a chunk's misses at one
 * stride all overlap (as ip4_fib_lookup_bulk does for its one stride). */
#define BULK_CHUNK 32

void ip6_fib_lookup_bulk(const struct ip6_fib *fib, const ip6_addr_a2 *addrs, uint32_t *out,
			 uint32_t n)
{
	const struct ip6_fib_tables *t = ip6_fib_tables(fib);
	const uint32_t *tbl24 = t->tbl24;
	const uintptr_t gx = t->groups_ext;
	while (n) {
		uint32_t c = n < BULK_CHUNK ? n : BULK_CHUNK;
		uint8_t pend[BULK_CHUNK];
		uint32_t np = 0;
		for (uint32_t i = 0; i < c; i++)
			__builtin_prefetch(&tbl24[ip6_fib_index24(&addrs[i])]);
		for (uint32_t i = 0; i < c; i++) {
			uint32_t e = __atomic_load_n(&tbl24[ip6_fib_index24(&addrs[i])], __ATOMIC_ACQUIRE);
			out[i] = e;
			if (e & IP6_FIB_E_EXT)
				pend[np++] = (uint8_t)i;
		}
		for (unsigned b = 3; np; b++) {
			for (uint32_t k = 0; k < np; k++) {
				uint32_t i = pend[k];
				__builtin_prefetch((const void *)(gx + ((uintptr_t)(out[i] | addrs[i].s6_addr[b]) << 2)));
			}
			uint32_t m = 0;
			for (uint32_t k = 0; k < np; k++) {
				uint32_t i = pend[k];
				uint32_t e = ip6_fib_step(gx, out[i], addrs[i].s6_addr[b]);
				out[i] = e;
				if (e & IP6_FIB_E_EXT)
					pend[m++] = (uint8_t)i;
			}
			np = m;
		}
		addrs += c;
		out += c;
		n -= c;
	}
}
