/* The IPv6 FIB (nodes/ip6/ip6_fib*.c): /0 and /128, the /24 boundary and
 * every stride boundary, overlapping prefixes on add and delete (a delete
 * restores the covering prefix), groups created, folded back and reused
 * only after quiesce, table-full and bad-argument errors, walk/get/stats,
 * the memory modes, and LPM against a reference (one hash per prefix length,
 * searched from /128 down) over 1,000,000 random operations - adds, deletes
 * and lookups interleaved, scalar, x4 and bulk - then every route deleted
 * in random order down to an empty table. A reader thread checks that
 * updates never show it a torn or foreign result. Sanitizer builds
 * (TEST_SANITIZED) run a tenth of the random load, TSan a hundredth. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ip4/smaps.h"
#include "nodes/ip6/ip6_fib.h"
#include "tests/check_run.h"

#if defined(__SANITIZE_THREAD__)
#define SCALE 100 /* TSan is here for the reader thread, not the random load */
#elif defined(TEST_SANITIZED)
#define SCALE 10
#else
#define SCALE 1
#endif
#define N_OPS (1000000 / SCALE)

static char err[256];

static struct in6_addr A(const char *s)
{
	struct in6_addr a;
	ck_assert_msg(inet_pton(AF_INET6, s, &a) == 1, "bad address %s", s);
	return a;
}

static struct ip6_fib *make(uint32_t n_groups, uint32_t max_routes)
{
	struct ip6_fib_config c;
	ip6_fib_config_default(&c);
	if (n_groups)
		c.n_groups = n_groups;
	c.max_routes = max_routes;
	struct ip6_fib *fib = ip6_fib_create(&c, err, sizeof(err));
	ck_assert_msg(fib, "%s", err);
	return fib;
}

static uint32_t look(const struct ip6_fib *fib, const char *s)
{
	struct in6_addr a = A(s);
	return ip6_fib_lookup(fib, &a);
}

static int add(struct ip6_fib *fib, const char *s, uint8_t len, uint32_t r)
{
	struct in6_addr a = A(s);
	return ip6_fib_add(fib, &a, len, r);
}

static int del(struct ip6_fib *fib, const char *s, uint8_t len)
{
	struct in6_addr a = A(s);
	return ip6_fib_del(fib, &a, len);
}

static uint32_t groups_used(const struct ip6_fib *fib)
{
	struct ip6_fib_stats s;
	ip6_fib_stats(fib, &s);
	return s.n_groups_used;
}

/* ---- hand-made cases ---- */

