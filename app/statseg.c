/* The stats segment's writer (app/statseg.h): a memfd laid out as
 * base/statseg.h says, its directory rebuilt when what it describes
 * changed, its values copied from the counters the datapath already keeps.
 *
 * Why a copier and not counters placed in the segment (VPP's way): the
 * datapath's counters (per-queue dev_counters, node runtimes, error counts)
 * are laid out for the datapath, on lines one thread writes; moving them
 * into the segment would change every allocation that holds them and the
 * code of the nodes, and a re-layout would need the barrier. A copier on a
 * control thread costs the datapath nothing (bench/io and bench/ip4 run
 * the same instructions per packet) at the price of values up to one
 * update-interval old. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "app/statseg.h"
#include "app/statseg_private.h"
#include "base/statseg.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/dist/dist_graph.h"
#include "sched/timer.h"

/* Interfaces deleted so far: an index reused between two passes is a
 * different interface, which the shape alone might not tell. */
static atomic_uint_fast64_t n_deletes;

static void count_delete(uint32_t if_index)
{
	(void)if_index;
	atomic_fetch_add(&n_deletes, 1);
}

static void __attribute__((constructor)) statseg_hooks(void)
{
	dev_on_delete(count_delete);
}

/* ---- words ---- */

/* Release: a reader that sees this value sees in_progress as it was set
 * before it (docs/stats-segment.md, "Consistency"). */
static inline void put(struct statseg_writer *w, uint64_t off, uint64_t v)
{
	__atomic_store_n((uint64_t *)(void *)(w->base + off), v, __ATOMIC_RELEASE);
}

static void put_words(struct statseg_writer *w, uint64_t off, const void *src, size_t bytes)
{
	const uint8_t *p = src;
	for (size_t i = 0; i < bytes; i += 8) {
		uint64_t v;
		memcpy(&v, p + i, 8);
		put(w, off + i, v);
	}
}

void statseg_put_elem(struct statseg_writer *w, uint32_t ent, uint32_t i, uint32_t j, uint32_t k, uint64_t v)
{
	if (ent == NONE)
		return;
	const struct statseg_entry *e = &w->dir[ent];
	uint64_t words = statseg_elem_words(e->type);
	put(w, e->offset + (((uint64_t)i * e->dims[1] + j) * words + k) * 8, v);
}

void statseg_put_label(struct statseg_writer *w, uint32_t ent, uint32_t i, const char *s)
{
	if (ent == NONE)
		return;
	char buf[STATSEG_LABEL_SIZE] = { 0 };
	snprintf(buf, sizeof(buf), "%s", s);
	put_words(w, w->dir[ent].offset + (uint64_t)i * STATSEG_LABEL_SIZE, buf, sizeof(buf));
}

/* ---- the directory ---- */

/* Append an entry whose data takes the next bytes after the others; the
 * offsets are relative to the data area until layout_commit. */
uint32_t statseg_add(struct statseg_writer *w, const char *name, uint32_t type, struct dim d0, struct dim d1)
{
	if (w->n_dir == w->cap_dir) {
		uint32_t cap = w->cap_dir ? 2 * w->cap_dir : 64;
		struct statseg_entry *p = realloc(w->dir, cap * sizeof(*p));
		if (!p) {
			w->overflow = true;
			return NONE;
		}
		w->dir = p;
		w->cap_dir = cap;
	}
	struct statseg_entry *e = &w->dir[w->n_dir];
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->type = type;
	e->dims[0] = d0.n;
	e->dims[1] = d1.n;
	e->dim_labels[0] = d0.labels;
	e->dim_labels[1] = d1.labels;
	snprintf(e->dim_names[0], sizeof(e->dim_names[0]), "%s", d0.name ? d0.name : "");
	snprintf(e->dim_names[1], sizeof(e->dim_names[1]), "%s", d1.name ? d1.name : "");
	e->row_lengths = NONE;
	e->offset = w->data_used;
	uint64_t bytes = type == STATSEG_NAME_VECTOR ? (uint64_t)d0.n * STATSEG_LABEL_SIZE
						     : (uint64_t)d0.n * d1.n * 8 * statseg_elem_words(type);
	w->data_used += ROUND_UP(bytes, 8);
	return w->n_dir++;
}

