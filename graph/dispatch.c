/* Frames and the per-thread dispatch loop.
 *
 * Each node runtime keeps a list of pending frames; the tail stays open for
 * appends, so every predecessor's packets for one node share vectors. Nodes
 * with pending frames wait in a FIFO; a node runs once per frame. The loop:
 * barrier check, poll inputs, dispatch until nothing is pending, process
 * nodes, idle back-off.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph_private.h"

__thread struct graph_thread *graph_thread_current;

struct graph_thread *graph_thread_self(void)
{
	return graph_thread_current;
}

/* Frames come from a per-thread free list, grown in chunks: growth happens
 * while the graph warms up, never once per packet. */
static __attribute__((noinline)) void frame_pool_grow(struct graph_thread *t)
{
	struct frame *chunk = aligned_alloc(64, sizeof(struct frame) * FRAME_POOL_CHUNK);
	void **chunks = realloc(t->frame_chunks, (t->n_frame_chunks + 1) * sizeof(void *));
	if (!chunk || !chunks) {
		/* Nowhere to put packets: the process cannot go on without frames. */
		base_log("graph", "thread %u: out of memory for frames", t->index);
		abort();
	}
	t->frame_chunks = chunks;
	t->frame_chunks[t->n_frame_chunks++] = chunk;
	for (uint32_t i = 0; i < FRAME_POOL_CHUNK; i++) {
		chunk[i].next = t->free_frames;
		t->free_frames = &chunk[i];
	}
	t->n_frames_allocated += FRAME_POOL_CHUNK;
}

static inline struct frame *frame_alloc(struct graph_thread *t)
{
	if (unlikely(!t->free_frames))
		frame_pool_grow(t);
	struct frame *f = t->free_frames;
	t->free_frames = f->next;
	f->next = NULL;
	f->n_vectors = 0;
	f->flags = 0;
	return f;
}

static inline void frame_free(struct graph_thread *t, struct frame *f)
{
	f->next = t->free_frames;
	t->free_frames = f;
}

void graph_frame_free(struct graph_thread *t, struct frame *f)
{
	frame_free(t, f);
}

/* Queue f on target's pending list. The first frame of an empty list also
 * puts target on the ready FIFO: an empty list is what "not scheduled"
 * means, so there is no flag to test and keep. */
static inline void pending_append(struct node_runtime *target, struct frame *f)
{
	struct frame *tail = target->pending_tail;
	f->next = NULL;
	target->pending_tail = f;
	if (tail) {
		tail->next = f;
		return;
	}
	target->pending_head = f;
	struct graph_thread *t = target->thread;
	t->ready[t->ready_tail++ & t->ready_mask] = target;
}

struct frame *node_frame_open(struct node_runtime *target)
{
	struct frame *f = frame_alloc(target->thread);
	pending_append(target, f);
	return f;
}

void node_spec_flush(struct node_runtime *rt)
{
	struct frame *f = container_of(rt->spec_end - FRAME_SIZE, struct frame, buffers[0]);
	uint32_t n = (uint32_t)(rt->spec_to - (f->buffers + f->n_vectors));
	f->n_vectors = (uint16_t)(f->n_vectors + n);
	rt->arc_packets[rt->spec_next] += n;
	rt->spec_to = rt->spec_end = NULL;
}

uint32_t *node_spec_open(struct node_runtime *rt, uint16_t next, uint32_t room)
{
	node_spec_close(rt);
	struct node_runtime *t = rt->next[next];
	struct frame *f = t->pending_tail;
	if (!f || (uint32_t)(FRAME_SIZE - f->n_vectors) < room)
		f = node_frame_open(t);
	rt->spec_next = next;
	rt->spec_to = f->buffers + f->n_vectors;
	rt->spec_end = f->buffers + FRAME_SIZE;
	return rt->spec_to;
}

static inline void forward_frame(struct node_runtime *rt, uint16_t next, struct frame *frame)
{
	rt->arc_packets[next] += frame->n_vectors;
	pending_append(rt->next[next], frame);
	rt->frame_taken = 1;
}