START_TEST(test_empty_default_host)
{
	struct ip6_fib *fib = make(0, 0);
	ck_assert_uint_eq(look(fib, "2001:db8::1"), IP6_FIB_MISS);
	ck_assert_int_eq(add(fib, "::", 0, 7), 0);
	ck_assert_uint_eq(look(fib, "::"), 7);
	ck_assert_uint_eq(look(fib, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), 7);
	/* /128 at both ends of the space, over /0: 13 groups each */
	ck_assert_int_eq(add(fib, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 128, 9), 0);
	ck_assert_int_eq(add(fib, "::", 128, 8), 0);
	ck_assert_uint_eq(groups_used(fib), 26);
	ck_assert_uint_eq(look(fib, "::"), 8);
	ck_assert_uint_eq(look(fib, "::1"), 7);
	ck_assert_uint_eq(look(fib, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), 9);
	ck_assert_uint_eq(look(fib, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"), 7);
	ck_assert_uint_eq(look(fib, "7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), 7);
	/* deleting /0 leaves the /128s; the rest misses, in their groups too */
	ck_assert_int_eq(del(fib, "::", 0), 0);
	ck_assert_uint_eq(look(fib, "::1"), IP6_FIB_MISS);
	ck_assert_uint_eq(look(fib, "::"), 8);
	ck_assert_uint_eq(look(fib, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), 9);
	/* re-adding /0 (host bits ignored) fills only what no longer route has */
	ck_assert_int_eq(add(fib, "9::9", 0, 3), 0);
	ck_assert_uint_eq(look(fib, "::1"), 3);
	ck_assert_uint_eq(look(fib, "::"), 8);
	uint32_t r;
	struct in6_addr z = A("::");
	ck_assert_int_eq(ip6_fib_get(fib, &z, 0, &r), 0);
	ck_assert_uint_eq(r, 3);
	/* the /128s go: every group folds back up to tbl24 */
	ck_assert_int_eq(del(fib, "::", 128), 0);
	ck_assert_int_eq(del(fib, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 128), 0);
	ck_assert_uint_eq(groups_used(fib), 0);
	ck_assert_uint_eq(look(fib, "::"), 3);
	ip6_fib_destroy(fib);
}
END_TEST

START_TEST(test_overlap_fallback)
{
	struct ip6_fib *fib = make(0, 0);
	/* added longest first: each shorter add must go around the longer */
	ck_assert_int_eq(add(fib, "2001:db8:1:2::5", 128, 6), 0);
	ck_assert_int_eq(add(fib, "2001:db8:1:2::", 64, 5), 0);
	ck_assert_int_eq(add(fib, "2001:db8:1::", 48, 4), 0);
	ck_assert_int_eq(add(fib, "2001:db8::", 32, 3), 0);
	ck_assert_int_eq(add(fib, "2001:d00::", 24, 2), 0);
	ck_assert_int_eq(add(fib, "2000::", 3, 1), 0);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::5"), 6);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::6"), 5);
	ck_assert_uint_eq(look(fib, "2001:db8:1:3::"), 4);
	ck_assert_uint_eq(look(fib, "2001:db8:2::"), 3);
	ck_assert_uint_eq(look(fib, "2001:d01::"), 2);
	ck_assert_uint_eq(look(fib, "3fff::"), 1);
	ck_assert_uint_eq(look(fib, "4000::"), IP6_FIB_MISS);

	/* deleting the /48 restores the /32 under it and keeps the longer ones */
	ck_assert_int_eq(del(fib, "2001:db8:1::", 48), 0);
	ck_assert_uint_eq(look(fib, "2001:db8:1:3::"), 3);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::6"), 5);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::5"), 6);
	/* the /64 falls past the deleted /48 to the /32 */
	ck_assert_int_eq(del(fib, "2001:db8:1:2::", 64), 0);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::6"), 3);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::5"), 6);
	/* the /32 goes: its range and the /128's groups fall to the /24 */
	ck_assert_int_eq(del(fib, "2001:db8::", 32), 0);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::6"), 2);
	ck_assert_uint_eq(look(fib, "2001:db8:ffff::"), 2);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::5"), 6);
	/* replace in place, over the groups */
	ck_assert_int_eq(add(fib, "2001:d00::", 24, 12), 0);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::6"), 12);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::5"), 6);
	/* a /3 delete under the /24 and the /128 */
	ck_assert_int_eq(del(fib, "2000::", 3), 0);
	ck_assert_uint_eq(look(fib, "3fff::"), IP6_FIB_MISS);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::6"), 12);
	ck_assert_int_eq(del(fib, "2001:d00::", 24), 0);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::6"), IP6_FIB_MISS);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::5"), 6);
	ck_assert_int_eq(del(fib, "2001:d00::", 24), -ENOENT);
	ck_assert_uint_eq(groups_used(fib), 13);
	ck_assert_int_eq(del(fib, "2001:db8:1:2::5", 128), 0);
	ck_assert_uint_eq(groups_used(fib), 0);
	ck_assert_uint_eq(look(fib, "2001:db8:1:2::5"), IP6_FIB_MISS);
	ip6_fib_destroy(fib);
}
END_TEST

/* addr with bit i (0 = most significant) flipped */
static struct in6_addr flip(struct in6_addr a, unsigned i)
{
	a.s6_addr[i / 8] ^= (uint8_t)(0x80 >> (i % 8));
	return a;
}

/* Each length on and around the /24 and every stride boundary: the first
 * and last address of the route match, the addresses just outside do not,
 * over a covering /16 that they must fall back to. */
START_TEST(test_stride_boundaries)
{
	struct ip6_fib *fib = make(0, 0);
	ck_assert_int_eq(add(fib, "2001::", 16, 1), 0);
	for (unsigned len = 17; len <= 128; len++) {
		struct in6_addr p = A("2001:0db8:85a3:08d3:1319:8a2e:0370:7344");
		for (unsigned i = len; i < 128; i++) /* clear the host bits */
			p.s6_addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
		ck_assert_int_eq(ip6_fib_add(fib, &p, (uint8_t)len, 100 + len), 0);
		struct in6_addr last = p;
		for (unsigned i = len; i < 128; i++)
			last.s6_addr[i / 8] |= (uint8_t)(0x80 >> (i % 8));
		ck_assert_uint_eq(ip6_fib_lookup(fib, &p), 100 + len);
		ck_assert_uint_eq(ip6_fib_lookup(fib, &last), 100 + len);
		struct in6_addr out = flip(p, len - 1); /* the last prefix bit */
		ck_assert_uint_eq(ip6_fib_lookup(fib, &out), 1);
		if (len < 128) {
			struct in6_addr below = flip(last, len); /* host bit, still inside */
			ck_assert_uint_eq(ip6_fib_lookup(fib, &below), 100 + len);
		}
		ck_assert_int_eq(ip6_fib_del(fib, &p, (uint8_t)len), 0);
		ck_assert_uint_eq(ip6_fib_lookup(fib, &p), 1);
		ck_assert_uint_eq(ip6_fib_lookup(fib, &last), 1);
		ck_assert_uint_eq(groups_used(fib), 0);
		ip6_fib_quiesce(fib);
	}
	/* a /24 and a /25 side by side: the tbl24 entry turns into a group */
	ck_assert_int_eq(add(fib, "2001:d00::", 24, 24), 0);
	ck_assert_int_eq(add(fib, "2001:d80::", 25, 25), 0);
	ck_assert_uint_eq(look(fib, "2001:d7f:ffff::"), 24);
	ck_assert_uint_eq(look(fib, "2001:d80::"), 25);
	ck_assert_uint_eq(look(fib, "2001:dff:ffff::"), 25);
	ck_assert_uint_eq(look(fib, "2001:e00::"), 1);
	ck_assert_uint_eq(groups_used(fib), 1);
	ck_assert_int_eq(del(fib, "2001:d80::", 25), 0);
	ck_assert_uint_eq(groups_used(fib), 0);
	ck_assert_uint_eq(look(fib, "2001:dff:ffff::"), 24);
	ip6_fib_destroy(fib);
}
END_TEST