uint32_t statseg_add_scalar(struct statseg_writer *w, const char *name, uint32_t type)
{
	return statseg_add(w, name, type, ONE, ONE);
}

static void layout_threads(struct statseg_writer *w, const struct shape *s)
{
	struct entries *e = &w->e;
	e->thread_names = statseg_add(w, "/sys/threads/names", STATSEG_NAME_VECTOR, (struct dim){ "thread", s->n_threads, NONE }, ONE);
	struct dim t = { "thread", s->n_threads, e->thread_names };
	e->loops = statseg_add(w, "/sys/threads/loops", STATSEG_COUNTER_VECTOR, t, ONE);
	e->idle_loops = statseg_add(w, "/sys/threads/idle-loops", STATSEG_COUNTER_VECTOR, t, ONE);
	e->heartbeat_age = statseg_add(w, "/sys/threads/heartbeat-age-ns", STATSEG_GAUGE_VECTOR, t, ONE);
	static const char *const times[N_THREAD_TIMES] = { "/sys/threads/busy-clocks", "/sys/threads/idle-clocks",
							   "/sys/threads/sleep-clocks", "/sys/threads/overhead-clocks" };
	for (int k = 0; k < N_THREAD_TIMES; k++)
		e->times[k] = statseg_add(w, times[k], STATSEG_COUNTER_VECTOR, t, ONE);
	e->sleeps = statseg_add(w, "/sys/threads/sleeps", STATSEG_COUNTER_VECTOR, t, ONE);
	e->wake_causes = statseg_add(w, "/sys/threads/wake-causes", STATSEG_NAME_VECTOR,
				     (struct dim){ "cause", GRAPH_WAKE_N, NONE }, ONE);
	e->wakeups = statseg_add(w, "/sys/threads/wakeups", STATSEG_COUNTER_VECTOR, t,
				 (struct dim){ "cause", GRAPH_WAKE_N, e->wake_causes });
	e->tsc_hz = statseg_add_scalar(w, "/sys/tsc-hz", STATSEG_SCALAR_GAUGE);
	static const char *const timers[N_TIMER_COUNTERS] = { "/timers/armed", "/timers/arms", "/timers/cancels",
							      "/timers/expiries", "/timers/late-over-tick" };
	for (int k = 0; k < N_TIMER_COUNTERS; k++)
		e->timers[k] = statseg_add(w, timers[k], k ? STATSEG_COUNTER_VECTOR : STATSEG_GAUGE_VECTOR, t, ONE);
}

static const char *const driver_names[N_DRIVER_COUNTERS] = {
	"/if/driver/rx-packets", "/if/driver/rx-bytes",   "/if/driver/rx-dropped", "/if/driver/rx-errors",
	"/if/driver/tx-packets", "/if/driver/tx-bytes",   "/if/driver/tx-dropped",
};

static void layout_interfaces(struct statseg_writer *w, const struct shape *s)
{
	struct entries *e = &w->e;
	e->if_names = statseg_add(w, "/if/names", STATSEG_NAME_VECTOR, (struct dim){ "interface", s->n_ifs, NONE }, ONE);
	struct dim i = { "interface", s->n_ifs, e->if_names };
	struct dim rq = { "queue", s->max_rxq, NONE }, tq = { "queue", s->max_txq, NONE };
	e->rx_queues = statseg_add(w, "/if/rx-queues", STATSEG_GAUGE_VECTOR, i, ONE);
	e->tx_queues = statseg_add(w, "/if/tx-queues", STATSEG_GAUGE_VECTOR, i, ONE);
	e->rx = statseg_add(w, "/if/rx", STATSEG_COMBINED_VECTOR, i, rq);
	e->rx_dropped = statseg_add(w, "/if/rx-dropped", STATSEG_COUNTER_VECTOR, i, rq);
	e->rx_errors = statseg_add(w, "/if/rx-errors", STATSEG_COUNTER_VECTOR, i, rq);
	e->tx = statseg_add(w, "/if/tx", STATSEG_COMBINED_VECTOR, i, tq);
	e->tx_dropped = statseg_add(w, "/if/tx-dropped", STATSEG_COUNTER_VECTOR, i, tq);
	uint32_t per_rxq[] = { e->rx, e->rx_dropped, e->rx_errors }, per_txq[] = { e->tx, e->tx_dropped };
	for (size_t k = 0; !w->overflow && k < ARRAY_LEN(per_rxq); k++)
		w->dir[per_rxq[k]].row_lengths = e->rx_queues;
	for (size_t k = 0; !w->overflow && k < ARRAY_LEN(per_txq); k++)
		w->dir[per_txq[k]].row_lengths = e->tx_queues;
	for (uint32_t k = 0; k < N_DRIVER_COUNTERS; k++)
		e->driver[k] = statseg_add(w, driver_names[k], STATSEG_COUNTER_VECTOR, i, ONE);
	e->admin_up = statseg_add(w, "/if/admin-up", STATSEG_GAUGE_VECTOR, i, ONE);
	e->link_up = statseg_add(w, "/if/link-up", STATSEG_GAUGE_VECTOR, i, ONE);
	e->link_speed = statseg_add(w, "/if/link-speed-mbps", STATSEG_GAUGE_VECTOR, i, ONE);
}

