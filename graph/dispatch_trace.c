/* The dispatch trace (graph.h, "dispatch trace"): VPP's `pcap dispatch
 * trace`, every node's input as pcapng.
 *
 * Datapath: per frame (and per input burst), the packets to record are
 * picked, as many slots as the thread's ring has free are claimed against
 * max with one atomic add per frame, and each packet's header and first
 * snaplen bytes are copied into its slot; the ring's head is then published
 * with a release store. A ring is written by its datapath thread only and
 * read by the writer only (single producer, single consumer), so there is
 * no lock; no allocation and no system call either. What does not fit is
 * counted in `dropped`, and the packet goes on.
 *
 * Writer: a thread of its own (sluice-dtrace), started from the CLI's
 * thread and so on its CPUs, never a datapath one. It drains the rings
 * into the file every millisecond, flushing after each pass, and stops
 * once max records are written or when stopped (under the barrier, so
 * every claimed record is already in a ring).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/pcapng.h"
#include "graph/graph_private.h"

#define DTRACE_RING_SLOTS 4096u /* per thread, a power of two */
#define DTRACE_WRITER_NS 1000000ull

struct dtrace_ring {
	alignas(64) atomic_uint head; /* datapath: slots filled */
	uint32_t next_id;             /* trace ids this thread handed out */
	uint64_t dropped;             /* records that found the ring full */
	alignas(64) atomic_uint tail; /* writer: slots written */
	uint8_t *slots;
};

struct dtrace {
	struct graph *g;
	uint32_t max, snaplen, slot_size;
	int32_t mark_node;
	struct pkt_filter *filter;
	alignas(64) atomic_ullong claimed;
	alignas(64) struct dtrace_ring rings[GRAPH_MAX_THREADS];
	uint32_t n_rings;
	/* writer */
	pthread_t thread;
	bool running;
	atomic_bool stop;
	atomic_ullong written;
	atomic_int error;
	struct pcapng_file out;
	char path[256];
};

/* ---- datapath ---- */

static inline struct graph_pcap_rec *slot(struct dtrace *d, struct dtrace_ring *r, uint32_t i)
{
	return (struct graph_pcap_rec *)(r->slots + (size_t)(i & (DTRACE_RING_SLOTS - 1)) * d->slot_size);
}

/* Whether b is recorded here: every packet, or once it reached mark_node
 * (and passed the filter there). The first record gives it its id. */
static bool dtrace_pick(struct dtrace *d, struct node_runtime *rt, struct buffer *b)
{
	if (b->flags & BUFFER_F_DTRACE)
		return true;
	if (d->mark_node >= 0 && (uint32_t)d->mark_node != rt->node_index)
		return false;
	/* A filter reads Ethernet frames: where packets are first seen. */
	if (d->mark_node < 0 && d->filter && rt->type != NODE_TYPE_INPUT)
		return false;
	if (d->filter && !pkt_filter_match(d->filter, b))
		return false;
	b->flags |= BUFFER_F_DTRACE;
	if (!(b->flags & BUFFER_F_TRACED)) {
		/* Unique across threads without sharing a counter. */
		struct dtrace_ring *r = &d->rings[rt->thread_index];
		b->trace_handle = r->next_id++ * GRAPH_MAX_THREADS + rt->thread_index;
	}
	return true;
}

/* Slots to use out of want: what the ring has free, then what max leaves. */
static uint32_t dtrace_claim(struct dtrace *d, struct dtrace_ring *r, uint32_t want)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t free_slots = DTRACE_RING_SLOTS - (head - atomic_load_explicit(&r->tail, memory_order_acquire));
	uint32_t k = MIN(want, free_slots);
	stat_add(&r->dropped, want - k);
	if (!k)
		return 0;
	uint64_t old = atomic_fetch_add_explicit(&d->claimed, k, memory_order_relaxed);
	if (old + k >= d->max) /* the last one: disarm (the writer closes at max) */
		atomic_fetch_and(&d->g->frame_taps, ~GRAPH_TAP_DTRACE);
	return old >= d->max ? 0 : (uint32_t)MIN((uint64_t)k, d->max - old);
}

