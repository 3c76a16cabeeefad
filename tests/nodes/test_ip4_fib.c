/* The IPv4 FIB (nodes/ip4/ip4_fib*.c): overlapping prefixes on add and delete,
 * /0 and /32, tbl8 groups folded back and reused only after quiesce, memory
 * returned, the adjacency table, and LPM against a reference (one hash table
 * per prefix length, searched longest first) over 100,000 random routes with
 * deletes interleaved and 1,000,000 random lookups, scalar, x4 and bulk.
 * A reader thread checks that updates never show it a torn or foreign
 * result. The memory modes: 4 KB pages without THP and 2 MB hugetlb (or a
 * refusal) as /proc/self/smaps shows them, same lookups as the default mode.
 * Sanitizer builds (TEST_SANITIZED) run a tenth of the random load. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ip4/smaps.h"
#include "nodes/ip4/ip4_fib.h"
#include "tests/check_run.h"

#ifdef TEST_SANITIZED
#define SCALE 10
#else
#define SCALE 1
#endif
#define N_ROUTES (100000 / SCALE)
#define N_LOOKUPS (1000000 / SCALE)

#define IP(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (d))

static char err[256];

static struct ip4_fib *make(uint32_t n_tbl8, uint32_t max_routes)
{
	struct ip4_fib_config c;
	ip4_fib_config_default(&c);
	if (n_tbl8)
		c.n_tbl8 = n_tbl8;
	c.max_routes = max_routes;
	struct ip4_fib *fib = ip4_fib_create(&c, err, sizeof(err));
	ck_assert_msg(fib, "%s", err);
	return fib;
}

static bool is_ext(const struct ip4_fib *fib, uint32_t addr)
{
	return ip4_fib_tables(fib)->tbl24[addr >> 8] & IP4_FIB_E_EXT;
}

/* ---- hand-made cases ---- */

START_TEST(test_empty_and_default)
{
	struct ip4_fib *fib = make(0, 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(1, 2, 3, 4)), IP4_FIB_MISS);
	ck_assert_uint_eq(IP4_FIB_MISS, IP4_ADJ_INDEX_DROP);
	ck_assert_int_eq(ip4_fib_add(fib, 0, 0, 7), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, 0), 7);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(255, 255, 255, 255)), 7);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(128, 0, 0, 1)), 7);
	/* /32 at both ends of the space, on top of /0 */
	ck_assert_int_eq(ip4_fib_add(fib, IP(255, 255, 255, 255), 32, 9), 0);
	ck_assert_int_eq(ip4_fib_add(fib, 0, 32, 8), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, 0), 8);
	ck_assert_uint_eq(ip4_fib_lookup(fib, 1), 7);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(255, 255, 255, 255)), 9);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(255, 255, 255, 254)), 7);
	/* deleting /0 leaves the /32s, the rest misses */
	ck_assert_int_eq(ip4_fib_del(fib, 0, 0), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, 1), IP4_FIB_MISS);
	ck_assert_uint_eq(ip4_fib_lookup(fib, 0), 8);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(255, 255, 255, 255)), 9);
	/* re-adding /0 fills only the entries not covered by a longer route */
	ck_assert_int_eq(ip4_fib_add(fib, IP(9, 9, 9, 9), 0, 3), 0); /* host bits ignored */
	ck_assert_uint_eq(ip4_fib_lookup(fib, 1), 3);
	ck_assert_uint_eq(ip4_fib_lookup(fib, 0), 8);
	uint32_t r;
	ck_assert_int_eq(ip4_fib_get(fib, 0, 0, &r), 0);
	ck_assert_uint_eq(r, 3);
	ip4_fib_destroy(fib);
}
END_TEST