START_TEST(test_errors_and_full)
{
	struct ip6_fib *fib = make(14, 3);
	struct in6_addr a = A("2001:db8::");
	ck_assert_int_eq(ip6_fib_add(fib, &a, 129, 1), -EINVAL);
	ck_assert_int_eq(ip6_fib_add(fib, &a, 32, IP6_FIB_RESULT_LIMIT), -EINVAL);
	ck_assert_int_eq(ip6_fib_del(fib, &a, 129), -EINVAL);
	ck_assert_int_eq(ip6_fib_get(fib, &a, 129, NULL), -EINVAL);
	ck_assert_int_eq(ip6_fib_get(fib, &a, 32, NULL), -ENOENT);
	ck_assert_int_eq(ip6_fib_del(fib, &a, 32), -ENOENT);
	ck_assert_int_eq(ip6_fib_add(fib, &a, 32, IP6_FIB_RESULT_LIMIT - 1), 0);
	ck_assert_uint_eq(look(fib, "2001:db8::1"), IP6_FIB_RESULT_LIMIT - 1);
	/* 14 groups: the /32 took one, a /128 elsewhere needs 13 */
	ck_assert_int_eq(add(fib, "3000::1", 128, 2), 0);
	ck_assert_uint_eq(groups_used(fib), 14);
	/* no group left: a route that needs one fails and changes nothing */
	ck_assert_int_eq(add(fib, "2001:db8:1::", 48, 3), -ENOSPC);
	ck_assert_int_eq(add(fib, "4000::", 25, 3), -ENOSPC);
	ck_assert_int_eq(ip6_fib_get(fib, &a, 48, NULL), -ENOENT);
	ck_assert_uint_eq(look(fib, "2001:db8:1::"), IP6_FIB_RESULT_LIMIT - 1);
	/* one that fits the existing groups does (the /32's level-1 group) */
	ck_assert_int_eq(add(fib, "2001:db9::", 32, 4), 0);
	ck_assert_uint_eq(look(fib, "2001:db9::"), 4);
	/* max_routes (3) reached; a replace is no new route */
	ck_assert_int_eq(add(fib, "5000::", 8, 5), -ENOSPC);
	ck_assert_int_eq(add(fib, "2001:db9::", 32, 6), 0);
	ck_assert_uint_eq(look(fib, "2001:db9::"), 6);
	/* freed groups wait for quiesce */
	ck_assert_int_eq(del(fib, "3000::1", 128), 0);
	ck_assert_int_eq(add(fib, "2001:db8:1::", 48, 3), -ENOSPC);
	ip6_fib_quiesce(fib);
	ck_assert_int_eq(add(fib, "2001:db8:1::", 48, 3), 0);
	ck_assert_uint_eq(look(fib, "2001:db8:1::1"), 3);
	ip6_fib_destroy(fib);

	struct ip6_fib_config c;
	ip6_fib_config_default(&c);
	c.n_groups = 0;
	ck_assert_ptr_null(ip6_fib_create(&c, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "n_groups"));
	c.n_groups = IP6_FIB_GROUPS_MAX + 1; /* an EXT entry holds index << 8 */
	ck_assert_ptr_null(ip6_fib_create(&c, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "n_groups out of range 1..8388608"));
	ip6_fib_config_default(&c);
	c.mem = (enum ip6_fib_mem)7;
	ck_assert_ptr_null(ip6_fib_create(&c, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "memory mode"));
}
END_TEST

