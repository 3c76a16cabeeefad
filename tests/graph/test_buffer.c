/* Buffer pool suite: layout, alloc/free, accounting across two threads. */
#include <check.h>

#include "tests/check_run.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "graph/buffer.h"
#include "tests/graph/test_nodes.h"

START_TEST(test_layout_and_index)
{
	tn_buffers(1000);
	ck_assert_uint_eq(buffer_main.stride % 64, 0);
	ck_assert_uint_ge(buffer_main.stride, 64 + BUFFER_HEADROOM + BUFFER_DATA_SIZE_DEFAULT);
	uint32_t bi[3];
	ck_assert_uint_eq(buffer_alloc(bi, 3, -1), 3);
	for (int i = 0; i < 3; i++) {
		struct buffer *b = buffer_get(bi[i]);
		ck_assert_uint_eq((uintptr_t)b % 64, 0);
		ck_assert_uint_eq(buffer_index(b), bi[i]);
		ck_assert_uint_eq(b->current_length, 0);
		ck_assert_ptr_eq(buffer_data(b), (uint8_t *)b + 64 + BUFFER_HEADROOM);
	}
	buffer_advance(buffer_get(bi[0]), -14);
	ck_assert_int_eq(buffer_get(bi[0])->current_data, -14);
	buffer_free(bi, 3);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}
END_TEST

START_TEST(test_exhaustion_and_chains)
{
	tn_buffers(100);
	struct buffer_pool_stats st;
	ck_assert_int_eq(buffer_pool_stats(0, &st), 0);
	uint32_t total = st.n_total;
	ck_assert_uint_eq(total, 100);
	uint32_t *bi = calloc(total + 10, sizeof(uint32_t));
	ck_assert_uint_eq(buffer_alloc(bi, total + 10, -1), total);
	ck_assert_uint_eq(buffer_alloc(bi + total, 1, -1), 0);
	ck_assert_uint_eq(buffer_n_in_use(), total);
	/* chain 1 -> 2 -> 3 behind bi[0]; freeing the head frees the chain */
	for (int i = 0; i < 3; i++) {
		struct buffer *b = buffer_get(bi[i]);
		b->flags |= BUFFER_F_NEXT_PRESENT;
		b->next_buffer = bi[i + 1];
	}
	buffer_free(bi, 1);
	buffer_free(bi + 4, total - 4);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	uint32_t from = buffer_from_bytes("\x01\x02\x03", 3, -1);
	ck_assert_uint_ne(from, BUFFER_INVALID);
	ck_assert_mem_eq(buffer_data(buffer_get(from)), "\x01\x02\x03", 3);
	ck_assert_uint_eq(buffer_get(from)->current_length, 3);
	buffer_free(&from, 1);
	free(bi);
	buffer_main_free();
}
END_TEST

struct churn {
	uint64_t ops;
	uint32_t seed;
	uint32_t held_at_pause;
	pthread_barrier_t *pause;
};

/* Random-size bulk alloc/free; half-way, pause holding a known count so the
 * control thread can check that the books balance while buffers are spread
 * over the pool, two caches and two holders. */
static void *churn_main(void *arg)
{
	struct churn *c = arg;
	uint32_t held[600], n_held = 0;
	ck_assert_int_ge(buffer_thread_register(), 0);
	for (uint64_t op = 0; op < c->ops; op++) {
		uint32_t k = 1 + rand_r(&c->seed) % 256;
		if (n_held + k <= ARRAY_LEN(held) && (rand_r(&c->seed) & 1))
			n_held += buffer_alloc(held + n_held, k, -1);
		else {
			k = MIN(k, n_held);
			buffer_free(held + n_held - k, k);
			n_held -= k;
		}
		if (op == c->ops / 2) {
			c->held_at_pause = n_held;
			pthread_barrier_wait(c->pause);
			pthread_barrier_wait(c->pause);
		}
	}
	buffer_free(held, n_held);
	buffer_thread_unregister();
	return NULL;
}