START_TEST(test_overlap_add_delete)
{
	struct ip4_fib *fib = make(0, 0);
	/* added longest first, so each shorter add must go around the longer */
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 1, 2, 129), 32, 5), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 1, 2, 128), 25, 4), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 1, 2, 0), 24, 3), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 1, 0, 0), 16, 2), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 0, 0), 8, 1), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 129)), 5);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 130)), 4);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 1)), 3);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 3, 1)), 2);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 2, 0, 1)), 1);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(11, 0, 0, 1)), IP4_FIB_MISS);

	/* deleting the /24 restores the /16 under it, keeps the longer ones */
	ck_assert_int_eq(ip4_fib_del(fib, IP(10, 1, 2, 0), 24), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 1)), 2);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 130)), 4);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 129)), 5);
	/* deleting the /25 falls back past the deleted /24 to the /16 */
	ck_assert_int_eq(ip4_fib_del(fib, IP(10, 1, 2, 128), 25), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 130)), 2);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 129)), 5);
	/* the /16 goes: its range and the /32's group fall to the /8 */
	ck_assert_int_eq(ip4_fib_del(fib, IP(10, 1, 0, 0), 16), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 130)), 1);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 200, 1)), 1);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 129)), 5);
	/* replace in place */
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 0, 0), 8, 11), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 130)), 11);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 129)), 5);
	struct ip4_fib_stats s;
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_routes, 2);
	ck_assert_uint_eq(s.n_routes_by_len[8], 1);
	ck_assert_uint_eq(s.n_routes_by_len[32], 1);
	/* the last long route goes: the group folds back */
	ck_assert(is_ext(fib, IP(10, 1, 2, 0)));
	ck_assert_int_eq(ip4_fib_del(fib, IP(10, 1, 2, 129), 32), 0);
	ck_assert(!is_ext(fib, IP(10, 1, 2, 0)));
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 129)), 11);
	ck_assert_int_eq(ip4_fib_del(fib, IP(10, 0, 0, 0), 8), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 1, 2, 129)), IP4_FIB_MISS);
	ck_assert_int_eq(ip4_fib_del(fib, IP(10, 0, 0, 0), 8), -ENOENT);
	ip4_fib_destroy(fib);
}
END_TEST

START_TEST(test_errors)
{
	struct ip4_fib *fib = make(0, 3);
	ck_assert_int_eq(ip4_fib_add(fib, 0, 33, 1), -EINVAL);
	ck_assert_int_eq(ip4_fib_add(fib, 0, 8, IP4_FIB_RESULT_LIMIT), -EINVAL);
	ck_assert_int_eq(ip4_fib_del(fib, 0, 33), -EINVAL);
	ck_assert_int_eq(ip4_fib_get(fib, 0, 33, NULL), -EINVAL);
	ck_assert_int_eq(ip4_fib_get(fib, 0, 8, NULL), -ENOENT);
	ck_assert_int_eq(ip4_fib_add(fib, IP(1, 0, 0, 0), 8, IP4_FIB_RESULT_LIMIT - 1), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(1, 2, 3, 4)), IP4_FIB_RESULT_LIMIT - 1);
	ck_assert_int_eq(ip4_fib_add(fib, IP(2, 0, 0, 0), 8, 1), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(3, 0, 0, 0), 8, 1), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(4, 0, 0, 0), 8, 1), -ENOSPC);
	ck_assert_int_eq(ip4_fib_add(fib, IP(3, 0, 0, 0), 8, 2), 0); /* a replace is no new route */
	ip4_fib_destroy(fib);

	struct ip4_fib_config c;
	ip4_fib_config_default(&c);
	c.n_tbl8 = 0;
	ck_assert_ptr_null(ip4_fib_create(&c, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "n_tbl8"));
	ip4_fib_config_default(&c);
	c.max_adj = 0;
	ck_assert_ptr_null(ip4_fib_create(&c, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "max_adj"));
}
END_TEST

/* Groups: folded when uniform, reused only after ip4_fib_quiesce, and the
 * retired group's entries stay as a late reader last saw them. */
