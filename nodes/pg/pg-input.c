/* pg-input: the packet generator's input node.
 *
 * Each call produces at most one frame (FRAME_SIZE packets) per enabled
 * stream owned by the calling thread: buffers are allocated in bulk straight
 * into the next node's frame, the stream's template is copied in, then the
 * per-packet fields (frame size, IPv4 total length and addresses, L4 ports,
 * length and sequence) are written and the IPv4 and L4 checksums recomputed
 * from sums prepared when the stream was added. Limit and rate (a token
 * bucket on the cycle counter) are applied per call, never per packet.
 *
 * Next nodes: error-drop (arc 0), then one arc per distinct next node that
 *   streams name (added with graph_add_next; ethernet-input by default),
 *   and sched-ingress when the graph has it: a stream into ethernet-input
 *   takes the path a frame received by a device takes, so while a
 *   scheduling class is defined its packets go to sched-ingress instead
 *   (one test per burst, as device-input makes), are classified and, with
 *   workers, queued for the distributor like any received frame. A stream
 *   naming another node (ip4-input, error-drop, sched-ingress itself) goes
 *   there as named.
 * Errors: no-buffers: packets not generated because the pool was exhausted;
 *   generated into error-drop: every buffer leaves with this error set, so a
 *   stream feeding error-drop (the embedded default) is counted here, while
 *   any later node that drops the packet sets its own.
 * Trace: stream name, packet index within the stream, length, rx interface.
 * CLI: `trace add pg-input N` / `show trace`; `show errors`; `show runtime`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/buffer.h"
#include "graph/node.h"
#include "nodes/pg/pg_private.h"
#include "sched/class.h"

enum pg_input_next {
	PG_INPUT_NEXT_DROP = 0,
	PG_INPUT_N_NEXT,
};

static const char *const pg_input_error_strings[PG_INPUT_N_ERROR] = {
	[PG_INPUT_ERROR_NO_BUFFERS] = "no buffers (packets not generated)",
	[PG_INPUT_ERROR_DROPPED] = "generated into error-drop",
};

struct pg_trace {
	uint64_t packet_index; /* since the stream was added */
	uint32_t rx_if;
	uint16_t length;
	char stream[26];
};
_Static_assert(sizeof(struct pg_trace) <= NODE_TRACE_DETAIL_SIZE, "pg trace fits the record");

static int pg_input_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct pg_trace t;
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "stream %.*s packet %" PRIu64 " length %u rx-if %u",
			(int)sizeof(t.stream), t.stream, t.packet_index, t.length, t.rx_if);
}

/* ---- helpers: the datapath ---- */

/* Packets this stream may send now: limit and token bucket, at most a frame.
 * The bucket holds at most one frame, so a stalled loop bursts one frame,
 * not the backlog. */
static uint32_t stream_budget(struct pg_stream *s)
{
	uint64_t n = FRAME_SIZE;
	if (s->cfg.limit)
		n = MIN(n, s->cfg.limit - s->n_sent);
	if (s->tokens_per_tick > 0) {
		uint64_t now = cpu_ticks();
		s->tokens += (double)(now - s->last_ticks) * s->tokens_per_tick;
		s->last_ticks = now;
		if (s->tokens > FRAME_SIZE)
			s->tokens = FRAME_SIZE;
		n = MIN(n, (uint64_t)s->tokens);
	}
	return (uint32_t)n;
}

/* A paced stream with no token yet: its thread may sleep until the next
 * one is due (graph/sleep.c wakes it by timerfd), never spins for it. */
static __attribute__((noinline)) void pace_wake(struct node_runtime *rt, const struct pg_stream *s)
{
	double ticks = (1.0 - s->tokens) / s->tokens_per_tick;
	double ns = ticks > 0 ? ticks * 1e9 / cpu_ticks_per_second() : 0;
	graph_thread_wake_within(rt->thread, (uint64_t)ns);
}