/* Folded groups stay as a late reader last saw them until quiesce. */
START_TEST(test_fold_and_quiesce)
{
	struct ip6_fib *fib = make(0, 0);
	struct ip6_fib_stats s;
	ck_assert_int_eq(add(fib, "2001:db8::", 32, 1), 0);
	ck_assert_int_eq(add(fib, "2001:db8:0:1::", 64, 2), 0);
	ck_assert_int_eq(add(fib, "2001:db8:0:1::", 80, 3), 0);
	ip6_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_groups_used, 7); /* /32: 1; /64: 4 more; /80: 2 more */
	ck_assert_uint_eq(s.n_groups_by_level[1], 1);
	ck_assert_uint_eq(s.n_groups_by_level[5], 1);
	ck_assert_uint_eq(s.n_groups_by_level[7], 1);
	ck_assert_uint_eq(s.n_groups_by_level[8], 0);
	ck_assert_int_eq(del(fib, "2001:db8:0:1::", 64), 0);
	ip6_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_groups_used, 7); /* the /80 keeps its path */
	ck_assert_uint_eq(look(fib, "2001:db8:0:1:1::"), 1);
	ck_assert_uint_eq(look(fib, "2001:db8:0:1::1"), 3);
	const struct ip6_fib_tables *t = ip6_fib_tables(fib);
	struct in6_addr a = A("2001:db8:0:1::");
	uint32_t e24 = t->tbl24[ip6_fib_index24(&a)];
	ck_assert(e24 & IP6_FIB_E_EXT);
	uint32_t e32 = ip6_fib_step(t->groups_ext, e24, 0xb8); /* the level-2 group */
	ck_assert(e32 & IP6_FIB_E_EXT);
	ck_assert_int_eq(del(fib, "2001:db8:0:1::", 80), 0);
	ip6_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_groups_used, 1); /* the /32's group stays */
	ck_assert_uint_eq(s.n_groups_pending, 6);
	ck_assert_uint_eq(look(fib, "2001:db8:0:1::1"), 1);
	ck_assert_uint_eq(ip6_fib_step(t->groups_ext, e24, 0xb8), 1); /* folded */
	/* a late reader in the retired level-2 group still finds the /32 */
	for (uint32_t b = 0; b < 256; b++)
		ck_assert_uint_eq(ip6_fib_step(t->groups_ext, e32, (uint8_t)b), 1);
	ck_assert_int_eq(del(fib, "2001:db8::", 32), 0);
	ip6_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_groups_used, 0);
	ck_assert_uint_eq(s.n_groups_pending, 7);
	ck_assert_uint_eq(t->tbl24[ip6_fib_index24(&a)], IP6_FIB_MISS);
	ip6_fib_quiesce(fib);
	ip6_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_groups_pending, 0);
	/* flush retires whole subtrees */
	ck_assert_int_eq(add(fib, "2001:db8::1", 128, 1), 0);
	ck_assert_int_eq(add(fib, "2001:db8::", 24, 2), 0);
	ip6_fib_flush(fib);
	ip6_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_routes, 0);
	ck_assert_uint_eq(s.n_groups_used, 0);
	ck_assert_uint_eq(s.n_groups_pending, 13);
	ck_assert_uint_eq(look(fib, "2001:db8::1"), IP6_FIB_MISS);
	ip6_fib_destroy(fib);
}
END_TEST

struct walk_ctx {
	struct ip6_route r[8];
	int n;
};

static int walk_fn(const struct ip6_route *r, void *ctx)
{
	struct walk_ctx *w = ctx;
	w->r[w->n++] = *r;
	return w->n == 4 ? 42 : 0;
}

START_TEST(test_walk_get_stats)
{
	struct ip6_fib *fib = make(0, 0);
	struct ip6_fib_stats s0, s;
	ip6_fib_stats(fib, &s0);
	ck_assert_int_eq(add(fib, "fe80::", 10, 3), 0);
	ck_assert_int_eq(add(fib, "2001:db8::", 32, 1), 0);
	ck_assert_int_eq(add(fib, "::", 0, 9), 0);
	ck_assert_int_eq(add(fib, "2001:db8::ffff", 48, 2), 0); /* host bits masked */
	ck_assert_int_eq(add(fib, "fe80::1", 128, 4), 0);
	struct walk_ctx w = { .n = 0 };
	ck_assert_int_eq(ip6_fib_walk(fib, walk_fn, &w), 42);
	ck_assert_int_eq(w.n, 4);
	char buf[INET6_ADDRSTRLEN];
	ck_assert_uint_eq(w.r[0].len, 0);
	ck_assert_uint_eq(w.r[0].result, 9);
	ck_assert_str_eq(inet_ntop(AF_INET6, &w.r[1].prefix, buf, sizeof(buf)), "2001:db8::");
	ck_assert_uint_eq(w.r[1].len, 32);
	ck_assert_uint_eq(w.r[2].len, 48);
	ck_assert_str_eq(inet_ntop(AF_INET6, &w.r[2].prefix, buf, sizeof(buf)), "2001:db8::");
	ck_assert_uint_eq(w.r[3].len, 10);
	ip6_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_routes, 5);
	ck_assert_uint_eq(s.n_routes_by_len[128], 1);
	ck_assert_uint_eq(s.n_routes_by_len[48], 1);
	ck_assert_uint_eq(s.n_groups_used, 3 + 13); /* /32: 1, /48: 2, /128: 13 */
	ck_assert_uint_gt(s.mem_bytes, s0.mem_bytes);
	ck_assert_uint_ge(s0.mem_bytes, 80u << 20); /* tbl24 and its depths */
	uint32_t r = 0;
	struct in6_addr p = A("2001:db8:0:ffff::");
	ck_assert_int_eq(ip6_fib_get(fib, &p, 48, &r), 0);
	ck_assert_uint_eq(r, 2);
	ck_assert_int_eq(ip6_fib_get(fib, &p, 64, &r), -ENOENT);
	ip6_fib_destroy(fib);
}
END_TEST