START_TEST(test_tbl8_recycling)
{
	struct ip4_fib *fib = make(2, 0);
	const uint32_t *tbl8 = ip4_fib_tables(fib)->tbl8;
	struct ip4_fib_stats s;
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 0, 0), 16, 1), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 1, 0), 25, 2), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 1, 192), 26, 3), 0); /* same group */
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_tbl8_used, 1);
	uint32_t g = ip4_fib_tables(fib)->tbl24[IP(10, 0, 1, 0) >> 8] & IP4_FIB_E_VALUE_MASK;

	ck_assert_int_eq(ip4_fib_del(fib, IP(10, 0, 1, 0), 25), 0);
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_tbl8_used, 1); /* the /26 keeps it */
	ck_assert_int_eq(ip4_fib_del(fib, IP(10, 0, 1, 192), 26), 0);
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_tbl8_used, 0);
	ck_assert_uint_eq(s.n_tbl8_pending, 1);
	ck_assert(!is_ext(fib, IP(10, 0, 1, 0)));
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 0, 1, 200)), 1);

	/* two groups: one pending, one free; the third /24 must wait */
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 2, 0), 25, 4), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 3, 0), 32, 5), -ENOSPC);
	ck_assert_int_eq(ip4_fib_get(fib, IP(10, 0, 3, 0), 32, NULL), -ENOENT);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 0, 3, 0)), 1);
	/* the retired group still holds what a late reader may find: the /16 */
	uint32_t e16 = ip4_fib_tables(fib)->tbl24[IP(10, 0, 1, 0) >> 8];
	ck_assert_uint_eq(e16 & IP4_FIB_E_VALUE_MASK, 1);
	for (uint32_t k = 0; k < 256; k++)
		ck_assert_uint_eq(tbl8[(g << 8) + k], e16);
	ip4_fib_quiesce(fib);
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_tbl8_pending, 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 3, 0), 32, 5), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 0, 3, 0)), 5);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 0, 3, 1)), 1);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 0, 2, 1)), 4);
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_tbl8_used, 2);
	/* a longer route in a /24 that already has a group needs none */
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 3, 7), 32, 6), 0);
	/* a short add over groups changes their covering entries only */
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 0, 0), 22, 9), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 0, 3, 1)), 9);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 0, 3, 7)), 6);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 0, 2, 1)), 4);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 0, 2, 200)), 9);
	ck_assert_int_eq(ip4_fib_del(fib, IP(10, 0, 0, 0), 22), 0);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 0, 2, 200)), 1);

	/* flush retires every group and clears every route */
	ip4_fib_flush(fib);
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_routes, 0);
	ck_assert_uint_eq(s.n_tbl8_used, 0);
	ck_assert_uint_eq(s.n_tbl8_pending, 2);
	ck_assert_uint_eq(ip4_fib_lookup(fib, IP(10, 0, 3, 0)), IP4_FIB_MISS);
	ip4_fib_quiesce(fib);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 3, 0), 32, 5), 0);
	ip4_fib_destroy(fib);
}
END_TEST

struct walk_ctx {
	struct ip4_route r[8];
	int n;
};

static int walk_fn(const struct ip4_route *r, void *ctx)
{
	struct walk_ctx *w = ctx;
	w->r[w->n++] = *r;
	return w->n == 4 ? 42 : 0;
}

START_TEST(test_walk_get_stats)
{
	struct ip4_fib *fib = make(0, 0);
	struct ip4_fib_stats s0, s;
	ip4_fib_stats(fib, &s0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(192, 168, 1, 0), 24, 3), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 0, 0), 8, 1), 0);
	ck_assert_int_eq(ip4_fib_add(fib, 0, 0, 9), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 0, 0), 16, 2), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(192, 168, 1, 5), 32, 4), 0);
	struct walk_ctx w = { .n = 0 };
	ck_assert_int_eq(ip4_fib_walk(fib, walk_fn, &w), 42);
	ck_assert_int_eq(w.n, 4);
	ck_assert_uint_eq(w.r[0].prefix, 0);
	ck_assert_uint_eq(w.r[0].len, 0);
	ck_assert_uint_eq(w.r[0].result, 9);
	ck_assert_uint_eq(w.r[1].prefix, IP(10, 0, 0, 0));
	ck_assert_uint_eq(w.r[1].len, 8);
	ck_assert_uint_eq(w.r[2].len, 16);
	ck_assert_uint_eq(w.r[3].prefix, IP(192, 168, 1, 0));
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_routes, 5);
	ck_assert_uint_eq(s.n_tbl8_used, 1);
	ck_assert_uint_gt(s.mem_bytes, s0.mem_bytes);
	ck_assert_uint_ge(s0.mem_bytes, 64u << 20);
	uint32_t r = 0;
	ck_assert_int_eq(ip4_fib_get(fib, IP(10, 0, 255, 255), 16, &r), 0);
	ck_assert_uint_eq(r, 2);
	ck_assert_int_eq(ip4_fib_get(fib, IP(10, 0, 0, 0), 24, &r), -ENOENT);
	ip4_fib_destroy(fib);
}
END_TEST