static uint32_t next_size(const struct pg_edit *e, struct pg_cursor *cur)
{
	switch (e->size_mode) {
	case PG_SIZE_INCREMENT: {
		uint32_t len = cur->size;
		cur->size = len == e->size_max ? e->size_min : len + 1;
		return len;
	}
	case PG_SIZE_RANDOM: {
		/* xorshift64*, scaled to the range without a division */
		cur->rng ^= cur->rng >> 12;
		cur->rng ^= cur->rng << 25;
		cur->rng ^= cur->rng >> 27;
		uint32_t r = (uint32_t)((cur->rng * 0x2545f4914f6cdd1dull) >> 32);
		return e->size_min + (uint32_t)(((uint64_t)r * (e->size_max - e->size_min + 1)) >> 32);
	}
	default:
		return e->size_min;
	}
}

static uint32_t step(uint32_t i, uint32_t n)
{
	return i + 1 == n ? 0 : i + 1;
}

/* Write the per-packet IPv4 and L4 fields of one packet of length len and
 * its checksums: the fixed sums from stream_build plus the changing words. */
static void write_ip4(const struct pg_edit *e, struct pg_cursor *cur, uint8_t *p, uint32_t len)
{
	uint8_t *ip = p + ETH_HDR_LEN;
	uint8_t *l4 = ip + IP4_HDR_LEN;
	uint32_t ip_len = len - ETH_HDR_LEN;
	uint32_t l4_len = ip_len - IP4_HDR_LEN;
	uint32_t src = e->src_ip + cur->src_i;
	uint32_t dst = e->dst_ip + cur->dst_i;
	uint32_t addr_sum = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff);
	uint32_t sport = e->sport + cur->sport_i;
	uint32_t dport = e->dport + cur->dport_i;
	uint64_t sum;

	cur->src_i = step(cur->src_i, e->src_n);
	cur->dst_i = step(cur->dst_i, e->dst_n);
	put16(ip + 2, (uint16_t)ip_len);
	put32(ip + 12, src);
	put32(ip + 16, dst);
	put16(ip + 10, (uint16_t)~csum_fold(e->ip_sum + ip_len + addr_sum));

	switch (e->proto) {
	case PG_L4_UDP:
		cur->sport_i = step(cur->sport_i, e->sport_n);
		cur->dport_i = step(cur->dport_i, e->dport_n);
		put16(l4, (uint16_t)sport);
		put16(l4 + 2, (uint16_t)dport);
		put16(l4 + 4, (uint16_t)l4_len);
		/* pseudo-header (addresses, protocol, length) + header (ports, length) + payload */
		sum = (uint64_t)e->l4_sum + addr_sum + 2 * l4_len + sport + dport +
		      e->payload_sum[l4_len - UDP_HDR_LEN];
		uint16_t ck = (uint16_t)~csum_fold(sum);
		put16(l4 + 6, ck ? ck : 0xffff); /* 0 means "no checksum" in UDP */
		break;
	case PG_L4_TCP:
		cur->sport_i = step(cur->sport_i, e->sport_n);
		cur->dport_i = step(cur->dport_i, e->dport_n);
		put16(l4, (uint16_t)sport);
		put16(l4 + 2, (uint16_t)dport);
		sum = (uint64_t)e->l4_sum + addr_sum + l4_len + sport + dport +
		      e->payload_sum[l4_len - TCP_HDR_LEN];
		put16(l4 + 16, (uint16_t)~csum_fold(sum));
		break;
	case PG_L4_ICMP:
		put16(l4 + 6, cur->icmp_seq);
		sum = (uint64_t)e->l4_sum + cur->icmp_seq + e->payload_sum[l4_len - ICMP_HDR_LEN];
		cur->icmp_seq++;
		put16(l4 + 2, (uint16_t)~csum_fold(sum));
		break;
	}
}

static void trace_fill(struct node_runtime *rt, struct pg_stream *s, const uint32_t *bi, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		if (!(b->flags & BUFFER_F_TRACED))
			continue;
		uint8_t *d = node_trace_detail(rt, b);
		if (!d)
			continue;
		struct pg_trace t = {
			.packet_index = s->n_total + i,
			.rx_if = b->rx_if,
			.length = b->current_length,
		};
		memcpy(t.stream, s->cfg.name, MIN(strlen(s->cfg.name), sizeof(t.stream)));
		memcpy(d, &t, sizeof(t));
	}
}

