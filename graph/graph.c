/* Node registry, graph build, per-thread clones, arcs and counters. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/graph_private.h"

#define REGISTRY_MAX 512

/* error-drop is the engine's own: listed here rather than through a
 * constructor, so that linking the engine as a plain static library keeps it. */
extern const struct node_reg error_drop_node;
static const struct node_reg *registry[REGISTRY_MAX] = { &error_drop_node };
static uint32_t registry_count = 1;

void node_registry_add(const struct node_reg *reg)
{
	/* Constructors run before main: nowhere to report an overflow but stderr. */
	if (registry_count == REGISTRY_MAX) {
		fprintf(stderr, "sluice: graph: node registry full, '%s' ignored\n", reg->name);
		return;
	}
	registry[registry_count++] = reg;
}

const struct node_reg *node_registry_lookup(const char *name)
{
	for (uint32_t i = 0; i < registry_count; i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

const struct node_reg *node_registry_find(const char *name)
{
	node_templates_expand();
	return node_registry_lookup(name);
}

uint32_t node_registry_count(void)
{
	node_templates_expand();
	return registry_count;
}

const struct node_reg *node_registry_get(uint32_t i)
{
	node_templates_expand();
	return i < registry_count ? registry[i] : NULL;
}

void graph_config_default(struct graph_config *cfg)
{
	cfg->idle_mode = GRAPH_IDLE_SLEEP;
	cfg->idle_max_us = 1000;
	cfg->trace_max = 1024;
	cfg->elog_size = ELOG_SIZE_DEFAULT;
}

struct graph *graph_create(const struct graph_config *cfg, char *err, size_t errlen)
{
	struct graph *g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "graph: out of memory");
		return NULL;
	}
	if (cfg)
		g->cfg = *cfg;
	else
		graph_config_default(&g->cfg);
	if (g->cfg.trace_max == 0)
		g->cfg.trace_max = 1024;
	pthread_mutex_init(&g->barrier_lock, NULL);
	/* Error 0 is kept for buffers dropped without a reason being set. */
	g->n_errors = 1;
	g->created_ticks = cpu_ticks();
	g->runtime_cleared_ticks = g->created_ticks;
	g->drops_log_ticks = (uint64_t)(cpu_ticks_per_second() * GRAPH_ELOG_DROPS_NS / 1e9);
	elog_set_size(g->cfg.elog_size ? g->cfg.elog_size : elog_size()); /* and the log's epoch */
	return g;
}

int graph_node_index(const struct graph *g, const char *name)
{
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (strcmp(g->nodes[i].reg->name, name) == 0)
			return (int)i;
	return -ENOENT;
}

int graph_add_node(struct graph *g, const struct node_reg *reg, char *err, size_t errlen)
{
	if (g->built) {
		snprintf(err, errlen, "graph: cannot add node '%s' after the graph is built", reg->name);
		return -EBUSY;
	}
	if (graph_node_index(g, reg->name) >= 0) {
		snprintf(err, errlen, "graph: node '%s' is registered twice", reg->name);
		return -EEXIST;
	}
	if (reg->n_next > NODE_MAX_NEXT || !reg->fn) {
		snprintf(err, errlen, "graph: node '%s' has %s", reg->name,
			 reg->fn ? "too many next nodes" : "no function");
		return -EINVAL;
	}
	if (g->n_nodes == g->cap_nodes) {
		uint32_t cap = g->cap_nodes ? 2 * g->cap_nodes : 16;
		struct graph_node *n = realloc(g->nodes, cap * sizeof(*n));
		if (!n) {
			snprintf(err, errlen, "graph: out of memory");
			return -ENOMEM;
		}
		g->nodes = n;
		g->cap_nodes = cap;
	}
	struct graph_node *gn = &g->nodes[g->n_nodes];
	memset(gn, 0, sizeof(*gn));
	gn->reg = reg;
	gn->index = g->n_nodes;
	gn->error_base = g->n_errors;
	gn->n_next = reg->n_next;
	gn->fn = reg->fn;
	gn->feature = -1;
	g->n_errors += reg->n_errors;
	return (int)g->n_nodes++;
}