static __attribute__((noinline)) void forward_frame_after_close(struct node_runtime *rt, uint16_t next,
								 struct frame *frame)
{
	node_spec_flush(rt);
	forward_frame(rt, next, frame);
}

/* The close out of line, reached by a tail jump: the common path (nothing
 * open) stays a leaf, without saving registers for a call. */
void node_forward_frame(struct node_runtime *rt, uint16_t next, struct frame *frame)
{
	if (unlikely(rt->spec_end)) {
		forward_frame_after_close(rt, next, frame);
		return;
	}
	forward_frame(rt, next, frame);
}

void node_enqueue_to_nexts(struct node_runtime *rt, const uint32_t *bi, const uint16_t *nexts, uint32_t n)
{
	node_spec_close(rt);
	uint32_t i = 0;
	while (i < n) {
		uint16_t nx = nexts[i];
		uint32_t j = i + 1;
		while (j < n && nexts[j] == nx)
			j++;
		node_enqueue_open(rt, nx, bi + i, j - i);
		i = j;
	}
}

/* In the thread's own clock (cpu_ticks), so that the loop decides which
 * process node is due from the reading it already has. */
void node_suspend(struct node_runtime *rt, uint64_t ns)
{
	double ticks = (double)ns * cpu_ticks_per_second() / 1e9;
	rt->next_run_ticks = ticks >= 0x1p62 ? UINT64_MAX : cpu_ticks() + (uint64_t)ticks;
	stat_add(&rt->suspends, 1);
}

/* Count one call; returns its ticks (since the previous reading). */
static inline uint64_t account(struct node_runtime *rt, uint32_t n, uint64_t *now)
{
	uint64_t t = cpu_ticks(), d = t - *now;
	stat_add(&rt->calls, 1);
	stat_add(&rt->vectors, n);
	stat_add(&rt->clocks, d);
	*now = t;
	return d;
}

/* A call without a frame (an input or process node polled): its ticks go
 * to *idle as well when it found nothing. The same clock read as account. */
static inline void account_poll(struct node_runtime *rt, uint32_t n, uint64_t *now, uint64_t *idle)
{
	uint64_t d = account(rt, n, now);
	if (!n)
		*idle += d;
}

/* One call with a frame (none for an empty one): returns its vector
 * count and counts the call in *calls; the visit adds both to the node's
 * statistics. taps: the graph's frame_taps as the visit read them. */
static inline uint32_t dispatch_frame(struct graph_thread *t, struct node_runtime *rt, struct frame *f,
				      uint32_t taps, uint32_t *calls)
{
	if (unlikely(f->n_vectors == 0)) {
		frame_free(t, f);
		return 0;
	}
	/* Trace and dispatch trace: one predictable branch per frame when off. */
	if (unlikely(taps))
		graph_trace_frame(rt, f);
	rt->frame_taken = 0;
	uint32_t n = rt->fn(rt, f);
	node_spec_close(rt);
	*calls += 1;
	if (!rt->frame_taken)
		frame_free(t, f);
	return n;
}

/* Run pending frames until none are left, each node's clocks counted from
 * `now` (the caller's last reading: no read of its own). Returns the last
 * reading. By value: the reading stays in a register across the frames.
 *
 * A node that comes up runs every frame pending for it, one call each,
 * back to back, and the clock is read and its calls, vectors and clocks
 * are added once for the visit, not per frame (show runtime's figures add
 * up the same). When several producers filled frames for one node (2
 * sources feeding one stage; two ports' bursts meeting at ethernet-input),
 * the second frame costs the call alone. That is sluice's answer to
 * rte_graph growing a node's stream past 256: the vector stays at most
 * FRAME_SIZE (nodes size their stack arrays by it) and the frames of one
 * visit run together (docs/graph.md).
 *
 * The taps are read once per pass: they are turned on under the barrier
 * (at a loop boundary), and a tap turned off meanwhile is read again by
 * graph_trace_frame itself. */
