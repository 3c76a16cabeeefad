/* sample-flow: counts IPv4 packets and bytes per flow, on the arc from
 * ethernet-input to ip4-input (a feature, graph/node.h), and hands the
 * frame on whole and unchanged.
 *
 * A flow is (source, destination, protocol, source port, destination
 * port); ports are 0 for protocols other than TCP and UDP and for
 * fragments after the first (RFC 791 section 3.1: only the first carries
 * the transport header). Each thread keeps its own table in its runtime
 * data, so nothing is shared per packet and nothing is allocated.
 *
 * Next nodes: ip4-input.
 * Errors (counted, the packet still goes on): table full, short header.
 * Trace: the flow and its packet count so far.
 */
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "graph/node.h"
#include "sample.h"

enum { SAMPLE_NEXT_IP4_INPUT = 0, SAMPLE_N_NEXT };

enum sample_error {
	SAMPLE_ERROR_TABLE_FULL = 0,
	SAMPLE_ERROR_SHORT,
	SAMPLE_N_ERROR,
};

static const char *const sample_error_strings[SAMPLE_N_ERROR] = {
	[SAMPLE_ERROR_TABLE_FULL] = "flow table full (not counted per flow)",
	[SAMPLE_ERROR_SHORT] = "IPv4 header shorter than 20 bytes (not counted per flow)",
};

struct sample_trace {
	uint32_t src, dst;
	uint16_t sport, dport;
	uint8_t proto, counted;
	uint64_t packets;
};
_Static_assert(sizeof(struct sample_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int sample_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct sample_trace t;
	memcpy(&t, detail, sizeof(t));
	if (!t.counted)
		return snprintf(buf, len, "not counted");
	return snprintf(buf, len, "flow %u.%u.%u.%u:%u -> %u.%u.%u.%u:%u proto %u, packet %llu", t.src >> 24,
			(t.src >> 16) & 255, (t.src >> 8) & 255, t.src & 255, t.sport, t.dst >> 24, (t.dst >> 16) & 255,
			(t.dst >> 8) & 255, t.dst & 255, t.dport, t.proto, (unsigned long long)t.packets);
}

/* The slot of key k in the table, claimed when new; NULL when full. */
static struct sample_flow *flow_slot(struct sample_flows *ft, const struct sample_flow *k)
{
	uint32_t h = k->src * 0x9e3779b1u ^ k->dst * 0x85ebca6bu ^ ((uint32_t)k->sport << 16 | k->dport) * 0xc2b2ae35u ^
		     k->proto;
	h ^= h >> 15;
	for (uint32_t i = 0; i < SAMPLE_PROBE; i++) {
		struct sample_flow *f = &ft->flow[(h + i) & (SAMPLE_FLOWS_MAX - 1)];
		if (f->used && f->src == k->src && f->dst == k->dst && f->sport == k->sport && f->dport == k->dport &&
		    f->proto == k->proto)
			return f;
		if (!f->used) {
			if (ft->n_used >= sample_conf.max_flows)
				return NULL;
			/* The key field by field (a free slot's counts are 0):
			 * `used` is the stats segment reader's (sample_stats.c)
			 * to load while this runs, set after the key, which it
			 * then takes as final. */
			f->src = k->src;
			f->dst = k->dst;
			f->sport = k->sport;
			f->dport = k->dport;
			f->proto = k->proto;
			__atomic_store_n(&f->used, 1, __ATOMIC_RELEASE);
			ft->n_used++;
			return f;
		}
	}
	return NULL;
}

static void count_one(struct node_runtime *rt, struct sample_flows *ft, struct buffer *b)
{
	const uint8_t *ip = buffer_data_area(b) + b->l3_offset;
	uint32_t avail = (uint32_t)(b->current_data + b->current_length - b->l3_offset);
	struct sample_flow k = { 0 };
	struct sample_flow *f = NULL;
	uint32_t ihl = (ip[0] & 15u) * 4;
	if (unlikely(avail < 20 || ihl < 20)) {
		node_count_error(rt, SAMPLE_ERROR_SHORT, 1);
	} else {
		k.src = get32(ip + 12);
		k.dst = get32(ip + 16);
		k.proto = ip[9];
		/* Ports for the first fragment (offset 0) of TCP and UDP. */
		if ((k.proto == 6 || k.proto == 17) && !(get16(ip + 6) & 0x1fff) && avail >= ihl + 4) {
			k.sport = get16(ip + ihl);
			k.dport = get16(ip + ihl + 2);
		}
		f = flow_slot(ft, &k);
		if (likely(f != NULL)) {
			/* Relaxed stores (plain moves): the stats segment's
			 * thread reads them while this thread counts. */
			__atomic_store_n(&f->packets, f->packets + 1, __ATOMIC_RELAXED);
			__atomic_store_n(&f->bytes, f->bytes + get16(ip + 2), __ATOMIC_RELAXED);
		} else {
			node_count_error(rt, SAMPLE_ERROR_TABLE_FULL, 1);
		}
	}
	if (unlikely(b->flags & BUFFER_F_TRACED)) {
		uint8_t *detail = node_trace_detail(rt, b);
		struct sample_trace t = { .src = k.src, .dst = k.dst, .sport = k.sport, .dport = k.dport,
					  .proto = k.proto, .counted = f != NULL, .packets = f ? f->packets : 0 };
		if (detail)
			memcpy(detail, &t, sizeof(t));
	}
}

/* Headers four ahead are prefetched; the frame goes on whole. */
static uint32_t sample_fn(struct node_runtime *rt, struct frame *fr)
{
	struct sample_flows *ft = rt->data;
	const uint32_t n = fr->n_vectors;
	for (uint32_t i = 0; i < n; i++) {
		if (i + 4 < n) {
			struct buffer *p = buffer_get(fr->buffers[i + 4]);
			__builtin_prefetch(p);
			__builtin_prefetch(buffer_data_area(p) + p->l3_offset);
		}
		count_one(rt, ft, buffer_get(fr->buffers[i]));
	}
	node_forward_frame(rt, SAMPLE_NEXT_IP4_INPUT, fr);
	return n;
}

static const struct node_reg sample_node = {
	.name = "sample-flow",
	.type = NODE_TYPE_INTERNAL,
	.fn = sample_fn,
	.n_next = SAMPLE_N_NEXT,
	.next_nodes = { [SAMPLE_NEXT_IP4_INPUT] = "ip4-input" },
	.n_errors = SAMPLE_N_ERROR,
	.error_strings = sample_error_strings,
	.format_trace = sample_format_trace,
	.runtime_data_size = sizeof(struct sample_flows),
};
NODE_REGISTER(sample_node)

/* On the IPv4 path: ethernet-input -> sample-flow -> ip4-input. */
static const struct node_feature sample_feature = {
	.node = "sample-flow", .from = "ethernet-input", .to = "ip4-input",
};
NODE_FEATURE_REGISTER(sample_feature)