/* ---- the reference: one hash per prefix length, searched from /128 down ---- */

/* Chained, so deletes leave nothing behind: bucket heads per (len, prefix)
 * hash, nodes from a pool. n_len[l] lets a search skip unused lengths. */
#define REF_BUCKETS (1u << 16) /* ~10,000 live routes: short chains, cache-resident */
#define REF_NODES (N_OPS + 16)

struct ref_node {
	struct in6_addr key;
	uint32_t val;
	int32_t next;
	uint8_t len;
};

static int32_t *ref_head;
static struct ref_node *ref_pool;
static int32_t ref_free, ref_hw;
static uint32_t ref_n_len[129];

static struct in6_addr mask6(struct in6_addr a, unsigned len)
{
	for (unsigned i = 0; i < 16; i++) {
		unsigned keep = len >= 8 * (i + 1) ? 8 : len > 8 * i ? len - 8 * i : 0;
		a.s6_addr[i] &= (uint8_t)(0xff00 >> keep);
	}
	return a;
}

static uint32_t ref_bucket(const struct in6_addr *k, unsigned len)
{
	uint64_t h = 1469598103934665603ull ^ len;
	for (int i = 0; i < 16; i++)
		h = (h ^ k->s6_addr[i]) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 29)) & (REF_BUCKETS - 1);
}

static int32_t *ref_link(const struct in6_addr *k, unsigned len)
{
	int32_t *p = &ref_head[ref_bucket(k, len)];
	while (*p >= 0 && !(ref_pool[*p].len == len && !memcmp(&ref_pool[*p].key, k, 16)))
		p = &ref_pool[*p].next;
	return p;
}

static void ref_init(void)
{
	ref_head = malloc(REF_BUCKETS * sizeof(*ref_head));
	ref_pool = malloc(REF_NODES * sizeof(*ref_pool));
	ck_assert(ref_head && ref_pool);
	memset(ref_head, 0xff, REF_BUCKETS * sizeof(*ref_head));
	ref_free = -1;
	ref_hw = 0;
	memset(ref_n_len, 0, sizeof(ref_n_len));
}

static void ref_add(struct in6_addr k, unsigned len, uint32_t val)
{
	k = mask6(k, len);
	int32_t *p = ref_link(&k, len);
	if (*p >= 0) {
		ref_pool[*p].val = val;
		return;
	}
	int32_t i = ref_free >= 0 ? ref_free : ref_hw++;
	if (i >= REF_NODES)
		ck_abort_msg("reference full");
	if (i == ref_free)
		ref_free = ref_pool[i].next;
	ref_pool[i] = (struct ref_node){ k, val, -1, (uint8_t)len };
	*p = i;
	ref_n_len[len]++;
}

static void ref_del(struct in6_addr k, unsigned len)
{
	k = mask6(k, len);
	int32_t *p = ref_link(&k, len);
	if (*p < 0)
		ck_abort_msg("reference: no such route");
	int32_t i = *p;
	*p = ref_pool[i].next;
	ref_pool[i].next = ref_free;
	ref_free = i;
	ref_n_len[len]--;
}

