/* nodes/fib_rules.h, the route store of both FIBs: a resize is spread over
 * the updates after it, so no insert or remove under the barrier costs in
 * proportion to the table. Counted through FIB_RULES_WORK (slots set empty,
 * entries moved), not timed: each update does at most FIB_RULE_PREP_STEP
 * of the one or FIB_RULE_MIGRATE_STEP of the other, while 1,000,000 keys
 * go in (the table doubling to 2M slots) and out again (halving back), and
 * every key present is found at every moment checked, in either array. */
#include <check.h>
#include <stdint.h>

static uint64_t work;
#define FIB_RULES_WORK(n) (work += (n))
#include "nodes/fib_rules.h"

#include "tests/check_run.h"

struct slot {
	uint32_t key, val;
};
struct table {
	FIB_RULE_TABLE_FIELDS(struct slot)
};

static inline uint32_t hash(uint32_t k)
{
	k ^= k >> 16;
	k *= 0x85ebca6bu;
	k ^= k >> 13;
	k *= 0xc2b2ae35u;
	k ^= k >> 16;
	return k;
}

static inline bool eq(uint32_t a, uint32_t b)
{
	return a == b;
}

FIB_RULES_DEFINE(t, struct slot, struct table, uint32_t, hash, eq)

#ifdef TEST_SANITIZED
#define N 100000u /* a tenth under the sanitizers: still 14 resizes each way */
#else
#define N 1000000u
#endif
#define STEP_MAX (FIB_RULE_PREP_STEP > FIB_RULE_MIGRATE_STEP ? FIB_RULE_PREP_STEP : FIB_RULE_MIGRATE_STEP)

static uint32_t key(uint32_t i)
{
	return i * 2654435761u; /* distinct for i < 2^32 */
}

/* Every 4,096th of keys [lo, hi) is there with its value; and one absent. */
static void assert_present(const struct table *rt, uint32_t lo, uint32_t hi)
{
	for (uint32_t i = lo; i < hi; i += 4096) {
		const struct slot *s = t_find(rt, key(i));
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(s->val, i);
	}
	ck_assert_ptr_null(t_find(rt, key(N + 7)));
}

START_TEST(resize_spread_over_updates)
{
	struct table rt = { 0 };
	uint64_t worst = 0, resizes = 0;
	uint32_t cap = 0;
	for (uint32_t i = 0; i < N; i++) {
		uint64_t w = work;
		ck_assert_int_eq(t_insert(&rt, key(i), i), 0);
		worst = work - w > worst ? work - w : worst;
		resizes += rt.mask + 1 != cap;
		cap = rt.mask + 1;
		if ((i & 0x3ff) == 0 && (rt.old || rt.prep || (i & 0xffff) == 0))
			assert_present(&rt, 0, i + 1); /* mid-resize too */
	}
	ck_assert_uint_eq(rt.n, N);
	ck_assert_uint_ge(rt.mask + 1, 2 * N); /* it grew ... */
	ck_assert_uint_ge(resizes, N > 500000 ? 17 : 14); /* ... from 16 slots, step by step */
	ck_assert_uint_le(worst, STEP_MAX);
	assert_present(&rt, 0, N);
	/* The walk sees each key once, whichever array holds it. */
	uint32_t pos = 0, seen = 0;
	while (t_next(&rt, &pos))
		seen++;
	ck_assert_uint_eq(seen, N);
	for (uint32_t i = 0; i < N; i++) {
		uint64_t w = work;
		struct slot *s = t_find(&rt, key(i));
		ck_assert_ptr_nonnull(s);
		t_remove(&rt, s);
		ck_assert_uint_le(work - w, STEP_MAX);
		if ((i & 0x3fff) == 0)
			assert_present(&rt, i + 1, N);
	}
	ck_assert_uint_eq(rt.n, 0);
	ck_assert_ptr_null(rt.slots); /* the last remove gave everything back */
	t_free(&rt);
}
END_TEST

static Suite *fib_rules_suite(void)
{
	Suite *s = suite_create("fib_rules");
	TCase *tc = tcase_create("resize");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, resize_spread_over_updates);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(fib_rules_suite());
}