START_TEST(test_adjacencies)
{
	struct ip4_fib_config c;
	ip4_fib_config_default(&c);
	c.max_adj = 4;
	struct ip4_fib *fib = ip4_fib_create(&c, err, sizeof(err));
	ck_assert_msg(fib, "%s", err);
	const struct ip4_adj *d = ip4_adj_get(fib, IP4_ADJ_INDEX_DROP);
	ck_assert_uint_eq(d->kind, IP4_ADJ_DROP);
	ck_assert_int_eq(ip4_adj_add(fib, IP4_ADJ_DROP, 0, 0), IP4_ADJ_INDEX_DROP);
	int local = ip4_adj_add(fib, IP4_ADJ_LOCAL, 0, 0);
	int glean = ip4_adj_add(fib, IP4_ADJ_GLEAN, 1, 0);
	int nh = ip4_adj_add(fib, IP4_ADJ_REWRITE, 1, IP(10, 1, 0, 2));
	ck_assert_int_eq(local, 1);
	ck_assert_int_eq(glean, 2);
	ck_assert_int_eq(nh, 3);
	ck_assert_int_eq(ip4_adj_add(fib, IP4_ADJ_REWRITE, 1, IP(10, 1, 0, 2)), nh);
	ck_assert_uint_eq(ip4_adj_get(fib, nh)->n_refs, 2);
	ck_assert_int_eq(ip4_adj_add(fib, IP4_ADJ_REWRITE, 2, IP(10, 1, 0, 2)), -ENOSPC);
	ck_assert_int_eq(ip4_adj_add(fib, (enum ip4_adj_kind)9, 0, 0), -EINVAL);
	const struct ip4_adj *a = ip4_adj_get(fib, nh);
	ck_assert_uint_eq(a->kind, IP4_ADJ_REWRITE);
	ck_assert_uint_eq(a->if_index, 1);
	ck_assert_uint_eq(a->next_hop, IP(10, 1, 0, 2));
	ck_assert_uint_eq(a->rewrite_len, 0);
	const uint8_t eth[14] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00 };
	ck_assert_int_eq(ip4_adj_set_rewrite(fib, nh, eth, sizeof(eth)), 0);
	ck_assert_uint_eq(a->rewrite_len, 14);
	ck_assert_mem_eq(a->rewrite, eth, 14);
	ck_assert_int_eq(ip4_adj_set_rewrite(fib, nh, eth, 17), -EINVAL);
	ck_assert_int_eq(ip4_adj_set_rewrite(fib, IP4_ADJ_INDEX_DROP, eth, 14), -EINVAL);

	/* routes carry adjacency indices straight through */
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 2, 0, 0), 16, (uint32_t)nh), 0);
	ck_assert_uint_eq(ip4_adj_get(fib, ip4_fib_lookup(fib, IP(10, 2, 3, 4)))->next_hop,
			  IP(10, 1, 0, 2));
	ck_assert_uint_eq(ip4_adj_get(fib, ip4_fib_lookup(fib, IP(10, 3, 3, 4)))->kind,
			  IP4_ADJ_DROP);

	struct ip4_fib_stats s;
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_adj, 4);
	ck_assert_int_eq(ip4_adj_release(fib, nh), 0);
	ck_assert_int_eq(ip4_adj_release(fib, nh), 0);
	ck_assert_int_eq(ip4_adj_release(fib, nh), -EINVAL);
	ck_assert_int_eq(ip4_adj_release(fib, 99), -EINVAL);
	ck_assert_int_eq(ip4_adj_release(fib, IP4_ADJ_INDEX_DROP), 0);
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_adj, 3);
	ck_assert_int_eq(ip4_adj_add(fib, IP4_ADJ_REWRITE, 2, IP(10, 1, 0, 3)), nh); /* reused */
	ck_assert_uint_eq(ip4_adj_get(fib, nh)->rewrite_len, 0);
	ip4_fib_destroy(fib);
}
END_TEST

/* ---- the reference: one hash table per prefix length ---- */

#define REF_BITS 17
#define REF_CAP (1u << REF_BITS)

struct ref_table {
	uint32_t key[REF_CAP];
	uint32_t val[REF_CAP];
	uint8_t state[REF_CAP]; /* 0 empty, 1 full, 2 deleted */
	uint32_t n;
};

static struct ref_table *ref[33];

static uint32_t ref_mask(int len)
{
	return len ? ~0u << (32 - len) : 0;
}

static uint32_t ref_slot(uint32_t key)
{
	return (key * 2654435761u) >> (32 - REF_BITS);
}