static uint32_t ref_lookup(const struct in6_addr *a)
{
	for (int len = 128; len >= 0; len--) {
		if (!ref_n_len[len])
			continue;
		struct in6_addr k = mask6(*a, (unsigned)len);
		int32_t *p = ref_link(&k, (unsigned)len);
		if (*p >= 0)
			return ref_pool[*p].val;
	}
	return IP6_FIB_MISS;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* Routes crowd under four /32s, their lower bytes mostly from {0, 1, 2,
 * ff} so that they nest at every depth; lengths over the whole range with
 * stride boundaries (24 + 8k and either side) a fifth of the time. */
static const uint8_t hot[4][4] = { { 0x20, 0x01, 0x0d, 0xb8 }, { 0x2a, 0x00, 0x14, 0x50 },
				   { 0x26, 0x00, 0x1f, 0x00 }, { 0xfd, 0x00, 0x00, 0x00 } };

static struct in6_addr random_hot_addr(void)
{
	struct in6_addr a;
	memcpy(a.s6_addr, hot[rnd() % 4], 4);
	static const uint8_t few[4] = { 0, 1, 2, 0xff };
	for (int i = 4; i < 16; i++)
		a.s6_addr[i] = rnd() % 8 ? few[rnd() % 4] : (uint8_t)rnd();
	return a;
}

static struct in6_addr random_any_addr(void)
{
	struct in6_addr a;
	for (int i = 0; i < 16; i++)
		a.s6_addr[i] = (uint8_t)rnd();
	return a;
}

static void random_route(struct in6_addr *p, uint8_t *len)
{
	uint32_t r = rnd() % 1000;
	unsigned l;
	if (r < 3) /* rare: a /0../15 rewrites up to all 2^24 tbl24 entries */
		l = rnd() % 16;
	else if (r < 200)
		l = 24 + 8 * (rnd() % 14) + rnd() % 3 - 1; /* 23..129 around boundaries */
	else if (r < 250)
		l = 16 + rnd() % 9;
	else if (r < 600)
		l = 25 + rnd() % 40;
	else if (r < 900)
		l = 65 + rnd() % 63;
	else
		l = 128;
	if (l > 128)
		l = 128;
	*len = (uint8_t)l;
	/* a short route over a hot /32 rewrites its whole subtree: half elsewhere */
	*p = mask6(rnd() % (l <= 24 ? 2 : 16) ? random_hot_addr() : random_any_addr(), l);
}

/* Live routes, for deletes and for addresses near them. */
static struct in6_addr *live_p;
static uint8_t *live_len;
static uint32_t n_live;

static struct in6_addr random_addr(void)
{
	uint32_t k = rnd() % 4;
	if (k == 0 || n_live == 0)
		return random_any_addr();
	if (k == 1)
		return random_hot_addr();
	/* in or just outside a live route: random host bits, sometimes its
	 * last prefix bit flipped */
	uint32_t i = rnd() % n_live;
	struct in6_addr a = live_p[i], r = random_any_addr();
	unsigned len = live_len[i];
	struct in6_addr m = mask6(r, len);
	for (int b = 0; b < 16; b++)
		a.s6_addr[b] |= r.s6_addr[b] & (uint8_t)~m.s6_addr[b];
	if (len && rnd() % 4 == 0)
		a = flip(a, len - 1);
	return a;
}

static void check_x4(const struct ip6_fib *fib)
{
	struct in6_addr a[4];
	uint32_t x4[4];
	for (int k = 0; k < 4; k++)
		a[k] = random_addr();
	ip6_fib_lookup_x4(fib, &a[0], &a[1], &a[2], &a[3], x4);
	for (int k = 0; k < 4; k++) {
		uint32_t want = ref_lookup(&a[k]), got = ip6_fib_lookup(fib, &a[k]);
		if (got != want) {
			char buf[INET6_ADDRSTRLEN];
			ck_abort_msg("lookup %s: fib %u, reference %u",
				     inet_ntop(AF_INET6, &a[k], buf, sizeof(buf)), got, want);
		}
		if (x4[k] != got) /* no ck_assert per lookup: each writes its location */
			ck_abort_msg("x4 %u, scalar %u", x4[k], got);
	}
}

static void check_bulk(const struct ip6_fib *fib, uint32_t n)
{
	static struct in6_addr a[1000];
	static uint32_t out[1000];
	for (uint32_t i = 0; i < n; i++)
		a[i] = random_addr();
	ip6_fib_lookup_bulk(fib, a, out, n);
	for (uint32_t i = 0; i < n; i++)
		if (out[i] != ref_lookup(&a[i]))
			ck_abort_msg("bulk %u: %u, reference %u", i, out[i], ref_lookup(&a[i]));
}

static void live_del(struct ip6_fib *fib, uint32_t k)
{
	if (ip6_fib_del(fib, &live_p[k], live_len[k])) /* no ck_assert per op: see check_x4 */
		ck_abort_msg("delete of a live route failed");
	ref_del(live_p[k], live_len[k]);
	live_p[k] = live_p[n_live - 1];
	live_len[k] = live_len[n_live - 1];
	n_live--;
}

/* N_OPS operations: 50% adds (a twelfth of them replacing a live route's
 * result), 35% deletes of a random live route, 15% x4 lookups checked
 * against the reference and scalar; a bulk check every 4096. */
START_TEST(test_random_against_reference)
{
	ref_init();
	struct ip6_fib *fib = make(1u << 20, 0);
	struct ip6_fib_stats s0, s;
	ip6_fib_stats(fib, &s0);
	live_p = malloc(N_OPS * sizeof(*live_p));
	live_len = malloc(N_OPS);
	ck_assert(live_p && live_len);
	n_live = 0;
	uint32_t n_add = 0, n_del = 0, n_look = 0;
	for (uint32_t op = 0; op < N_OPS; op++) {
		uint32_t r = rnd() % 100;
		if (r < 50) {
			struct in6_addr p;
			uint8_t l;
			if (n_live && r < 4) {
				uint32_t k = rnd() % n_live;
				p = live_p[k], l = live_len[k];
			} else {
				random_route(&p, &l);
			}
			uint32_t result = 1 + rnd() % (IP6_FIB_RESULT_LIMIT - 1);
			bool fresh = ip6_fib_get(fib, &p, l, NULL) == -ENOENT;
			if (ip6_fib_add(fib, &p, l, result))
				ck_abort_msg("add /%u failed", l);
			ref_add(p, l, result);
			if (fresh)
				live_p[n_live] = p, live_len[n_live++] = l;
			n_add++;
		} else if (r < 85) {
			if (n_live)
				live_del(fib, rnd() % n_live), n_del++;
		} else {
			check_x4(fib);
			n_look += 4;
		}
		if (op % 4096 == 0) {
			ip6_fib_quiesce(fib);
			check_bulk(fib, 1000);
		}
	}
	ip6_fib_stats(fib, &s);
	fprintf(stderr, "ip6 fib reference: %u adds, %u deletes, %u lookups; %u routes, %u groups\n",
		n_add, n_del, n_look, n_live, s.n_groups_used);
	ck_assert_uint_eq(s.n_routes, n_live);
	ck_assert_uint_gt(s.n_groups_used, 1000 / SCALE);
	ck_assert_uint_gt(n_live, 5000 / SCALE);
	for (unsigned l = 1; l <= 13; l++)
		ck_assert_uint_gt(s.n_groups_by_level[l], 0);
	/* exact-match get agrees with the reference for every live route */
	for (uint32_t k = 0; k < n_live; k++) {
		uint32_t v;
		ck_assert_int_eq(ip6_fib_get(fib, &live_p[k], live_len[k], &v), 0);
		struct in6_addr m = mask6(live_p[k], live_len[k]);
		ck_assert_uint_eq(v, ref_pool[*ref_link(&m, live_len[k])].val);
	}
	/* everything goes, in random order, checked as it empties */
	while (n_live) {
		live_del(fib, rnd() % n_live);
		if (n_live % 8192 == 0)
			for (int i = 0; i < 500; i++)
				check_x4(fib);
	}
	ip6_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_routes, 0);
	ck_assert_uint_eq(s.n_groups_used, 0);
	ip6_fib_quiesce(fib);
	ip6_fib_stats(fib, &s);
	ck_assert_uint_eq(s.n_groups_pending, 0);
	ck_assert_uint_eq(s.mem_bytes, s0.mem_bytes);
	const uint32_t *tbl24 = ip6_fib_tables(fib)->tbl24;
	for (uint32_t i = 0; i < (1u << 24); i++)
		if (tbl24[i])
			ck_abort_msg("tbl24[%u] = %08x after every delete", i, tbl24[i]);
	free(live_p);
	free(live_len);
	free(ref_head);
	free(ref_pool);
	ip6_fib_destroy(fib);
}
END_TEST