static uint64_t dispatch_pending(struct graph_thread *t, uint64_t now)
{
	uint32_t taps = atomic_load_explicit(&t->graph->frame_taps, memory_order_relaxed);
	while (t->ready_head != t->ready_tail) {
		struct node_runtime *rt = t->ready[t->ready_head++ & t->ready_mask];
		/* Detach the list first: frames the node sends to itself form a new
		 * one, which puts it on the FIFO again. */
		struct frame *f = rt->pending_head;
		rt->pending_head = rt->pending_tail = NULL;
		uint32_t calls = 0, vectors = 0;
		do {
			struct frame *next = f->next;
			vectors += dispatch_frame(t, rt, f, taps, &calls);
			f = next;
		} while (f);
		uint64_t tk = cpu_ticks();
		stat_add(&rt->calls, calls);
		stat_add(&rt->vectors, vectors);
		stat_add(&rt->clocks, tk - now);
		now = tk;
	}
	return now;
}

/* Outside the loop's own dispatches (a loop hook delivering timers to
 * nodes; shutdown): what the nodes took is busy time, which a loop adds to
 * its own (loop_time). */
void graph_dispatch_pending(struct graph_thread *t)
{
	uint64_t from = cpu_ticks();
	t->hook_busy_ticks += dispatch_pending(t, from) - from;
}

void graph_thread_free_pending(struct graph_thread *t)
{
	for (uint32_t i = 0; i < t->graph->n_nodes; i++) {
		struct node_runtime *rt = &t->rts[i];
		struct frame *f = rt->pending_head;
		while (f) {
			struct frame *next = f->next;
			buffer_free(f->buffers, f->n_vectors);
			graph_frame_free(t, f);
			f = next;
		}
		rt->pending_head = rt->pending_tail = NULL;
	}
	t->ready_head = t->ready_tail;
}

static uint64_t pending_buffers(const struct node_runtime *rt)
{
	uint64_t n = 0;
	for (const struct frame *f = rt->pending_head; f; f = f->next)
		for (uint32_t j = 0; j < f->n_vectors; j++)
			n += buffer_chain_length(f->buffers[j]);
	return n;
}

/* Holder "frames": buffers in frames pending at each node, summed over
 * threads. Under the barrier every thread sits at its loop boundary, where
 * its pending lists are empty; what shows here is a thread that is not
 * looping (a test driving graph_main_poll, a worker that has stopped). A
 * thread the barrier let go because it is stalled is not walked: it may
 * wake and recycle a frame under the walk. What it holds reads as
 * unattributed then (`show buffers` says its figures are approximate). */
void graph_frames_holder(void *ctx, struct buffer_tally *tally)
{
	struct graph *g = ctx;
	uint32_t n_threads = atomic_load(&g->n_threads_published);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint64_t n = 0;
		for (uint32_t k = 0; k < n_threads; k++)
			if (graph_thread_held(g, g->threads[k]))
				n += pending_buffers(&g->threads[k]->rts[i]);
		if (n)
			buffer_tally_add(tally, g->nodes[i].reg->name, n);
	}
}

void graph_thread_update_lists(struct graph *g, struct graph_thread *t)
{
	uint32_t *inputs = realloc(t->inputs, (g->n_nodes + 1) * sizeof(uint32_t));
	uint32_t *procs = realloc(t->processes, (g->n_nodes + 1) * sizeof(uint32_t));
	if (inputs)
		t->inputs = inputs;
	if (procs)
		t->processes = procs;
	if (!inputs || !procs)
		return;
	t->n_inputs = t->n_processes = 0;
	bool can_block = t->epfd >= 0 && t->wake_fd >= 0;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct node_runtime *rt = &t->rts[i];
		if (rt->state != NODE_STATE_POLLING)
			continue;
		if (rt->type == NODE_TYPE_INPUT) {
			t->inputs[t->n_inputs++] = i;
			can_block &= g->nodes[i].reg->can_sleep;
		}
		else if (rt->type == NODE_TYPE_PROCESS && t->index == 0)
			t->processes[t->n_processes++] = i;
	}
	t->can_block = can_block;
}