static int ref_find(int len, uint32_t key)
{
	struct ref_table *t = ref[len];
	for (uint32_t i = ref_slot(key), k = 0; k < REF_CAP; i = (i + 1) & (REF_CAP - 1), k++) {
		if (t->state[i] == 0)
			return -1;
		if (t->state[i] == 1 && t->key[i] == key)
			return (int)i;
	}
	return -1;
}

static void ref_add(int len, uint32_t key, uint32_t val)
{
	int i = ref_find(len, key);
	if (i >= 0) {
		ref[len]->val[i] = val;
		return;
	}
	struct ref_table *t = ref[len];
	ck_assert_uint_lt(t->n, REF_CAP / 2);
	uint32_t s = ref_slot(key);
	while (t->state[s] == 1)
		s = (s + 1) & (REF_CAP - 1);
	t->key[s] = key;
	t->val[s] = val;
	t->state[s] = 1;
	t->n++;
}

static uint32_t ref_lookup(uint32_t addr)
{
	for (int len = 32; len >= 0; len--) {
		if (!ref[len]->n)
			continue;
		int i = ref_find(len, addr & ref_mask(len));
		if (i >= 0)
			return ref[len]->val[i];
	}
	return IP4_FIB_MISS;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* Routes crowd into a few /8s so that they nest, with lengths weighted like a
 * routing table (many /16../24, some longer, a few short and the odd /0). */
static const uint8_t hot8[] = { 10, 100, 172, 192 };

static void random_route(uint32_t *prefix, uint8_t *len)
{
	uint32_t r = rnd() % 100;
	uint8_t l;
	if (r < 1)
		l = (uint8_t)(rnd() % 8); /* /0../7 */
	else if (r < 10)
		l = (uint8_t)(8 + rnd() % 8);
	else if (r < 70)
		l = (uint8_t)(16 + rnd() % 9);
	else
		l = (uint8_t)(25 + rnd() % 8);
	uint32_t a = rnd();
	if (rnd() % 8) /* mostly in the hot /8s, with only 64 /16s used in each */
		a = ((uint32_t)hot8[rnd() % 4] << 24) | ((rnd() % 64) << 16) | (a & 0xffff);
	*prefix = a & ref_mask(l);
	*len = l;
}

static uint32_t random_addr(const uint32_t *prefixes, uint32_t n)
{
	uint32_t k = rnd() % 4;
	if (k == 0 || n == 0)
		return rnd();
	if (k == 1)
		return ((uint32_t)hot8[rnd() % 4] << 24) | (rnd() & 0xffffff);
	/* near a route: its prefix with random low bits */
	return prefixes[rnd() % n] ^ (rnd() & 0x1ff);
}

static void check_lookups(struct ip4_fib *fib, const uint32_t *prefixes, uint32_t n_prefixes,
			  uint32_t n)
{
	for (uint32_t i = 0; i < n; i += 4) {
		uint32_t a[4], x4[4];
		for (int k = 0; k < 4; k++)
			a[k] = random_addr(prefixes, n_prefixes);
		ip4_fib_lookup_x4(fib, a, x4);
		for (int k = 0; k < 4; k++) {
			uint32_t want = ref_lookup(a[k]);
			uint32_t got = ip4_fib_lookup(fib, a[k]);
			ck_assert_msg(got == want, "lookup %08x: fib %u, reference %u", a[k], got, want);
			ck_assert_msg(x4[k] == got, "x4 %08x: %u, scalar %u", a[k], x4[k], got);
		}
	}
}

START_TEST(test_random_against_reference)
{
	for (int l = 0; l <= 32; l++) {
		ref[l] = calloc(1, sizeof(*ref[l]));
		ck_assert_ptr_nonnull(ref[l]);
	}
	struct ip4_fib *fib = make(1u << 17, 0);
	struct ip4_fib_stats s0, s;
	ip4_fib_stats(fib, &s0);

	/* live routes, for deletes and nearby lookups */
	uint32_t *pfx = malloc(N_ROUTES * sizeof(uint32_t));
	uint8_t *len = malloc(N_ROUTES);
	ck_assert(pfx && len);
	uint32_t n = 0, n_added = 0;

	ck_assert_int_eq(ip4_fib_add(fib, 0, 0, 1), 0); /* /0 and the full /32 */
	ref_add(0, 0, 1);
	pfx[n] = 0, len[n++] = 0;
	while (n_added < N_ROUTES) {
		uint32_t p;
		uint8_t l;
		random_route(&p, &l);
		uint32_t result = 1 + rnd() % (IP4_FIB_RESULT_LIMIT - 1);
		bool fresh = ip4_fib_get(fib, p, l, NULL) == -ENOENT;
		ck_assert_int_eq(ip4_fib_add(fib, p, l, result), 0);
		ref_add(l, p, result);
		n_added++;
		if (fresh)
			pfx[n] = p, len[n++] = l;
		if (n_added % 4 == 0) { /* interleaved delete of a random live route */
			uint32_t k = rnd() % n;
			ck_assert_int_eq(ip4_fib_del(fib, pfx[k], len[k]), 0);
			int i = ref_find(len[k], pfx[k]);
			ck_assert_int_ge(i, 0);
			ref[len[k]]->state[i] = 2;
			ref[len[k]]->n--;
			pfx[k] = pfx[n - 1], len[k] = len[n - 1], n--;
		}
		if (n_added % 4096 == 0) {
			ip4_fib_quiesce(fib);
			check_lookups(fib, pfx, n, 2000);
		}
	}
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_routes, n);
	ck_assert_uint_gt(s.n_tbl8_used, 100);

	check_lookups(fib, pfx, n, N_LOOKUPS);

	/* bulk equals scalar */
	uint32_t addrs[1000], out[1000];
	for (uint32_t i = 0; i < 1000; i++)
		addrs[i] = random_addr(pfx, n);
	ip4_fib_lookup_bulk(fib, addrs, out, 1000);
	for (uint32_t i = 0; i < 1000; i++)
		ck_assert_uint_eq(out[i], ip4_fib_lookup(fib, addrs[i]));

	/* exact-match get agrees with the reference for every live route */
	uint32_t n_seen = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t r;
		ck_assert_int_eq(ip4_fib_get(fib, pfx[k], len[k], &r), 0);
		ck_assert_uint_eq(r, ref[len[k]]->val[ref_find(len[k], pfx[k])]);
		n_seen++;
	}
	ck_assert_uint_eq(n_seen, s.n_routes);

	/* delete everything in random order, checking as it empties */
	while (n) {
		uint32_t k = rnd() % n;
		ck_assert_int_eq(ip4_fib_del(fib, pfx[k], len[k]), 0);
		int i = ref_find(len[k], pfx[k]);
		ref[len[k]]->state[i] = 2;
		ref[len[k]]->n--;
		pfx[k] = pfx[n - 1], len[k] = len[n - 1], n--;
		if (n % 8192 == 0)
			check_lookups(fib, pfx, n, 2000);
	}
	/* memory returned: no route, no group, the route store gone */
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_routes, 0);
	ck_assert_uint_eq(s.n_tbl8_used, 0);
	ip4_fib_quiesce(fib);
	ip4_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_tbl8_pending, 0);
	ck_assert_uint_eq(s.mem_bytes, s0.mem_bytes);
	const uint32_t *tbl24 = ip4_fib_tables(fib)->tbl24;
	for (uint32_t i = 0; i < (1u << 24); i++)
		if (tbl24[i])
			ck_abort_msg("tbl24[%u] = %08x after every delete", i, tbl24[i]);

	free(pfx);
	free(len);
	ip4_fib_destroy(fib);
	for (int l = 0; l <= 32; l++)
		free(ref[l]);
}
END_TEST