/* ---- memory modes ---- */

/* The same routes and addresses through fib and a default-mode FIB: the
 * mode changes pages, never results. */
static void check_same_as_auto(struct ip6_fib *fib)
{
	struct ip6_fib *ref_fib = make(4096, 0);
	for (int i = 0; i < 2000; i++) {
		struct in6_addr p;
		uint8_t l;
		random_route(&p, &l);
		uint32_t r = 1 + rnd() % 1000;
		int rc = ip6_fib_add(ref_fib, &p, l, r);
		ck_assert_int_eq(ip6_fib_add(fib, &p, l, r), rc);
	}
	for (int i = 0; i < 100000; i++) {
		struct in6_addr a = rnd() % 2 ? random_hot_addr() : random_any_addr();
		ck_assert_uint_eq(ip6_fib_lookup(fib, &a), ip6_fib_lookup(ref_fib, &a));
	}
	ip6_fib_destroy(ref_fib);
}

START_TEST(test_mem_4k)
{
	struct ip6_fib_config c;
	ip6_fib_config_default(&c);
	c.mem = IP6_FIB_MEM_4K;
	c.n_groups = 4096;
	struct ip6_fib *fib = ip6_fib_create(&c, err, sizeof(err));
	ck_assert_msg(fib, "%s", err);
	struct ip6_fib_stats s;
	ip6_fib_stats(fib, &s);
	ck_assert_int_eq(s.tbl24_pages, IP6_FIB_PAGES_4K);
	ck_assert_int_eq(s.groups_pages, IP6_FIB_PAGES_4K);
	ck_assert_str_eq(ip6_fib_pages_name(s.tbl24_pages), "4 KB");
	const void *tables[2] = { ip6_fib_tables(fib)->tbl24, ip6_fib_tables(fib)->groups };
	const long kb[2] = { 64 << 10, 4 << 10 };
	for (int t = 0; t < 2; t++) {
		struct smaps_kb m = { 0 };
		ck_assert(smaps_of(tables[t], &m));
		ck_assert_int_eq(m.kernel_page, 4);
		ck_assert_int_eq(m.anon_huge, 0);
		ck_assert_int_ge(m.rss, kb[t]);
	}
	check_same_as_auto(fib);
	ip6_fib_destroy(fib);
}
END_TEST