static uint32_t poll_inputs(struct graph_thread *t, uint64_t *now, uint64_t *idle)
{
	uint32_t produced = 0;
	for (uint32_t i = 0; i < t->n_inputs; i++) {
		struct node_runtime *rt = &t->rts[t->inputs[i]];
		uint32_t n = rt->fn(rt, NULL);
		node_spec_close(rt);
		account_poll(rt, n, now, idle);
		produced += n;
	}
	return produced;
}

static inline uint64_t ticks_to_ns(uint64_t ticks)
{
	return (uint64_t)((double)ticks * 1e9 / cpu_ticks_per_second());
}

/* A sleeping thread 0 wakes for the earliest process node's resume time.
 * Due or not is judged by the loop's last clock reading (*now): no clock
 * read of its own per loop. */
static void run_processes(struct graph_thread *t, uint64_t *now, uint64_t *idle)
{
	uint64_t next = UINT64_MAX;
	atomic_uint *poke = &t->graph->process_poke;
	bool poked = atomic_load_explicit(poke, memory_order_relaxed) && atomic_exchange(poke, 0);
	for (uint32_t i = 0; i < t->n_processes; i++) {
		struct node_runtime *rt = &t->rts[t->processes[i]];
		if (poked || *now >= rt->next_run_ticks) {
			uint32_t n = rt->fn(rt, NULL);
			node_spec_close(rt);
			account_poll(rt, n, now, idle);
		}
		next = MIN(next, rt->next_run_ticks);
	}
	if (next > *now)
		graph_thread_wake_within(t, next == UINT64_MAX ? UINT64_MAX : ticks_to_ns(next - *now));
	else
		graph_thread_wake_within(t, 0);
}

/* Where one loop's ticks went (docs/architecture.md, "Where the time
 * goes"): `nodes` ticks inside node calls, `idle` of them in polls that
 * found nothing, the rest of start..end the loop's own. The time between
 * the previous loop's end and this start is idle when the thread backed
 * off in between (and sleep when it slept), else overhead; none when
 * there is no previous loop to count from (loop_mark UINT64_MAX). Per
 * loop, from the readings the loop takes anyway, without branches but the
 * sleeping one. */
static inline void loop_time(struct graph_thread *t, uint64_t start, uint64_t end, uint64_t nodes, uint64_t idle)
{
	uint64_t gap = start > t->loop_mark ? start - t->loop_mark : 0;
	uint64_t idle_gap = gap & t->gap_is_idle;
	stat_add(&t->busy_ticks, nodes - idle);
	stat_add(&t->idle_ticks, idle + idle_gap);
	stat_add(&t->overhead_ticks, end - start - nodes + gap - idle_gap);
	if (unlikely(t->slept))
		stat_add(&t->sleep_ticks, gap);
	t->loop_mark = end;
}

/* A loop reads the clock once per input polled and once per node visit
 * (rte_graph reads it twice per node call), and no more when the thread
 * is busy: it starts from the previous loop's end when it went straight
 * on (the few instructions between two loops land in the first poll's
 * clocks, and overhead between them is none), and ends at the last
 * visit's reading (after a loop hook, at a reading taken after it). A
 * fresh start after a back-off, a sleep or the barrier (loop_mark
 * UINT64_MAX): that time belongs to the gap. */
uint32_t graph_thread_loop_once(struct graph_thread *t)
{
	if (unlikely(graph_barrier_requested(t->graph)))
		graph_barrier_check(t);
	uint64_t start = t->loop_mark;
	if (t->gap_is_idle || start == UINT64_MAX)
		start = cpu_ticks();
	uint64_t now = start, idle = 0;
	uint32_t produced = poll_inputs(t, &now, &idle);
	now = dispatch_pending(t, now);
	if (t->n_processes) {
		run_processes(t, &now, &idle);
		now = dispatch_pending(t, now);
	}
	uint64_t nodes = now - start;
	struct graph *g = t->graph;
	if (g->loop_hook) {
		t->hook_busy_ticks = 0;
		produced += g->loop_hook(t, g->loop_hook_arg);
		uint64_t from = cpu_ticks();
		now = dispatch_pending(t, from);
		nodes += now - from + t->hook_busy_ticks;
	}
	/* The heartbeat the watchdog reads. */
	stat_add(&t->loops, 1);
	__atomic_store_n(&t->last_loop_ticks, now, __ATOMIC_RELAXED);
	loop_time(t, start, now, nodes, idle);
	return produced;
}