/* ---- memory modes ---- */

/* Routes of every length over a few /8s, then the same addresses through
 * fib and the default-mode ref: the mode changes pages, never results. */
static void check_same_as_auto(struct ip4_fib *fib)
{
	struct ip4_fib *ref_fib = make(1u << 12, 0);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 8000; i++) { /* ~2,600 groups */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint32_t p = (uint32_t)(x >> 32) & 0x0fffffffu, r = 1 + (uint32_t)x % 1000;
		uint8_t l = (uint8_t)(8 + x % 25);
		ck_assert_int_eq(ip4_fib_add(fib, p, l, r), 0);
		ck_assert_int_eq(ip4_fib_add(ref_fib, p, l, r), 0);
	}
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint32_t a = (uint32_t)(x >> 32) & 0x0fffffffu;
		ck_assert_uint_eq(ip4_fib_lookup(fib, a), ip4_fib_lookup(ref_fib, a));
	}
	ip4_fib_destroy(ref_fib);
}

/* IP4_FIB_MEM_4K: both tables on 4 KB pages, no THP (AnonHugePages 0 even
 * where THP is "always"), faulted in at create (Rss is the whole table). */
START_TEST(test_mem_4k)
{
	struct ip4_fib_config c;
	ip4_fib_config_default(&c);
	c.mem = IP4_FIB_MEM_4K;
	c.n_tbl8 = 1u << 12;
	struct ip4_fib *fib = ip4_fib_create(&c, err, sizeof(err));
	ck_assert_msg(fib, "%s", err);
	struct ip4_fib_stats s;
	ip4_fib_stats(fib, &s);
	ck_assert_int_eq(s.tbl24_pages, IP4_FIB_PAGES_4K);
	ck_assert_int_eq(s.tbl8_pages, IP4_FIB_PAGES_4K);
	ck_assert(!s.tbl24_hugepages);
	ck_assert_str_eq(ip4_fib_pages_name(s.tbl24_pages), "4 KB");
	const void *tables[2] = { ip4_fib_tables(fib)->tbl24, ip4_fib_tables(fib)->tbl8 };
	const long kb[2] = { 64 << 10, 4 << 10 };
	for (int t = 0; t < 2; t++) {
		struct smaps_kb m = { 0 };
		ck_assert(smaps_of(tables[t], &m));
		ck_assert_int_eq(m.kernel_page, 4);
		ck_assert_int_eq(m.anon_huge, 0);
		ck_assert_int_ge(m.rss, kb[t]);
	}
	check_same_as_auto(fib);
	ip4_fib_destroy(fib);
}
END_TEST