int graph_add_registered(struct graph *g, char *err, size_t errlen)
{
	node_templates_expand();
	for (uint32_t i = 0; i < registry_count; i++) {
		int rv = graph_add_node(g, registry[i], err, errlen);
		if (rv < 0)
			return rv;
	}
	return 0;
}

static int resolve_arcs(struct graph *g, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct graph_node *gn = &g->nodes[i];
		for (uint16_t k = 0; k < gn->n_next; k++) {
			const char *name = gn->reg->next_nodes[k];
			int t = name ? graph_node_index(g, name) : -ENOENT;
			if (t < 0) {
				snprintf(err, errlen, "graph: node '%s' names next node '%s', which does not exist",
					 gn->reg->name, name ? name : "(null)");
				return -ENOENT;
			}
			gn->next_index[k] = t;
		}
	}
	return 0;
}

void graph_thread_resolve_arcs(struct graph *g, struct graph_thread *t)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct node_runtime *rt = &t->rts[i];
		rt->n_next = g->nodes[i].n_next;
		for (uint16_t k = 0; k < rt->n_next; k++)
			rt->next[k] = &t->rts[g->nodes[i].next_index[k]];
	}
}

static int runtime_init(struct graph *g, struct graph_thread *t, uint32_t i, char *err, size_t errlen)
{
	struct node_runtime *rt = &t->rts[i];
	const struct node_reg *reg = g->nodes[i].reg;
	rt->fn = g->nodes[i].fn;
	rt->reg = reg;
	rt->graph = g;
	rt->thread = t;
	rt->thread_index = (uint16_t)t->index;
	rt->node_index = i;
	rt->error_base = g->nodes[i].error_base;
	rt->error_counts = t->error_counts;
	rt->type = (uint8_t)reg->type;
	rt->state = (uint8_t)reg->default_state;
	rt->next = calloc(NODE_MAX_NEXT, sizeof(*rt->next));
	rt->arc_packets = calloc(NODE_MAX_NEXT, sizeof(*rt->arc_packets));
	rt->data = calloc(1, reg->runtime_data_size ? reg->runtime_data_size : 1);
	if (!rt->next || !rt->arc_packets || !rt->data) {
		snprintf(err, errlen, "graph: out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int runtimes_init_nodes(struct graph *g, struct graph_thread *t, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int rv = runtime_init(g, t, i, err, errlen);
		if (rv)
			return rv;
	}
	graph_thread_resolve_arcs(g, t);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct node_reg *reg = g->nodes[i].reg;
		int rv = reg->init ? reg->init(&t->rts[i]) : 0;
		if (rv) {
			snprintf(err, errlen, "graph: node '%s' failed to initialise on thread %u: %s", reg->name,
				 t->index, strerror(-rv));
			return rv;
		}
	}
	return 0;
}

struct graph_thread *graph_thread_alloc(struct graph *g, uint32_t index, char *err, size_t errlen)
{
	struct graph_thread *t = aligned_alloc(64, ROUND_UP(sizeof(*t), 64));
	if (!t)
		goto oom;
	memset(t, 0, sizeof(*t));
	t->graph = g;
	t->index = index;
	t->cpu = -1;
	t->wake_within_ns = UINT64_MAX;
	t->drops_since_ticks = cpu_ticks();
	t->loop_mark = UINT64_MAX; /* no loop yet to count the time from */
	t->epfd = t->wake_fd = t->timer_fd = -1;
	/* A power of two: the FIFO wraps with a mask, not a division per call. */
	uint32_t ready_cap = 1;
	while (ready_cap < g->n_nodes)
		ready_cap <<= 1;
	t->ready_mask = ready_cap - 1;
	size_t rts_size = ROUND_UP(sizeof(struct node_runtime) * (g->n_nodes ? g->n_nodes : 1), 64);
	t->rts = aligned_alloc(64, rts_size);
	t->ready = calloc(ready_cap, sizeof(*t->ready));
	t->error_counts = calloc(g->n_errors ? g->n_errors : 1, sizeof(uint64_t));
	t->rt_base = calloc(g->n_nodes ? g->n_nodes : 1, sizeof(*t->rt_base));
	t->error_base = calloc(g->n_errors ? g->n_errors : 1, sizeof(uint64_t));
	t->drops_logged = calloc(g->n_errors ? g->n_errors : 1, sizeof(uint64_t));
	if (!t->rts || !t->ready || !t->error_counts || !t->rt_base || !t->error_base || !t->drops_logged)
		goto oom;
	memset(t->rts, 0, rts_size);
	if (graph_thread_sleep_init(g, t, err, errlen)) {
		graph_thread_release(t);
		return NULL;
	}
	if (runtimes_init_nodes(g, t, err, errlen)) {
		graph_thread_release(t);
		return NULL;
	}
	graph_thread_update_lists(g, t);
	return t;
oom:
	snprintf(err, errlen, "graph: out of memory creating thread %u", index);
	if (t)
		graph_thread_release(t);
	return NULL;
}