/* When the inputs found nothing: block in epoll_wait when every input can
 * be woken and none asked to be polled again (graph/sleep.c), else back
 * off with sleeps of 1, 2, 4 ... us up to idle-max (threads with an input
 * that cannot say when it has work: test nodes, a driver without an fd), or
 * spin in idle-mode poll. A busy thread pays nothing of it. */
void graph_thread_idle(struct graph_thread *t, uint32_t produced)
{
	const struct graph_config *cfg = &t->graph->cfg;
	bool veto = t->stay_awake, no_block = t->no_block;
	t->stay_awake = t->no_block = false;
	if (produced) {
		t->idle_sleep_us = 0;
		t->gap_is_idle = 0;
		t->slept = false;
		t->wake_within_ns = UINT64_MAX;
		return;
	}
	stat_add(&t->idle_loops, 1);
	if (t->can_block && !veto && !no_block && cfg->idle_mode != GRAPH_IDLE_POLL) {
		uint64_t cap_ns = t->wake_within_ns;
		t->wake_within_ns = UINT64_MAX;
		if (graph_thread_block(t, cap_ns))
			return;
		if (t->gap_is_idle == 0) { /* the last look found work */
			t->idle_sleep_us = 0;
			return;
		}
		cpu_relax();
		return;
	}
	uint64_t cap_ns = t->wake_within_ns;
	t->wake_within_ns = UINT64_MAX;
	t->gap_is_idle = UINT64_MAX;
	t->slept = !veto && cfg->idle_mode != GRAPH_IDLE_POLL && cap_ns >= 1000;
	if (!t->slept) {
		cpu_relax();
		return;
	}
	t->idle_sleep_us = t->idle_sleep_us ? MIN(t->idle_sleep_us * 2, cfg->idle_max_us) : 1;
	uint64_t ns = MIN((uint64_t)t->idle_sleep_us * 1000, cap_ns);
	struct timespec d = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	nanosleep(&d, NULL);
}

void graph_set_loop_hook(struct graph *g, graph_loop_hook_fn_t *fn, void *arg)
{
	graph_barrier_sync(g);
	g->loop_hook = fn;
	g->loop_hook_arg = arg;
	graph_barrier_release(g);
}

void graph_set_drop_tap(struct graph *g, graph_drop_tap_fn_t *fn, void *arg)
{
	graph_barrier_sync(g);
	g->drop_tap = fn;
	g->drop_tap_arg = arg;
	graph_barrier_release(g);
}

void graph_thread_wake_within(struct graph_thread *t, uint64_t ns)
{
	if (ns < t->wake_within_ns)
		t->wake_within_ns = ns;
}

uint32_t graph_thread_index(const struct graph_thread *t)
{
	return t->index;
}

void *graph_thread_user(const struct graph_thread *t)
{
	return t->user;
}

void graph_thread_set_user(struct graph_thread *t, void *p)
{
	t->user = p;
}

uint32_t graph_main_poll(struct graph *g)
{
	struct graph_thread *t = g->threads[0];
	/* Only entering needs the full fence (against a barrier requester's
	 * flag); leaving is a release store. */
	atomic_store(&t->active, 1);
	t->loop_mark = UINT64_MAX; /* the time since the caller's last poll is the caller's */
	uint32_t n = graph_thread_loop_once(t);
	atomic_store_explicit(&t->active, 0, memory_order_release);
	return n;
}

void graph_main_loop(struct graph *g, const atomic_bool *stop)
{
	struct graph_thread *t = g->threads[0];
	atomic_store(&t->active, 1);
	t->loop_mark = UINT64_MAX; /* the time before the call is the caller's (a poll's end is no start) */
	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		uint32_t n = graph_thread_loop_once(t);
		graph_thread_idle(t, n);
	}
	graph_dispatch_pending(t);
	atomic_store(&t->active, 0);
}