/* IP4_FIB_MEM_HUGETLB: 2 MB hugetlb pages for both, or no FIB at all (with
 * a reason) when the box has too few reserved: never a silent fallback. */
START_TEST(test_mem_hugetlb)
{
	struct ip4_fib_config c;
	ip4_fib_config_default(&c);
	c.mem = IP4_FIB_MEM_HUGETLB;
	c.n_tbl8 = 1u << 12;
	err[0] = 0;
	struct ip4_fib *fib = ip4_fib_create(&c, err, sizeof(err));
	if (!fib) {
		ck_assert_msg(strstr(err, "hugepages"), "%s", err);
		return;
	}
	struct ip4_fib_stats s;
	ip4_fib_stats(fib, &s);
	ck_assert_int_eq(s.tbl24_pages, IP4_FIB_PAGES_HUGETLB);
	ck_assert_int_eq(s.tbl8_pages, IP4_FIB_PAGES_HUGETLB);
	ck_assert(s.tbl24_hugepages);
	struct smaps_kb m = { 0 };
	ck_assert(smaps_of(ip4_fib_tables(fib)->tbl24, &m));
	ck_assert_int_eq(m.kernel_page, 2048);
	check_same_as_auto(fib);
	ip4_fib_destroy(fib);
}
END_TEST

START_TEST(test_mem_bad_mode)
{
	struct ip4_fib_config c;
	ip4_fib_config_default(&c);
	c.mem = (enum ip4_fib_mem)7;
	ck_assert_ptr_null(ip4_fib_create(&c, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "memory mode"));
}
END_TEST

/* ---- bulk lookups across its chunks ---- */

/* ip4_fib_lookup_bulk against known results: n of 0 (out untouched), 1, a
 * whole chunk, and chunks plus a remainder, with tbl8 entries (/25, /32)
 * and misses at every position of a chunk; and each length of the scalar
 * tail after the groups of four (2..7), alone and after a whole chunk
 * (33..35). */