void graph_thread_release(struct graph_thread *t)
{
	if (t->rts) {
		for (uint32_t i = 0; i < t->graph->n_nodes; i++) {
			free(t->rts[i].next);
			free(t->rts[i].arc_packets);
			free(t->rts[i].data);
		}
	}
	for (uint32_t i = 0; i < t->n_frame_chunks; i++)
		free(t->frame_chunks[i]);
	free(t->frame_chunks);
	free(t->inputs);
	free(t->processes);
	free(t->rts);
	free(t->ready);
	free(t->error_counts);
	free(t->rt_base);
	free(t->error_base);
	free(t->drops_logged);
	graph_thread_sleep_release(t);
	free(t);
}

int graph_build(struct graph *g, char *err, size_t errlen)
{
	if (g->built) {
		snprintf(err, errlen, "graph: already built");
		return -EBUSY;
	}
	uint64_t start = graph_elog_build_begin();
	int rv = resolve_arcs(g, err, errlen);
	if (rv == 0)
		rv = graph_features_build(g, err, errlen);
	if (rv)
		return rv;
	g->trace = calloc(g->cfg.trace_max, sizeof(*g->trace));
	if (!g->trace) {
		snprintf(err, errlen, "graph: out of memory for %u trace slots", g->cfg.trace_max);
		return -ENOMEM;
	}
	/* Untouched pages cost nothing until a trace writes them. */
	g->trace_bytes = calloc((size_t)g->cfg.trace_max * TRACE_MAX_RECORDS_PER_PACKET, sizeof(*g->trace_bytes));
	if (!g->trace_bytes) {
		snprintf(err, errlen, "graph: out of memory for %u trace slots", g->cfg.trace_max);
		return -ENOMEM;
	}
	g->trace_cap = g->cfg.trace_max;
	g->built = true;
	struct graph_thread *t = graph_thread_alloc(g, 0, err, errlen);
	if (!t)
		return -ENOMEM;
	g->threads[0] = t;
	g->n_threads = 1;
	atomic_store(&g->n_threads_published, 1);
	t->started = true;
	t->tid = (int)gettid();
	graph_thread_current = t;
	buffer_thread_register();
	buffer_holder_register("frames", graph_frames_holder, g);
	if (graph_elog_build_end(g, start)) {
		snprintf(err, errlen, "graph: out of memory for the event log");
		return -ENOMEM;
	}
	return 0;
}

void graph_destroy(struct graph *g)
{
	if (!g)
		return;
	buffer_holder_unregister(graph_frames_holder, g);
	graph_features_forget(g);
	graph_workers_stop(g);
	if (g->n_threads) {
		struct graph_thread *t0 = g->threads[0];
		graph_dispatch_pending(t0);
		graph_thread_free_pending(t0);
		graph_thread_release(t0);
		if (graph_thread_current == t0)
			graph_thread_current = NULL;
	}
	graph_dtrace_free(g);
	graph_trace_filters_free(g);
	free(g->trace);
	free(g->trace_bytes);
	free(g->error_elog_str);
	free(g->nodes);
	graph_epoll_close_all(g);
	pthread_mutex_destroy(&g->barrier_lock);
	free(g);
}

uint32_t graph_n_nodes(const struct graph *g)
{
	return g->n_nodes;
}

const struct node_reg *graph_node_reg(const struct graph *g, uint32_t node_index)
{
	return node_index < g->n_nodes ? g->nodes[node_index].reg : NULL;
}