START_TEST(test_accounting_two_threads)
{
	tn_buffers(4096);
	pthread_barrier_t pause;
	pthread_barrier_init(&pause, NULL, 3);
	struct churn c[2] = { { 1500000, 1, 0, &pause }, { 1500000, 2, 0, &pause } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, churn_main, &c[i]);
	pthread_barrier_wait(&pause);
	struct buffer_pool_stats st;
	buffer_pool_stats(0, &st);
	ck_assert_uint_eq(st.n_in_use, c[0].held_at_pause + c[1].held_at_pause);
	ck_assert_uint_eq(st.n_free_pool + st.n_cached + st.n_in_use, st.n_total);
	ck_assert_uint_ge(st.n_caches, 2);
	pthread_barrier_wait(&pause);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	buffer_pool_stats(0, &st);
	ck_assert_uint_eq(st.n_in_use, 0);
	ck_assert_uint_eq(st.n_cached, 0);
	ck_assert_uint_eq(st.n_free_pool, st.n_total);
	pthread_barrier_destroy(&pause);
	buffer_main_free();
}
END_TEST

/* Scribble over every field buffer_reset defines. */
static void scribble(uint32_t bi)
{
	struct buffer *b = buffer_get(bi);
	b->current_data = -14;
	b->current_length = 60;
	b->flags = BUFFER_F_TRACED | BUFFER_F_FLOW_HASH;
	b->next_buffer = 123;
	b->total_length_not_including_first = 7;
	b->trace_handle = 5;
	b->error = 3;
	b->l2_len = 14;
}