START_TEST(test_bulk_chunks)
{
	struct ip4_fib *fib = make(16, 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 0, 0, 0), 8, 1), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 1, 2, 128), 25, 2), 0);
	ck_assert_int_eq(ip4_fib_add(fib, IP(10, 1, 2, 5), 32, 3), 0);
	const uint32_t addr[5] = { IP(10, 9, 9, 9), IP(10, 1, 2, 200), IP(10, 1, 2, 5), IP(10, 1, 2, 6),
				   IP(11, 0, 0, 1) };
	const uint32_t want[5] = { 1, 2, 3, 1, IP4_FIB_MISS };
	enum { N = 2 * IP4_FIB_BULK_CHUNK + 7 };
	uint32_t a[N], out[N + 1];
	for (uint32_t i = 0; i < N; i++)
		a[i] = addr[i % 5];
	const uint32_t sizes[] = { 0, 1, 2, 3, 4, 5, 7, IP4_FIB_BULK_CHUNK, IP4_FIB_BULK_CHUNK + 1,
				   IP4_FIB_BULK_CHUNK + 3, N };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (uint32_t i = 0; i <= N; i++)
			out[i] = 0xdeadbeef;
		ip4_fib_lookup_bulk(fib, a, out, sizes[k]);
		for (uint32_t i = 0; i < sizes[k]; i++)
			ck_assert_uint_eq(out[i], want[i % 5]);
		ck_assert_uint_eq(out[sizes[k]], 0xdeadbeef); /* nothing past n */
	}
	ip4_fib_destroy(fib);
}
END_TEST

/* ---- a reader during updates ---- */

static struct ip4_fib *rd_fib;
static volatile int rd_stop;
static uint64_t rd_bad, rd_n;

/* Under 10.1.0.0/16 (result 1, always there) the writer toggles /24 (2),
 * /25 (3) and /32 (4) routes; any other result is torn or foreign. */
static void *reader(void *arg)
{
	(void)arg;
	uint32_t a[4] = { IP(10, 1, 2, 129), IP(10, 1, 2, 1), IP(10, 1, 2, 200), IP(10, 1, 9, 9) };
	while (!__atomic_load_n(&rd_stop, __ATOMIC_RELAXED)) {
		uint32_t r[4];
		ip4_fib_lookup_x4(rd_fib, a, r);
		for (int k = 0; k < 4; k++)
			if (r[k] < 1 || r[k] > 4 || (k == 3 && r[k] != 1))
				rd_bad++;
		if (ip4_fib_lookup(rd_fib, a[0]) == 0)
			rd_bad++;
		ip4_fib_lookup_bulk(rd_fib, a, r, 4);
		for (int k = 0; k < 4; k++)
			if (r[k] < 1 || r[k] > 4 || (k == 3 && r[k] != 1))
				rd_bad++;
		rd_n++;
	}
	return NULL;
}

START_TEST(test_concurrent_reader)
{
	rd_fib = make(1u << 16, 0);
	ck_assert_int_eq(ip4_fib_add(rd_fib, IP(10, 1, 0, 0), 16, 1), 0);
	rd_stop = 0;
	rd_bad = rd_n = 0;
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, reader, NULL), 0);
	/* No ip4_fib_quiesce here: the reader never stops, so no group may be
	 * reused; 65,536 groups cover every cycle. */
	for (int i = 0; i < 20000 / SCALE; i++) {
		ck_assert_int_eq(ip4_fib_add(rd_fib, IP(10, 1, 2, 128), 25, 3), 0);
		ck_assert_int_eq(ip4_fib_add(rd_fib, IP(10, 1, 2, 0), 24, 2), 0);
		ck_assert_int_eq(ip4_fib_add(rd_fib, IP(10, 1, 2, 129), 32, 4), 0);
		ck_assert_int_eq(ip4_fib_del(rd_fib, IP(10, 1, 2, 128), 25), 0);
		ck_assert_int_eq(ip4_fib_del(rd_fib, IP(10, 1, 2, 129), 32), 0);
		ck_assert_int_eq(ip4_fib_del(rd_fib, IP(10, 1, 2, 0), 24), 0);
	}
	__atomic_store_n(&rd_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	ck_assert_uint_eq(rd_bad, 0);
	ck_assert_uint_gt(rd_n, 0);
	ip4_fib_destroy(rd_fib);
}
END_TEST

static Suite *ip4_fib_suite(void)
{
	Suite *s = suite_create("ip4_fib");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_empty_and_default);
	tcase_add_test(tc, test_overlap_add_delete);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_tbl8_recycling);
	tcase_add_test(tc, test_walk_get_stats);
	tcase_add_test(tc, test_adjacencies);
	tcase_add_test(tc, test_random_against_reference);
	tcase_add_test(tc, test_bulk_chunks);
	tcase_add_test(tc, test_concurrent_reader);
	tcase_add_test(tc, test_mem_4k);
	tcase_add_test(tc, test_mem_hugetlb);
	tcase_add_test(tc, test_mem_bad_mode);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(ip4_fib_suite());
}