static void layout_nodes(struct statseg_writer *w, const struct shape *s, struct graph *g)
{
	static const char *const names[4] = { "/node/calls", "/node/vectors", "/node/suspends", "/node/clocks" };
	struct entries *e = &w->e;
	e->node_names = statseg_add(w, "/node/names", STATSEG_NAME_VECTOR, (struct dim){ "node", s->n_nodes, NONE }, ONE);
	struct dim t = { "thread", s->n_threads, w->e.thread_names }, n = { "node", s->n_nodes, e->node_names };
	for (int k = 0; k < 4; k++)
		e->node[k] = statseg_add(w, names[k], STATSEG_COUNTER_VECTOR, t, n);
	e->err0 = w->n_dir; /* one counter per thread, like the runtimes */
	for (uint32_t i = 0; i < s->n_errors; i++) {
		uint32_t node;
		const char *reason = "unknown";
		char name[STATSEG_NAME_SIZE];
		graph_error_info(g, i, &node, &reason);
		snprintf(name, sizeof(name), "/err/%s/%s", graph_node_reg(g, node)->name, reason);
		statseg_add(w, name, STATSEG_COUNTER_VECTOR, t, ONE);
	}
}

/* The distributor's counters per worker, counters first then gauges. */
static const char *const dist_names[N_DIST_COUNTERS] = {
	"/dist/handed", "/dist/matched", "/dist/returned", "/dist/migrations", "/dist/drops",
	"/dist/polled", "/dist/in-flight", "/dist/backlog", "/dist/flows",
};

static void layout_dist(struct statseg_writer *w, const struct shape *s)
{
	struct dim wk = { "worker", s->n_dist_workers, NONE };
	for (uint32_t k = 0; k < N_DIST_COUNTERS; k++)
		w->e.dist[k] = s->n_dist_workers
				       ? statseg_add(w, dist_names[k], k < 6 ? STATSEG_COUNTER_VECTOR : STATSEG_GAUGE_VECTOR, wk, ONE)
				       : NONE;
}

static void fill_dist(struct statseg_writer *w, const struct shape *s)
{
	for (uint32_t i = 0; i < s->n_dist_workers; i++) {
		struct dist_worker_stats st;
		if (dist_worker_stats_total(s->dist, i, &st))
			continue;
		const uint64_t v[N_DIST_COUNTERS] = { st.handed, st.matched,   st.returned, st.migrations, st.drops,
						      st.polled, st.in_flight, st.backlog,  st.flows };
		for (uint32_t k = 0; k < N_DIST_COUNTERS; k++)
			statseg_put_elem(w, w->e.dist[k], i, 0, 0, v[k]);
	}
}

static void layout_pools(struct statseg_writer *w, const struct shape *s)
{
	static const char *const what[4] = { "total", "free", "cached", "in-use" };
	w->e.pool0 = w->n_dir;
	for (uint32_t p = 0; p < s->n_pools; p++)
		for (int k = 0; k < 4; k++) {
			char name[STATSEG_NAME_SIZE];
			snprintf(name, sizeof(name), "/buffer/pool%u/%s", p, what[k]);
			statseg_add_scalar(w, name, STATSEG_SCALAR_GAUGE);
		}
}

