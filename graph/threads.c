/* Worker threads and the barrier.
 *
 * The barrier is a request flag plus a generation: a datapath thread that
 * sees the flag at its loop boundary records the generation it is parked for
 * and spins until the flag drops. The requester waits until every active
 * thread but itself has recorded the current generation; the generation makes
 * a thread still leaving the previous barrier count as not yet parked.
 */
#include <errno.h>
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "graph/graph_private.h"

static __thread uint32_t barrier_depth;

void graph_barrier_check(struct graph_thread *t)
{
	struct graph *g = t->graph;
	if (likely(!graph_barrier_requested(g)))
		return;
	while (atomic_load_explicit(&g->barrier_request, memory_order_acquire)) {
		unsigned gen = atomic_load_explicit(&g->barrier_gen, memory_order_acquire);
		if (atomic_load_explicit(&t->parked, memory_order_relaxed) != gen)
			atomic_store_explicit(&t->parked, gen, memory_order_release);
		cpu_relax();
	}
	/* Parked time is not stall time: the watchdog judges from here. Nor is
	 * it busy, idle or overhead (loop_time). */
	__atomic_store_n(&t->last_loop_ticks, cpu_ticks(), __ATOMIC_RELAXED);
	t->loop_mark = UINT64_MAX;
	atomic_store_explicit(&t->parked, 0, memory_order_release);
}

/* Waits for every active thread but the caller to park; with skip_stalled,
 * not for one the watchdog calls stalled (checked on every spin, so one that
 * stalls while we wait is let go too). Returns how many were not waited for. */
static uint32_t barrier_sync(struct graph *g, bool skip_stalled)
{
	if (barrier_depth++)
		return 0;
	pthread_mutex_lock(&g->barrier_lock);
	uint64_t start = cpu_ticks();
	unsigned gen = atomic_load(&g->barrier_gen) + 1;
	if (gen == 0)
		gen = 1;
	atomic_store(&g->barrier_gen, gen);
	atomic_store(&g->barrier_request, 1);
	/* A thread asleep in epoll_wait comes at once (graph/sleep.c). */
	graph_kick_all(g, GRAPH_WAKE_CONTROL);
	struct graph_thread *self = graph_thread_current;
	uint32_t n = atomic_load(&g->n_threads_published);
	uint32_t parked = 0, skipped = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct graph_thread *t = g->threads[i];
		if (t == self)
			continue;
		while (atomic_load(&t->active) && atomic_load(&t->parked) != gen) {
			if (skip_stalled && atomic_load(&t->stalled))
				break;
			sched_yield();
		}
		if (!graph_thread_held(g, t))
			skipped++;
		else
			parked += atomic_load(&t->active) != 0;
	}
	/* For the event log: the datapath is held from the request on. */
	g->barrier_start_ticks = start;
	g->barrier_park_ticks = cpu_ticks() - start;
	g->barrier_parked = parked;
	return skipped;
}

void graph_barrier_sync(struct graph *g)
{
	barrier_sync(g, false);
}

uint32_t graph_barrier_sync_unstalled(struct graph *g)
{
	return barrier_sync(g, true);
}

bool graph_thread_held(const struct graph *g, const struct graph_thread *t)
{
	if (t == graph_thread_current || !atomic_load(&t->active) || !graph_barrier_requested(g))
		return true;
	return atomic_load(&t->parked) == atomic_load(&g->barrier_gen);
}

/* A maximum kept with relaxed atomics: one writer (barrier_lock held),
 * readers anywhere. */
static void max_store(uint64_t *m, uint64_t v)
{
	if (v > __atomic_load_n(m, __ATOMIC_RELAXED))
		__atomic_store_n(m, v, __ATOMIC_RELAXED);
}

static void barrier_account(struct graph *g)
{
	uint64_t parked_at = g->barrier_start_ticks + g->barrier_park_ticks;
	uint64_t hold = cpu_ticks() - parked_at;
	__atomic_fetch_add(&g->barrier_holds, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g->barrier_hold_total_ticks, hold, __ATOMIC_RELAXED);
	max_store(&g->barrier_hold_max_ticks, hold);
	max_store(&g->barrier_wait_max_ticks, g->barrier_park_ticks);
}