/* The arc of this burst: sched-ingress for a stream that enters as a
 * received frame while a class is defined (device-input's test), else the
 * stream's own. */
static inline uint16_t stream_next(const struct pg_stream *s)
{
	if (unlikely(s->as_received && pg_main.sched_next >= 0 && sched_classes_active()))
		return (uint16_t)pg_main.sched_next;
	return s->next_index;
}

/* Produce one burst of stream s into its next node's frame; returns the
 * packets produced. */
static uint32_t stream_generate(struct node_runtime *rt, struct pg_stream *s)
{
	uint32_t n = stream_budget(s);
	if (!n) {
		if (s->tokens_per_tick > 0)
			pace_wake(rt, s);
		return 0;
	}
	const uint16_t next = stream_next(s);
	uint32_t *bi = node_next_slots(rt, next, n);
	uint32_t got = buffer_alloc(bi, n, -1);
	if (unlikely(got < n))
		node_count_error(rt, PG_INPUT_ERROR_NO_BUFFERS, n - got);
	if (unlikely(!got)) {
		graph_thread_no_block(rt->thread); /* buffers come back without a wakeup */
		return 0;
	}

	/* Plain loop over stack copies of the stream's fields. Measured for
	 * 64-byte UDP with incrementing address and port: ~127 instructions
	 * per packet in this function plus an 11-instruction template copy
	 * (callgrind), ~26 TSC cycles per packet (show runtime). The copy and
	 * the checksum arithmetic are the work; the 4-wide prefetching shape
	 * has not been measured against this yet. */
	const struct pg_edit e = s->edit;
	struct pg_cursor cur = s->cur;
	uint64_t bytes = 0;
	uint16_t drop_error = node_error(rt, PG_INPUT_ERROR_DROPPED);
	for (uint32_t i = 0; i < got; i++) {
		struct buffer *b = buffer_get(bi[i]);
		uint8_t *p = buffer_data(b);
		uint32_t len = next_size(&e, &cur);
		memcpy(p, e.tmpl, len);
		if (e.ip4)
			write_ip4(&e, &cur, p, len);
		b->current_length = (uint16_t)len;
		b->rx_if = e.rx_if;
		b->error = drop_error;
		bytes += len;
	}
	s->cur = cur;

	bool tracing = rt->trace_budget != 0;
	node_trace_input(rt, bi, got);
	if (unlikely(tracing))
		trace_fill(rt, s, bi, got);
	node_next_commit(rt, next, got);

	s->tokens -= got;
	stat_add(&s->n_sent, got);
	stat_add(&s->n_total, got);
	stat_add(&s->n_bytes, bytes);
	if (s->cfg.limit && s->n_sent == s->cfg.limit)
		__atomic_store_n(&s->enabled, false, __ATOMIC_RELAXED);
	return got;
}

/* ---- the node ---- */

static uint32_t pg_input_fn(struct node_runtime *rt, struct frame *frame)
{
	(void)frame;
	if (pg_main.graph != rt->graph)
		return 0;
	uint32_t n = 0;
	for (uint32_t i = 0; i < pg_main.n_streams; i++) {
		struct pg_stream *s = pg_main.streams[i];
		if (__atomic_load_n(&s->enabled, __ATOMIC_RELAXED) && s->cfg.thread_index == rt->thread_index)
			n += stream_generate(rt, s);
	}
	return n;
}

static const struct node_reg pg_input_node = {
	.name = "pg-input",
	.type = NODE_TYPE_INPUT,
	.fn = pg_input_fn,
	.n_next = PG_INPUT_N_NEXT,
	.next_nodes = { [PG_INPUT_NEXT_DROP] = "error-drop" },
	.n_errors = PG_INPUT_N_ERROR,
	.error_strings = pg_input_error_strings,
	.format_trace = pg_input_format_trace,
	.default_state = NODE_STATE_POLLING,
	.can_sleep = true,
};
NODE_REGISTER(pg_input_node)