static void assert_fresh(uint32_t bi)
{
	const struct buffer *b = buffer_get(bi);
	ck_assert_int_eq(b->current_data, 0);
	ck_assert_uint_eq(b->current_length, 0);
	ck_assert_uint_eq(b->flags, 0);
	ck_assert_uint_eq(b->next_buffer, BUFFER_INVALID);
	ck_assert_uint_eq(b->total_length_not_including_first, 0);
	ck_assert_uint_eq(b->trace_handle, 0);
	ck_assert_uint_eq(b->error, 0);
	ck_assert_uint_eq(b->l2_len, 0);
	ck_assert_uint_eq(b->pool_index, 0);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Allocate n (+1 chained behind the sixth), scribble, free, allocate n + 1
 * again: the same buffers come back (a thread's cache and the pool are both
 * last in, first out), every one of them in the fresh state. */
static void reuse_round(uint32_t n)
{
	uint32_t bi[16], again[16];
	ck_assert_uint_le(n + 1, ARRAY_LEN(bi));
	ck_assert_uint_eq(buffer_alloc(bi, n + 1, -1), n + 1);
	for (uint32_t i = 0; i <= n; i++)
		scribble(bi[i]);
	struct buffer *head = buffer_get(bi[5]);
	head->flags |= BUFFER_F_NEXT_PRESENT;
	head->next_buffer = bi[n];
	buffer_free(bi, n);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	ck_assert_uint_eq(buffer_alloc(again, n + 1, -1), n + 1);
	qsort(bi, n + 1, sizeof(bi[0]), cmp_u32);
	qsort(again, n + 1, sizeof(again[0]), cmp_u32);
	ck_assert_mem_eq(bi, again, (n + 1) * sizeof(bi[0]));
	for (uint32_t i = 0; i <= n; i++)
		assert_fresh(again[i]);
	buffer_free(again, n + 1);
}

START_TEST(test_reset_on_reuse)
{
	tn_buffers(1000);
	/* No cache: straight to and from the pool, one by one. */
	reuse_round(9);
	/* A cache: four at a time, a turn with a chain, a tail of one. */
	ck_assert_int_ge(buffer_thread_register(), 0);
	reuse_round(9);
	reuse_round(12);
	buffer_thread_unregister();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}
END_TEST

/* A thread's cache is a stack of indices: what buffer_free_reset gave
 * back, buffer_alloc hands out again in the same order, for bursts of 32
 * (the constant-size copy) and of other sizes alike, and a refill from the
 * pool (alloc_refill, out of line) still fills the whole request. */
START_TEST(test_alloc_burst_order)
{
	tn_buffers(2048);
	ck_assert_int_ge(buffer_thread_register(), 0);
	static uint32_t a[96], b[96];
	ck_assert_uint_eq(buffer_alloc(a, 96, -1), 96);
	static const uint32_t sizes[] = { 32, 31, 33 };
	for (uint32_t k = 0; k < 3; k++) {
		buffer_free_reset(a, sizes[k]);
		ck_assert_uint_eq(buffer_alloc(b, sizes[k], -1), sizes[k]);
		ck_assert_mem_eq(a, b, sizes[k] * sizeof(uint32_t));
	}
	buffer_free(a, 96);
	/* Drain the cache past its count: the refill serves all of a burst. */
	static uint32_t big[1024];
	for (uint32_t k = 0; k < 1024; k += 32)
		ck_assert_uint_eq(buffer_alloc(big + k, 32, -1), 32);
	ck_assert_uint_eq(buffer_n_in_use(), 1024);
	buffer_free(big, 1024);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_thread_unregister();
	buffer_main_free();
}
END_TEST

/* buffer_free_reset: buffers the caller reset go back by index only (with
 * a cache: the headers untouched, the cache spilling to the pool past its
 * mark as buffer_free's does); without a cache, as buffer_free (reset
 * again). Every buffer comes back, in the fresh state, none twice. */
START_TEST(test_free_reset)
{
	enum { N = 1100 };
	tn_buffers(N);
	static uint32_t bi[N], again[N];
	/* Without a cache: a scribbled header is reset by the fallback. */
	ck_assert_uint_eq(buffer_alloc(bi, 1, -1), 1);
	scribble(bi[0]);
	buffer_free_reset(bi, 1);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	ck_assert_uint_eq(buffer_alloc(again, 1, -1), 1);
	ck_assert_uint_eq(again[0], bi[0]);
	assert_fresh(again[0]);
	buffer_free(again, 1);

	ck_assert_int_ge(buffer_thread_register(), 0);
	for (uint32_t k = 0; k < N; k += 256)
		ck_assert_uint_eq(buffer_alloc(bi + k, MIN(256u, N - k), -1), MIN(256u, N - k));
	ck_assert_uint_eq(buffer_n_in_use(), N);
	/* The header is not touched on this path: a marker the caller left
	 * in a field reset does not cover stays (and is the caller's). */
	buffer_get(bi[0])->rx_if = 77;
	/* Bursts of 32 (past the cache's spill mark: 1100 > 768), one of 300
	 * (more than a batch: buffer_free's path), the rest. */
	uint32_t off = 0;
	for (; off + 32 <= 700; off += 32)
		buffer_free_reset(bi + off, 32);
	buffer_free_reset(bi + off, 300);
	off += 300;
	buffer_free_reset(bi + off, N - off);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	struct buffer_pool_stats st;
	ck_assert_int_eq(buffer_pool_stats(0, &st), 0);
	ck_assert_uint_lt(st.n_cached, BUFFER_CACHE_MAX + BUFFER_CACHE_BATCH);
	ck_assert_uint_eq(buffer_get(bi[0])->rx_if, 77);
	/* Every buffer of the pool, in allocations the cache serves. */
	ck_assert_uint_eq(st.n_total, N);
	for (off = 0; off < N; off += 256)
		ck_assert_uint_eq(buffer_alloc(again + off, MIN(256u, N - off), -1), MIN(256u, N - off));
	qsort(bi, N, sizeof(bi[0]), cmp_u32);
	qsort(again, N, sizeof(again[0]), cmp_u32);
	ck_assert_mem_eq(bi, again, sizeof(bi));
	for (uint32_t i = 0; i < N; i++) {
		ck_assert(i == 0 || again[i] != again[i - 1]);
		assert_fresh(again[i]);
	}
	buffer_free(again, N);
	buffer_thread_unregister();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("buffer");
	TCase *tc = tcase_create("pool");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_layout_and_index);
	tcase_add_test(tc, test_exhaustion_and_chains);
	tcase_add_test(tc, test_reset_on_reuse);
	tcase_add_test(tc, test_free_reset);
	tcase_add_test(tc, test_alloc_burst_order);
	tcase_add_test(tc, test_accounting_two_threads);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