struct node_runtime *graph_node_runtime(struct graph *g, uint32_t thread_index, uint32_t node_index)
{
	if (thread_index >= g->n_threads || node_index >= g->n_nodes)
		return NULL;
	return &g->threads[thread_index]->rts[node_index];
}

uint16_t graph_node_n_next(const struct graph *g, uint32_t node_index)
{
	return node_index < g->n_nodes ? g->nodes[node_index].n_next : 0;
}

int graph_node_next(const struct graph *g, uint32_t node_index, uint16_t next_index)
{
	if (node_index >= g->n_nodes || next_index >= g->nodes[node_index].n_next)
		return -ENOENT;
	return g->nodes[node_index].next_index[next_index];
}

int graph_set_next(struct graph *g, uint32_t node_index, uint16_t next_index, const char *target,
		   char *err, size_t errlen)
{
	int t = graph_node_index(g, target);
	if (node_index >= g->n_nodes || next_index >= g->nodes[node_index].n_next || t < 0) {
		snprintf(err, errlen, "graph: cannot point arc %u of node %u to '%s'", next_index, node_index,
			 target);
		return -ENOENT;
	}
	graph_barrier_sync(g);
	g->nodes[node_index].next_index[next_index] = t;
	for (uint32_t i = 0; i < g->n_threads; i++)
		g->threads[i]->rts[node_index].next[next_index] = &g->threads[i]->rts[t];
	graph_barrier_release(g);
	graph_elog_arc(g, node_index, next_index, (uint32_t)t);
	return 0;
}

int graph_add_next(struct graph *g, uint32_t node_index, const char *target, char *err, size_t errlen)
{
	int t = graph_node_index(g, target);
	if (node_index >= g->n_nodes || t < 0) {
		snprintf(err, errlen, "graph: cannot add arc to '%s': no such node", target);
		return -ENOENT;
	}
	struct graph_node *gn = &g->nodes[node_index];
	for (uint16_t k = 0; k < gn->n_next; k++)
		if (gn->next_index[k] == t)
			return k;
	if (gn->n_next == NODE_MAX_NEXT) {
		snprintf(err, errlen, "graph: node '%s' already has %d next nodes", gn->reg->name, NODE_MAX_NEXT);
		return -ENOSPC;
	}
	graph_barrier_sync(g);
	uint16_t k = gn->n_next++;
	gn->next_index[k] = t;
	for (uint32_t i = 0; i < g->n_threads; i++) {
		struct node_runtime *rt = &g->threads[i]->rts[node_index];
		rt->next[k] = &g->threads[i]->rts[t];
		rt->n_next = gn->n_next;
	}
	graph_barrier_release(g);
	graph_elog_arc(g, node_index, k, (uint32_t)t);
	return k;
}

int graph_node_set_state(struct graph *g, uint32_t thread_index, uint32_t node_index, enum node_state st)
{
	if (thread_index >= g->n_threads || node_index >= g->n_nodes)
		return -ENOENT;
	graph_barrier_sync(g);
	g->threads[thread_index]->rts[node_index].state = (uint8_t)st;
	graph_thread_update_lists(g, g->threads[thread_index]);
	graph_barrier_release(g);
	graph_elog_node_state(g, thread_index, node_index, st);
	return 0;
}

uint32_t graph_n_threads(const struct graph *g)
{
	return g->n_threads;
}

struct graph_thread *graph_thread_get(struct graph *g, uint32_t thread_index)
{
	return thread_index < g->n_threads ? g->threads[thread_index] : NULL;
}

int graph_node_stats_total(struct graph *g, uint32_t thread_index, uint32_t node_index, struct node_stats *st)
{
	struct node_runtime *rt = graph_node_runtime(g, thread_index, node_index);
	if (!rt)
		return -ENOENT;
	st->calls = stat_read(&rt->calls);
	st->vectors = stat_read(&rt->vectors);
	st->suspends = stat_read(&rt->suspends);
	st->clocks = stat_read(&rt->clocks);
	return 0;
}