/* 2 MB hugetlb pages for both tables, or no FIB with a reason: never a
 * silent fallback. */
START_TEST(test_mem_hugetlb)
{
	struct ip6_fib_config c;
	ip6_fib_config_default(&c);
	c.mem = IP6_FIB_MEM_HUGETLB;
	c.n_groups = 4096;
	err[0] = 0;
	struct ip6_fib *fib = ip6_fib_create(&c, err, sizeof(err));
	if (!fib) {
		ck_assert_msg(strstr(err, "hugepages"), "%s", err);
		return;
	}
	struct ip6_fib_stats s;
	ip6_fib_stats(fib, &s);
	ck_assert_int_eq(s.tbl24_pages, IP6_FIB_PAGES_HUGETLB);
	ck_assert_int_eq(s.groups_pages, IP6_FIB_PAGES_HUGETLB);
	struct smaps_kb m = { 0 };
	ck_assert(smaps_of(ip6_fib_tables(fib)->tbl24, &m));
	ck_assert_int_eq(m.kernel_page, 2048);
	check_same_as_auto(fib);
	ip6_fib_destroy(fib);
}
END_TEST

/* ---- a reader during updates ---- */

static struct ip6_fib *rd_fib;
static volatile int rd_stop;
static uint64_t rd_bad, rd_n;

/* Under 2001:db8::/32 (result 1, always there) the writer toggles a /48
 * (2), a /64 (3) and a /128 (4); any other result is torn or foreign, and
 * an address outside the /48 only ever sees 1. */
static void *reader(void *arg)
{
	(void)arg;
	struct in6_addr a[4] = { A("2001:db8:1:2::5"), A("2001:db8:1:2::6"), A("2001:db8:1:3::"),
				 A("2001:db8:2::") };
	while (!__atomic_load_n(&rd_stop, __ATOMIC_RELAXED)) {
		uint32_t r[4];
		ip6_fib_lookup_x4(rd_fib, &a[0], &a[1], &a[2], &a[3], r);
		for (int k = 0; k < 4; k++)
			if (r[k] < 1 || r[k] > 4 || (k == 3 && r[k] != 1))
				rd_bad++;
		uint32_t b[4];
		ip6_fib_lookup_bulk(rd_fib, a, b, 4);
		if (ip6_fib_lookup(rd_fib, &a[0]) == 0 || b[3] != 1 || b[0] == 0)
			rd_bad++;
		rd_n++;
	}
	return NULL;
}

START_TEST(test_concurrent_reader)
{
	rd_fib = make(1u << 17, 0);
	ck_assert_int_eq(add(rd_fib, "2001:db8::", 32, 1), 0);
	rd_stop = 0;
	rd_bad = rd_n = 0;
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, reader, NULL), 0);
	/* No quiesce: the reader never stops, so no group may be reused; each
	 * cycle retires at most 12, and 2^17 cover every cycle. */
	for (int i = 0; i < 8000 / SCALE; i++) {
		ck_assert_int_eq(add(rd_fib, "2001:db8:1:2::", 64, 3), 0);
		ck_assert_int_eq(add(rd_fib, "2001:db8:1::", 48, 2), 0);
		ck_assert_int_eq(add(rd_fib, "2001:db8:1:2::5", 128, 4), 0);
		ck_assert_int_eq(del(rd_fib, "2001:db8:1:2::", 64), 0);
		ck_assert_int_eq(del(rd_fib, "2001:db8:1:2::5", 128), 0);
		ck_assert_int_eq(del(rd_fib, "2001:db8:1::", 48), 0);
	}
	__atomic_store_n(&rd_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	ck_assert_uint_eq(rd_bad, 0);
	ck_assert_uint_gt(rd_n, 0);
	ip6_fib_destroy(rd_fib);
}
END_TEST

static Suite *ip6_fib_suite(void)
{
	Suite *s = suite_create("ip6_fib");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_empty_default_host);
	tcase_add_test(tc, test_overlap_fallback);
	tcase_add_test(tc, test_stride_boundaries);
	tcase_add_test(tc, test_errors_and_full);
	tcase_add_test(tc, test_fold_and_quiesce);
	tcase_add_test(tc, test_walk_get_stats);
	tcase_add_test(tc, test_random_against_reference);
	tcase_add_test(tc, test_concurrent_reader);
	tcase_add_test(tc, test_mem_4k);
	tcase_add_test(tc, test_mem_hugetlb);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(ip6_fib_suite());
}
