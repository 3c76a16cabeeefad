/* The stall watchdog: a control thread reading the datapath threads'
 * heartbeats.
 *
 * Why a thread of its own rather than a process node or a timer: a
 * watchdog running on a datapath thread cannot report that thread's own
 * stall, and the main thread is a datapath thread (the rx thread with the
 * distributor). The datapath pays one cycle-counter read and one relaxed
 * store per loop (dispatch.c); the watchdog reads without a lock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "graph/graph_private.h"

static uint64_t ticks_to_ns(uint64_t ticks)
{
	return (uint64_t)((double)ticks / cpu_ticks_per_second() * 1e9);
}

/* Time since t last ended a loop, or 0 when it is not to be judged (not
 * looping, parked at the barrier, asleep in epoll_wait, no loop yet). */
static uint64_t heartbeat_age(struct graph_thread *t, uint64_t now_ticks)
{
	if (!atomic_load(&t->active) || atomic_load(&t->parked) || graph_thread_sleeping(t))
		return 0;
	uint64_t last = __atomic_load_n(&t->last_loop_ticks, __ATOMIC_RELAXED);
	if (!last || (int64_t)(now_ticks - last) <= 0)
		return 0;
	return ticks_to_ns(now_ticks - last);
}

static void judge(struct graph *g, struct graph_thread *t, uint64_t since_ns[])
{
	uint64_t age = heartbeat_age(t, cpu_ticks());
	bool stalled = atomic_load(&t->stalled);
	char name[16];
	graph_thread_name(t->index, name, sizeof(name));
	/* The line first, then the flag: whoever sees the flag finds the line. */
	if (!stalled && age >= g->stall_ns) {
		since_ns[t->index] = time_now_ns() - age;
		base_log("watchdog", "thread %u (%s) stalled: no loop for %.2f s (loops %llu)", t->index, name,
			  (double)age / 1e9, (unsigned long long)stat_read(&t->loops));
		graph_elog_stall(t, age);
		atomic_store(&t->stalled, true);
	} else if (stalled && age < g->stall_ns) {
		base_log("watchdog", "thread %u (%s) recovered after %.2f s (loops %llu)", t->index, name,
			  (double)(time_now_ns() - since_ns[t->index]) / 1e9, (unsigned long long)stat_read(&t->loops));
		graph_elog_recovered(t, time_now_ns() - since_ns[t->index]);
		atomic_store(&t->stalled, false);
	}
}

/* Sleep for period_ns, or less when stop is asked (shutdown must not wait
 * out a quarter of the threshold). True when stop was asked. */
static bool watchdog_wait(struct graph *g, uint64_t period_ns)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	uint64_t ns = (uint64_t)until.tv_nsec + period_ns;
	until.tv_sec += (time_t)(ns / 1000000000ull);
	until.tv_nsec = (long)(ns % 1000000000ull);
	pthread_mutex_lock(&g->watchdog_lock);
	while (!atomic_load(&g->watchdog_stop) &&
	       pthread_cond_timedwait(&g->watchdog_wake, &g->watchdog_lock, &until) == 0)
		;
	pthread_mutex_unlock(&g->watchdog_lock);
	return atomic_load(&g->watchdog_stop);
}

static void *watchdog_main(void *arg)
{
	struct graph *g = arg;
	uint64_t since_ns[GRAPH_MAX_THREADS] = { 0 };
	/* A quarter of the threshold: a stall is reported at most 25% late. */
	uint64_t period = g->stall_ns / 4;
	for (;;) {
		if (watchdog_wait(g, period))
			break;
		uint32_t n = atomic_load(&g->n_threads_published);
		for (uint32_t i = 0; i < n; i++)
			judge(g, g->threads[i], since_ns);
	}
	return NULL;
}

int graph_watchdog_start(struct graph *g, uint64_t stall_ns, char *err, size_t errlen)
{
	if (!stall_ns)
		return 0;
	if (g->watchdog_running) {
		snprintf(err, errlen, "graph: the watchdog runs already");
		return -EBUSY;
	}
	g->stall_ns = stall_ns;
	atomic_store(&g->watchdog_stop, false);
	pthread_mutex_init(&g->watchdog_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->watchdog_wake, &ca);
	pthread_condattr_destroy(&ca);
	int rv = pthread_create(&g->watchdog, NULL, watchdog_main, g);
	if (rv) {
		snprintf(err, errlen, "graph: cannot start the watchdog: %s", strerror(rv));
		pthread_cond_destroy(&g->watchdog_wake);
		pthread_mutex_destroy(&g->watchdog_lock);
		return -rv;
	}
	pthread_setname_np(g->watchdog, "sluice-watchdog");
	g->watchdog_running = true;
	return 0;
}

void graph_watchdog_stop(struct graph *g)
{
	if (!g->watchdog_running)
		return;
	pthread_mutex_lock(&g->watchdog_lock);
	atomic_store(&g->watchdog_stop, true);
	pthread_cond_signal(&g->watchdog_wake);
	pthread_mutex_unlock(&g->watchdog_lock);
	pthread_join(g->watchdog, NULL);
	pthread_cond_destroy(&g->watchdog_wake);
	pthread_mutex_destroy(&g->watchdog_lock);
	g->watchdog_running = false;
	for (uint32_t i = 0; i < g->n_threads; i++)
		atomic_store(&g->threads[i]->stalled, false);
}

uint64_t graph_thread_heartbeat_age(struct graph_thread *t)
{
	return heartbeat_age(t, cpu_ticks());
}