int graph_node_stats(struct graph *g, uint32_t thread_index, uint32_t node_index, struct node_stats *st)
{
	int rc = graph_node_stats_total(g, thread_index, node_index, st);
	if (rc)
		return rc;
	const struct node_stats *b = &g->threads[thread_index]->rt_base[node_index];
	st->calls -= b->calls;
	st->vectors -= b->vectors;
	st->suspends -= b->suspends;
	st->clocks -= b->clocks;
	return 0;
}

uint64_t graph_arc_packets(struct graph *g, uint32_t node_index, uint16_t next_index)
{
	uint64_t n = 0;
	if (node_index >= g->n_nodes || next_index >= NODE_MAX_NEXT)
		return 0;
	for (uint32_t i = 0; i < g->n_threads; i++)
		n += stat_read(&g->threads[i]->rts[node_index].arc_packets[next_index]);
	return n;
}

void graph_clear_runtime(struct graph *g)
{
	graph_barrier_sync(g);
	for (uint32_t i = 0; i < g->n_threads; i++) {
		for (uint32_t k = 0; k < g->n_nodes; k++) {
			struct node_runtime *rt = &g->threads[i]->rts[k];
			graph_node_stats_total(g, i, k, &g->threads[i]->rt_base[k]);
			memset(rt->arc_packets, 0, NODE_MAX_NEXT * sizeof(uint64_t));
		}
		graph_thread_time_total(g, i, &g->threads[i]->time_base);
	}
	g->runtime_cleared_ticks = cpu_ticks();
	/* This very hold is counted at its release, from zero. */
	__atomic_store_n(&g->barrier_holds, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g->barrier_hold_total_ticks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g->barrier_hold_max_ticks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g->barrier_wait_max_ticks, 0, __ATOMIC_RELAXED);
	graph_barrier_release(g);
}

double graph_runtime_seconds(const struct graph *g)
{
	return (double)(cpu_ticks() - g->runtime_cleared_ticks) / cpu_ticks_per_second();
}

uint32_t graph_n_errors(const struct graph *g)
{
	return g->n_errors;
}

int graph_error_info(const struct graph *g, uint32_t error_index, uint32_t *node_index, const char **string)
{
	if (error_index == 0) {
		int drop = graph_node_index(g, "error-drop");
		*node_index = drop >= 0 ? (uint32_t)drop : 0;
		*string = "dropped without a reason";
		return 0;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct graph_node *gn = &g->nodes[i];
		if (error_index >= gn->error_base && error_index < gn->error_base + gn->reg->n_errors) {
			*node_index = i;
			*string = gn->reg->error_strings[error_index - gn->error_base];
			return 0;
		}
	}
	return -ENOENT;
}

uint64_t graph_error_count_thread(struct graph *g, uint32_t thread_index, uint32_t error_index)
{
	if (error_index >= g->n_errors || thread_index >= g->n_threads)
		return 0;
	return stat_read(&g->threads[thread_index]->error_counts[error_index]);
}

uint64_t graph_error_count_total(struct graph *g, uint32_t error_index)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < g->n_threads; i++)
		n += graph_error_count_thread(g, i, error_index);
	return n;
}

uint64_t graph_error_count(struct graph *g, uint32_t error_index)
{
	uint64_t n = graph_error_count_total(g, error_index);
	for (uint32_t i = 0; error_index < g->n_errors && i < g->n_threads; i++)
		n -= g->threads[i]->error_base[error_index];
	return n;
}

uint64_t graph_node_error_count(struct graph *g, uint32_t node_index, uint16_t code)
{
	if (node_index >= g->n_nodes || code >= g->nodes[node_index].reg->n_errors)
		return 0;
	return graph_error_count(g, g->nodes[node_index].error_base + code);
}

void graph_clear_errors(struct graph *g)
{
	graph_barrier_sync(g);
	for (uint32_t i = 0; i < g->n_threads; i++)
		for (uint32_t e = 0; e < g->n_errors; e++)
			g->threads[i]->error_base[e] = stat_read(&g->threads[i]->error_counts[e]);
	graph_barrier_release(g);
}

double graph_ticks_to_seconds(const struct graph *g, uint64_t ticks)
{
	return (double)(int64_t)(ticks - g->created_ticks) / cpu_ticks_per_second();
}