/* ---- the shape ---- */

static void shape_get(struct graph *g, struct shape *s)
{
	memset(s, 0, sizeof(*s));
	s->n_threads = graph_n_threads(g);
	s->n_nodes = graph_n_nodes(g);
	s->n_errors = graph_n_errors(g);
	struct buffer_pool_stats st;
	while (buffer_pool_stats(s->n_pools, &st) == 0)
		s->n_pools++;
	s->max_rxq = s->max_txq = 1;
	struct device *d;
	DEV_FOREACH(d) {
		s->devs[d->index].dev = d;
		s->devs[d->index].n_rx = d->n_rx_queues;
		s->devs[d->index].n_tx = d->n_tx_queues;
		memcpy(s->devs[d->index].name, d->name, sizeof(d->name));
		s->n_ifs = d->index + 1;
		s->max_rxq = MAX(s->max_rxq, d->n_rx_queues);
		s->max_txq = MAX(s->max_txq, d->n_tx_queues);
	}
	s->n_deletes = atomic_load(&n_deletes);
	statseg_sched_shape(&s->sched);
	statseg_counters_shape(g, &s->counters);
	s->dist = dist_attached();
	if (s->dist) {
		struct dist_stats ds;
		dist_stats(s->dist, &ds);
		s->n_dist_workers = ds.n_workers;
	}
}

/* ---- values ---- */

static void fill_names(struct statseg_writer *w, const struct shape *s, struct graph *g)
{
	for (uint32_t t = 0; t < s->n_threads; t++) {
		struct graph_thread_info ti;
		statseg_put_label(w, w->e.thread_names, t, graph_thread_info(g, t, &ti) == 0 ? ti.name : "");
	}
	for (uint32_t c = 0; c < GRAPH_WAKE_N; c++)
		statseg_put_label(w, w->e.wake_causes, c, graph_wake_cause_name((enum graph_wake_cause)c));
	for (uint32_t i = 0; i < s->n_ifs; i++) {
		statseg_put_label(w, w->e.if_names, i, s->devs[i].name);
		statseg_put_elem(w, w->e.rx_queues, i, 0, 0, s->devs[i].n_rx);
		statseg_put_elem(w, w->e.tx_queues, i, 0, 0, s->devs[i].n_tx);
	}
	for (uint32_t n = 0; n < s->n_nodes; n++)
		statseg_put_label(w, w->e.node_names, n, graph_node_reg(g, n)->name);
	statseg_put_elem(w, w->e.tsc_hz, 0, 0, 0, (uint64_t)cpu_ticks_per_second());
	statseg_sched_names(w, s);
	statseg_lcp_names(w);
	statseg_counters_names(w, &s->counters);
}

/* A thread's timer service (none before timer_services_install: zeros). */
static void fill_timers(struct statseg_writer *w, uint32_t t, const struct timer_service *ts)
{
	struct timer_stats st = { 0 };
	if (ts)
		timer_stats(ts, &st);
	uint64_t late = 0; /* buckets 3.. are a tick late or more */
	for (uint32_t b = 3; b < TIMER_LATE_BUCKETS; b++)
		late += st.late[b];
	const uint64_t v[N_TIMER_COUNTERS] = { st.armed_total, st.arms, st.cancels, st.expiries, late };
	for (uint32_t k = 0; k < N_TIMER_COUNTERS; k++)
		statseg_put_elem(w, w->e.timers[k], t, 0, 0, v[k]);
}

static void fill_threads(struct statseg_writer *w, const struct shape *s, struct graph *g)
{
	for (uint32_t t = 0; t < s->n_threads; t++) {
		struct graph_thread_info ti;
		if (graph_thread_info(g, t, &ti))
			continue;
		statseg_put_elem(w, w->e.loops, t, 0, 0, ti.loops);
		statseg_put_elem(w, w->e.idle_loops, t, 0, 0, ti.idle_loops);
		statseg_put_elem(w, w->e.heartbeat_age, t, 0, 0, ti.heartbeat_age_ns);
		statseg_put_elem(w, w->e.sleeps, t, 0, 0, ti.sleeps);
		for (uint32_t c = 0; c < GRAPH_WAKE_N; c++)
			statseg_put_elem(w, w->e.wakeups, t, c, 0, ti.wakeups[c]);
		struct graph_thread_time tt;
		if (graph_thread_time_total(g, t, &tt) == 0) {
			const uint64_t v[N_THREAD_TIMES] = { tt.busy, tt.idle, tt.sleep, tt.overhead };
			for (int k = 0; k < N_THREAD_TIMES; k++)
				statseg_put_elem(w, w->e.times[k], t, 0, 0, v[k]);
		}
		fill_timers(w, t, timer_service_of(graph_thread_get(g, t)));
	}
}