void graph_dtrace_frame(struct node_runtime *rt, const uint32_t *bi, uint32_t n)
{
	struct dtrace *d = rt->graph->dtrace;
	if (!d || rt->thread_index >= d->n_rings ||
	    !(atomic_load_explicit(&rt->graph->frame_taps, memory_order_relaxed) & GRAPH_TAP_DTRACE))
		return;
	struct buffer *pick[FRAME_SIZE];
	uint32_t m = 0;
	for (uint32_t i = 0; i < n && m < FRAME_SIZE; i++) {
		struct buffer *b = buffer_get(bi[i]);
		if (dtrace_pick(d, rt, b))
			pick[m++] = b;
	}
	struct dtrace_ring *r = &d->rings[rt->thread_index];
	uint32_t k = m ? dtrace_claim(d, r, m) : 0;
	if (!k)
		return;
	uint64_t ticks = cpu_ticks();
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	for (uint32_t i = 0; i < k; i++) {
		struct graph_pcap_rec *s = slot(d, r, head + i);
		graph_pcap_copy(s, (uint8_t *)(s + 1), d->snaplen, pick[i]);
		s->ticks = ticks;
		s->node_index = rt->node_index;
		s->thread = (uint16_t)rt->thread_index;
		s->id = graph_packet_id(rt->graph, pick[i]);
	}
	atomic_store_explicit(&r->head, head + k, memory_order_release);
}

/* ---- writer ---- */

/* Write what every ring holds; returns the records written. */
static uint32_t dtrace_drain(struct dtrace *d)
{
	uint32_t n = 0;
	for (uint32_t t = 0; t < d->n_rings; t++) {
		struct dtrace_ring *r = &d->rings[t];
		uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
		for (; tail != head; tail++, n++) {
			struct graph_pcap_rec *s = slot(d, r, tail);
			int rc = graph_pcapng_write(d->g, &d->out, s, (const uint8_t *)(s + 1), NULL);
			int none = 0;
			if (rc)
				atomic_compare_exchange_strong(&d->error, &none, -rc);
		}
		atomic_store_explicit(&r->tail, tail, memory_order_release);
	}
	if (n)
		fflush(d->out.f);
	atomic_fetch_add(&d->written, n);
	return n;
}

static void *dtrace_writer(void *arg)
{
	struct dtrace *d = arg;
	for (;;) {
		bool stop = atomic_load(&d->stop); /* read first: a drain after it sees everything */
		dtrace_drain(d);
		if (stop || atomic_load(&d->written) >= d->max)
			break;
		struct timespec ts = { 0, DTRACE_WRITER_NS };
		nanosleep(&ts, NULL);
	}
	int rc = pcapng_close(&d->out);
	int none = 0;
	if (rc)
		atomic_compare_exchange_strong(&d->error, &none, -rc);
	return NULL;
}

/* ---- control ---- */

/* Two CLI sessions may start, stop and read it at once. */
static pthread_mutex_t dtrace_lock = PTHREAD_MUTEX_INITIALIZER;

static void dtrace_release(struct dtrace *d)
{
	if (!d)
		return;
	if (d->running) {
		atomic_store(&d->stop, true);
		pthread_join(d->thread, NULL);
	}
	for (uint32_t t = 0; t < d->n_rings; t++)
		free(d->rings[t].slots);
	pkt_filter_free(d->filter);
	free(d);
}

void graph_dtrace_free(struct graph *g)
{
	dtrace_release(g->dtrace);
	g->dtrace = NULL;
}

/* Arm or disarm every input node's recording bit and the frame tap; caller
 * holds the barrier. */
static void dtrace_arm(struct graph *g, bool on)
{
	for (uint32_t i = 0; i < g->n_threads; i++)
		for (uint32_t k = 0; k < g->n_nodes; k++) {
			struct node_runtime *rt = &g->threads[i]->rts[k];
			if (rt->type != NODE_TYPE_INPUT)
				continue;
			rt->trace_budget = on ? rt->trace_budget | TRACE_BUDGET_DTRACE
					      : rt->trace_budget & ~TRACE_BUDGET_DTRACE;
		}
	if (on)
		atomic_fetch_or(&g->frame_taps, GRAPH_TAP_DTRACE);
	else
		atomic_fetch_and(&g->frame_taps, ~GRAPH_TAP_DTRACE);
}

static struct dtrace *dtrace_alloc(struct graph *g, const struct graph_dtrace_params *p, char *err, size_t errlen)
{
	struct dtrace *d = aligned_alloc(64, (sizeof(*d) + 63) & ~(size_t)63);
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	memset(d, 0, sizeof(*d));
	d->g = g;
	d->max = p->max;
	d->snaplen = p->snaplen ? p->snaplen : GRAPH_DTRACE_SNAPLEN_DEFAULT;
	d->slot_size = (uint32_t)sizeof(struct graph_pcap_rec) + ((d->snaplen + 63) & ~63u);
	d->mark_node = p->mark_node;
	d->n_rings = g->n_threads;
	snprintf(d->path, sizeof(d->path), "%s", p->path ? p->path : "");
	for (uint32_t t = 0; t < d->n_rings; t++) {
		d->rings[t].slots = malloc((size_t)DTRACE_RING_SLOTS * d->slot_size);
		if (!d->rings[t].slots) {
			snprintf(err, errlen, "out of memory for %u x %u-byte records per thread", DTRACE_RING_SLOTS,
				 d->slot_size);
			dtrace_release(d);
			return NULL;
		}
	}
	return d;
}