void graph_barrier_release(struct graph *g)
{
	if (--barrier_depth)
		return;
	barrier_account(g);
	/* What the control plane changed may be for a process node asleep in
	 * its suspend time (a neighbour timeout): let them look at once. */
	atomic_store(&g->process_poke, 1);
	atomic_store(&g->barrier_request, 0);
	graph_elog_barrier(g);
	pthread_mutex_unlock(&g->barrier_lock);
}

void graph_barrier_stats(struct graph *g, struct graph_barrier_stats *st)
{
	double ns = 1e9 / cpu_ticks_per_second();
	st->holds = __atomic_load_n(&g->barrier_holds, __ATOMIC_RELAXED);
	st->hold_total_ns = (uint64_t)((double)__atomic_load_n(&g->barrier_hold_total_ticks, __ATOMIC_RELAXED) * ns);
	st->hold_max_ns = (uint64_t)((double)__atomic_load_n(&g->barrier_hold_max_ticks, __ATOMIC_RELAXED) * ns);
	st->wait_max_ns = (uint64_t)((double)__atomic_load_n(&g->barrier_wait_max_ticks, __ATOMIC_RELAXED) * ns);
}

static void *worker_main(void *arg)
{
	struct graph_thread *t = arg;
	struct graph *g = t->graph;
	graph_thread_current = t;
	elog_thread_bind(t->index); /* its track, made by start_one */
	buffer_thread_register();
	__atomic_store_n(&t->tid, (int)gettid(), __ATOMIC_RELAXED); /* `show threads` reads it */
	char name[16];
	snprintf(name, sizeof(name), "sluice-wk%u", (t->index - 1) % 1000u);
	pthread_setname_np(pthread_self(), name);
	atomic_store(&t->active, 1);
	while (!atomic_load_explicit(&g->workers_stop, memory_order_relaxed)) {
		uint32_t n = graph_thread_loop_once(t);
		graph_thread_idle(t, n);
	}
	graph_dispatch_pending(t);
	graph_thread_free_pending(t);
	buffer_thread_unregister();
	atomic_store(&t->active, 0);
	return NULL;
}

static int start_one(struct graph *g, uint32_t index, int cpu, char *err, size_t errlen)
{
	struct graph_thread *t = graph_thread_alloc(g, index, err, errlen);
	if (!t)
		return -ENOMEM;
	t->cpu = cpu;
	t->numa_node = (cpu >= 0 && numa_available() >= 0) ? numa_node_of_cpu(cpu) : 0;
	if (graph_elog_track(t)) {
		snprintf(err, errlen, "graph: out of memory for worker %u's event log", index - 1);
		graph_thread_release(t);
		return -ENOMEM;
	}
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	g->threads[index] = t;
	atomic_store(&g->n_threads_published, index + 1);
	g->n_threads = index + 1;
	int rv = pthread_create(&t->pthread, &attr, worker_main, t);
	pthread_attr_destroy(&attr);
	if (rv) {
		snprintf(err, errlen, "graph: cannot start worker %u on cpu %d: %s", index - 1, cpu, strerror(rv));
		g->n_threads = index;
		atomic_store(&g->n_threads_published, index);
		g->threads[index] = NULL;
		graph_thread_release(t);
		return -rv;
	}
	t->started = true;
	return 0;
}

int graph_workers_start(struct graph *g, const int *cpus, uint32_t n, char *err, size_t errlen)
{
	if (!g->built || g->n_threads != 1) {
		snprintf(err, errlen, "graph: workers start once, after graph_build");
		return -EINVAL;
	}
	if (n + 1 > GRAPH_MAX_THREADS) {
		snprintf(err, errlen, "graph: %u workers requested, at most %d", n, GRAPH_MAX_THREADS - 1);
		return -EINVAL;
	}
	atomic_store(&g->workers_stop, false);
	for (uint32_t i = 0; i < n; i++) {
		int rv = start_one(g, i + 1, cpus ? cpus[i] : -1, err, errlen);
		if (rv) {
			graph_workers_stop(g);
			return rv;
		}
	}
	return 0;
}