/* The raw counters: dev_counters_get subtracts what `clear interfaces`
 * saw, the segment does not (exported counters only go up). */
static void fill_interface(struct statseg_writer *w, struct device *d)
{
	const struct entries *e = &w->e;
	uint32_t i = d->index;
	for (uint16_t q = 0; q < d->n_rx_queues; q++) {
		const struct dev_counters *c = &d->rxq[q].c;
		statseg_put_elem(w, e->rx, i, q, 0, stat_read(&c->rx_packets));
		statseg_put_elem(w, e->rx, i, q, 1, stat_read(&c->rx_bytes));
		statseg_put_elem(w, e->rx_dropped, i, q, 0, stat_read(&c->rx_dropped));
		statseg_put_elem(w, e->rx_errors, i, q, 0, stat_read(&c->rx_errors));
	}
	for (uint16_t q = 0; q < d->n_tx_queues; q++) {
		const struct dev_counters *c = &d->txq[q].c;
		statseg_put_elem(w, e->tx, i, q, 0, stat_read(&c->tx_packets));
		statseg_put_elem(w, e->tx, i, q, 1, stat_read(&c->tx_bytes));
		statseg_put_elem(w, e->tx_dropped, i, q, 0, stat_read(&c->tx_dropped));
	}
	struct dev_counters drv = { 0 };
	if (d->ops->stats)
		d->ops->stats(d, &drv);
	const uint64_t v[N_DRIVER_COUNTERS] = { drv.rx_packets, drv.rx_bytes, drv.rx_dropped, drv.rx_errors,
						drv.tx_packets, drv.tx_bytes, drv.tx_dropped };
	for (uint32_t k = 0; k < N_DRIVER_COUNTERS; k++)
		statseg_put_elem(w, e->driver[k], i, 0, 0, v[k]);
	struct dev_link link;
	dev_link_get(d, &link);
	statseg_put_elem(w, e->admin_up, i, 0, 0, d->admin_up);
	statseg_put_elem(w, e->link_up, i, 0, 0, link.up);
	statseg_put_elem(w, e->link_speed, i, 0, 0, link.speed_mbps);
}

static void fill_values(struct statseg_writer *w, const struct shape *s, struct graph *g)
{
	fill_threads(w, s, g);
	struct device *d;
	DEV_FOREACH(d)
		fill_interface(w, d);
	for (uint32_t t = 0; t < s->n_threads; t++)
		for (uint32_t n = 0; n < s->n_nodes; n++) {
			struct node_stats st;
			if (graph_node_stats_total(g, t, n, &st))
				continue;
			const uint64_t v[4] = { st.calls, st.vectors, st.suspends, st.clocks };
			for (int k = 0; k < 4; k++)
				statseg_put_elem(w, w->e.node[k], t, n, 0, v[k]);
		}
	for (uint32_t i = 0; i < s->n_errors; i++)
		for (uint32_t t = 0; t < s->n_threads; t++)
			statseg_put_elem(w, w->e.err0 + i, t, 0, 0, graph_error_count_thread(g, t, i));
	for (uint32_t p = 0; p < s->n_pools; p++) {
		struct buffer_pool_stats st;
		if (buffer_pool_stats(p, &st))
			continue;
		const uint64_t v[4] = { st.n_total, st.n_free_pool, st.n_cached, st.n_in_use };
		for (uint32_t k = 0; k < 4; k++)
			statseg_put_elem(w, w->e.pool0 + 4 * p + k, 0, 0, 0, v[k]);
	}
	fill_dist(w, s);
	statseg_sched_fill(w, s, g);
	statseg_lcp_fill(w);
	statseg_counters_fill(w, &s->counters);
}

/* ---- passes ---- */