static int dtrace_start(struct graph *g, const struct graph_dtrace_params *p, char *err, size_t errlen)
{
	int rc = -EINVAL;
	struct dtrace *d = NULL;
	if (g->dtrace && g->dtrace->running && !atomic_load(&g->dtrace->stop)) {
		snprintf(err, errlen, "a dispatch trace is on (to %s): 'pcap dispatch trace off' first", g->dtrace->path);
		rc = -EBUSY;
	} else if (!p->max || p->max > GRAPH_DTRACE_MAX || p->snaplen > 65535 ||
		   (p->mark_node >= 0 && (uint32_t)p->mark_node >= g->n_nodes)) {
		snprintf(err, errlen, "max 1..%u, max-bytes-per-pkt up to 65535, an existing node", GRAPH_DTRACE_MAX);
	} else if ((d = dtrace_alloc(g, p, err, errlen))) {
		rc = graph_pcapng_open(g, &d->out, p->file, d->snaplen);
		if (rc)
			snprintf(err, errlen, "cannot write %s: %s", d->path, strerror(-rc));
		else if ((rc = -pthread_create(&d->thread, NULL, dtrace_writer, d)))
			snprintf(err, errlen, "cannot start the writer thread: %s", strerror(-rc));
	}
	if (rc) {
		if (d)
			pcapng_close(&d->out);
		else if (p->file)
			fclose(p->file);
		dtrace_release(d);
		pkt_filter_free(p->filter);
		return rc;
	}
	pthread_setname_np(d->thread, "sluice-dtrace");
	d->running = true;
	d->filter = p->filter;
	graph_barrier_sync(g);
	struct dtrace *old = g->dtrace;
	g->dtrace = d;
	dtrace_arm(g, true);
	graph_barrier_release(g);
	dtrace_release(old); /* stopped: no thread reads it */
	return 0;
}

int graph_dtrace_start(struct graph *g, const struct graph_dtrace_params *p, char *err, size_t errlen)
{
	pthread_mutex_lock(&dtrace_lock);
	int rc = dtrace_start(g, p, err, errlen);
	pthread_mutex_unlock(&dtrace_lock);
	return rc;
}

static int dtrace_stop(struct graph *g)
{
	struct dtrace *d = g->dtrace;
	if (!d || atomic_load(&d->stop))
		return -ENOENT;
	/* Parked, every thread has published what it claimed. */
	graph_barrier_sync(g);
	dtrace_arm(g, false);
	graph_barrier_release(g);
	atomic_store(&d->stop, true);
	pthread_join(d->thread, NULL);
	d->running = false;
	return 0;
}

int graph_dtrace_stop(struct graph *g)
{
	pthread_mutex_lock(&dtrace_lock);
	int rc = dtrace_stop(g);
	pthread_mutex_unlock(&dtrace_lock);
	return rc;
}

static void dtrace_status(struct graph *g, struct graph_dtrace_status *st)
{
	memset(st, 0, sizeof(*st));
	struct dtrace *d = g->dtrace;
	if (!d)
		return;
	st->on = !atomic_load(&d->stop);
	st->armed = st->on && (atomic_load(&g->frame_taps) & GRAPH_TAP_DTRACE);
	st->max = d->max;
	st->snaplen = d->snaplen;
	st->claimed = MIN(atomic_load(&d->claimed), (uint64_t)d->max);
	st->written = atomic_load(&d->written);
	for (uint32_t t = 0; t < d->n_rings; t++) {
		st->dropped += __atomic_load_n(&d->rings[t].dropped, __ATOMIC_RELAXED);
		if (d->rings[t].slots)
			st->ring_bytes += (uint64_t)DTRACE_RING_SLOTS * d->slot_size;
	}
	st->error = atomic_load(&d->error);
	snprintf(st->path, sizeof(st->path), "%s", d->path);
	if (d->mark_node >= 0)
		snprintf(st->node, sizeof(st->node), "%s", g->nodes[d->mark_node].reg->name);
	if (d->filter)
		snprintf(st->filter, sizeof(st->filter), "%s", pkt_filter_expr(d->filter));
}

void graph_dtrace_status(struct graph *g, struct graph_dtrace_status *st)
{
	pthread_mutex_lock(&dtrace_lock);
	dtrace_status(g, st);
	pthread_mutex_unlock(&dtrace_lock);
}