void graph_workers_stop(struct graph *g)
{
	graph_watchdog_stop(g); /* it reads the threads released below */
	if (g->n_threads <= 1)
		return;
	atomic_store(&g->workers_stop, true);
	graph_kick_all(g, GRAPH_WAKE_CONTROL);
	for (uint32_t i = 1; i < g->n_threads; i++)
		if (g->threads[i]->started)
			pthread_join(g->threads[i]->pthread, NULL);
	atomic_store(&g->n_threads_published, 1);
	for (uint32_t i = 1; i < g->n_threads; i++) {
		graph_thread_release(g->threads[i]);
		g->threads[i] = NULL;
	}
	g->n_threads = 1;
}

int graph_main_pin(struct graph *g, int cpu, char *err, size_t errlen)
{
	struct graph_thread *t = g->threads[0];
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int rv = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (rv) {
		snprintf(err, errlen, "graph: cannot pin the main thread to cpu %d: %s", cpu, strerror(rv));
		return -rv;
	}
	/* Pinned after the control threads started (app/main.c), which read
	 * these through graph_thread_info meanwhile: each word is stored once,
	 * whole, and read as such; nothing else hangs on them. */
	__atomic_store_n(&t->cpu, cpu, __ATOMIC_RELAXED);
	__atomic_store_n(&t->numa_node, numa_available() >= 0 ? numa_node_of_cpu(cpu) : 0, __ATOMIC_RELAXED);
	return 0;
}

int graph_thread_info(struct graph *g, uint32_t thread_index, struct graph_thread_info *info)
{
	if (thread_index >= g->n_threads)
		return -ENOENT;
	struct graph_thread *t = g->threads[thread_index];
	memset(info, 0, sizeof(*info));
	graph_thread_name(thread_index, info->name, sizeof(info->name));
	info->cpu = __atomic_load_n(&t->cpu, __ATOMIC_RELAXED); /* graph_main_pin may store them now */
	info->numa_node = __atomic_load_n(&t->numa_node, __ATOMIC_RELAXED);
	info->tid = __atomic_load_n(&t->tid, __ATOMIC_RELAXED);
	info->loops = stat_read(&t->loops);
	info->idle_loops = stat_read(&t->idle_loops);
	uint64_t last = __atomic_load_n(&t->last_loop_ticks, __ATOMIC_RELAXED);
	info->last_loop_ns = last ? (uint64_t)(graph_ticks_to_seconds(g, last) * 1e9) : 0;
	info->heartbeat_age_ns = graph_thread_heartbeat_age(t);
	info->running = atomic_load(&t->active) != 0;
	info->parked = atomic_load(&t->parked) != 0;
	info->stalled = atomic_load(&t->stalled);
	info->asleep = graph_thread_sleeping(t);
	info->sleeps = stat_read(&t->sleeps);
	for (uint32_t c = 0; c < GRAPH_WAKE_N; c++)
		info->wakeups[c] = stat_read(&t->wakeups[c]);
	return 0;
}

int graph_thread_time_total(struct graph *g, uint32_t thread_index, struct graph_thread_time *tt)
{
	if (thread_index >= g->n_threads)
		return -ENOENT;
	struct graph_thread *t = g->threads[thread_index];
	tt->busy = stat_read(&t->busy_ticks);
	tt->idle = stat_read(&t->idle_ticks);
	tt->sleep = stat_read(&t->sleep_ticks);
	tt->overhead = stat_read(&t->overhead_ticks);
	return 0;
}

int graph_thread_time(struct graph *g, uint32_t thread_index, struct graph_thread_time *tt)
{
	int rc = graph_thread_time_total(g, thread_index, tt);
	if (rc)
		return rc;
	const struct graph_thread_time *b = &g->threads[thread_index]->time_base;
	tt->busy -= b->busy;
	tt->idle -= b->idle;
	tt->sleep -= b->sleep;
	tt->overhead -= b->overhead;
	return 0;
}
