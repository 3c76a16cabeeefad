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

int main(void)
{
	Suite *s = suite_create("buffer");
	TCase *tc = tcase_create("pool");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_layout_and_index);
	tcase_add_test(tc, test_exhaustion_and_chains);
	tcase_add_test(tc, test_accounting_two_threads);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