#define HDR(field) offsetof(struct statseg_header, field)

static int layout(struct statseg_writer *w, const struct shape *s, struct graph *g)
{
	w->n_dir = 0;
	w->data_used = 0;
	w->overflow = false;
	layout_threads(w, s);
	layout_interfaces(w, s);
	layout_nodes(w, s, g);
	layout_pools(w, s);
	layout_dist(w, s);
	statseg_sched_layout(w, s);
	statseg_lcp_layout(w);
	statseg_counters_layout(w, &s->counters);
	uint64_t data = ROUND_UP(sizeof(struct statseg_header) + (uint64_t)w->n_dir * sizeof(struct statseg_entry), 64);
	if (w->overflow || data + w->data_used > w->size)
		return -ENOSPC;
	for (uint32_t i = 0; i < w->n_dir; i++)
		w->dir[i].offset += data;
	return 0;
}

/* A new directory: readers that copied any of this retry (in_progress is
 * raised first, the epoch bumped last). Every data word is rewritten, so a
 * row reused by another interface starts from that interface's values. */
static int rebuild(struct statseg_writer *w, const struct shape *s, struct graph *g)
{
	__atomic_exchange_n(&w->h->in_progress, 1, __ATOMIC_SEQ_CST);
	int rc = layout(w, s, g);
	if (rc)
		w->n_dir = 0;
	uint64_t data = sizeof(struct statseg_header);
	put(w, HDR(n_entries), w->n_dir);
	put(w, HDR(dir_offset), data);
	if (w->n_dir) {
		put_words(w, data, w->dir, (size_t)w->n_dir * sizeof(struct statseg_entry));
		uint64_t start = w->dir[0].offset;
		for (uint64_t off = start; off < start + w->data_used; off += 8)
			put(w, off, 0);
		fill_names(w, s, g);
		fill_values(w, s, g);
	}
	put(w, HDR(epoch), w->h->epoch + 1);
	put(w, HDR(in_progress), 0);
	return rc;
}

int statseg_writer_update(struct statseg_writer *w, struct graph *g)
{
	struct shape now;
	shape_get(g, &now);
	int rc = 0;
	if (!w->have_shape || memcmp(&now, &w->cur, sizeof(now)) != 0) {
		rc = rebuild(w, &now, g);
		memcpy(&w->cur, &now, sizeof(now));
		w->have_shape = true;
		if (rc && !w->full_logged)
			base_log("statseg", "the directory does not fit in %zu bytes: statseg { size } larger", w->size);
		w->full_logged = rc != 0;
	} else if (w->n_dir) {
		fill_values(w, &now, g);
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	put(w, HDR(update_ns), (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
	put(w, HDR(updates), w->h->updates + 1);
	return rc;
}

/* ---- the segment ---- */

struct statseg_writer *statseg_writer_create(size_t size, uint64_t interval_ns, char *err, size_t errlen)
{
	struct statseg_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "statseg: out of memory");
		return NULL;
	}
	w->size = ROUND_UP(size, 4096);
	w->fd = memfd_create("sluice-stats", MFD_CLOEXEC);
	if (w->fd < 0 || ftruncate(w->fd, (off_t)w->size) < 0 ||
	    (w->base = mmap(NULL, w->size, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, 0)) == MAP_FAILED) {
		snprintf(err, errlen, "statseg: a segment of %zu bytes: %s", w->size, strerror(errno));
		w->base = NULL;
		statseg_writer_free(w);
		return NULL;
	}
	w->h = (struct statseg_header *)(void *)w->base;
	w->h->magic = STATSEG_MAGIC;
	w->h->version = STATSEG_VERSION;
	w->h->entry_size = sizeof(struct statseg_entry);
	w->h->size = w->size;
	w->h->dir_offset = sizeof(struct statseg_header);
	w->h->interval_ns = interval_ns;
	w->h->writer_pid = (uint64_t)getpid();
	return w;
}

void statseg_writer_free(struct statseg_writer *w)
{
	if (!w)
		return;
	if (w->base)
		munmap(w->base, w->size);
	if (w->fd >= 0)
		close(w->fd);
	free(w->dir);
	free(w);
}

int statseg_writer_reader_fd(const struct statseg_writer *w)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", w->fd);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
