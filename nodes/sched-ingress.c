/* sched-ingress: classifies received packets into the scheduling classes
 * (sched/class.h) and passes them on in priority order.
 *
 * On the rx thread, between the input nodes and ethernet-input (or the
 * distributor, which re-points this node's arc as it does the inputs').
 * The input nodes send here only while a class is defined (one test per
 * burst, sched_classes_active); otherwise this node is not in the path.
 * Each packet gets the id of the first class, in definition order, whose
 * match it meets (DSCP and protocol from an IPv4 header, after one VLAN
 * tag at most; or the rx interface), stored in its buffer flags for
 * sched-egress; no match is class 0, the lowest priority. The frame then
 * leaves class by class: priority 0 first, and among the classes of one
 * priority, round robin taking up to `weight` packets of each per turn.
 * Within a class the order of arrival is kept. A frame that is all one
 * class goes on whole.
 *
 * Next nodes: ethernet-input.
 * Errors: none.
 * Trace: class id and name, priority, DSCP and IP protocol seen (or "not
 *   IPv4").
 * CLI: `sched class ...`, `no sched class NAME`, `show sched` (packets per
 *   class), `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"
#include "nodes/sched_io.h"

enum sched_ingress_next {
	SCHED_INGRESS_NEXT_ETHERNET_INPUT = 0,
	SCHED_INGRESS_N_NEXT,
};

#define NOT_IP4 0xffff

struct sched_ingress_trace {
	uint16_t dscp;  /* NOT_IP4 when the packet is not IPv4 */
	uint8_t proto;
	uint8_t class_id;
	uint8_t priority;
	char name[SCHED_CLASS_NAME_SIZE];
};
_Static_assert(sizeof(struct sched_ingress_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int sched_ingress_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct sched_ingress_trace t;
	memcpy(&t, detail, sizeof(t));
	int n = snprintf(buf, len, "class %u %.*s priority %u", t.class_id, SCHED_CLASS_NAME_SIZE,
			 t.class_id ? t.name : "(none)", t.priority);
	if (n < 0 || (size_t)n >= len)
		return n;
	if (t.dscp == NOT_IP4)
		return n + snprintf(buf + n, len - (size_t)n, ", not IPv4");
	return n + snprintf(buf + n, len - (size_t)n, ", dscp %u protocol %u", t.dscp, t.proto);
}

/* ---- helpers ---- */

/* classified[] first: `show sched` reads it from every thread's runtime. */
struct sched_ingress_data {
	uint64_t classified[SCHED_MAX_CLASSES];
	uint16_t n[SCHED_MAX_CLASSES];
	uint32_t q[SCHED_MAX_CLASSES][FRAME_SIZE];
};

/* The IPv4 TOS byte and protocol, or false when the frame is not IPv4. */
static inline bool ip4_fields(const struct buffer *b, uint8_t *tos, uint8_t *proto)
{
	const uint8_t *p = buffer_data((struct buffer *)b);
	uint32_t off = 12, len = b->current_length;
	if (len < 14)
		return false;
	uint16_t type = (uint16_t)(p[off] << 8 | p[off + 1]);
	if (type == 0x8100 && len >= 18) {
		off += 4;
		type = (uint16_t)(p[off] << 8 | p[off + 1]);
	}
	off += 2;
	if (type != 0x0800 || len < off + 20 || (p[off] >> 4) != 4)
		return false;
	*tos = p[off + 1];
	*proto = p[off + 9];
	return true;
}

/* The first class, in definition order, that b matches; 0 for none. */
static inline uint32_t classify(const struct sched_class_table *t, const struct buffer *b, uint16_t *dscp,
				uint8_t *proto)
{
	uint8_t tos = 0;
	bool ip4 = ip4_fields(b, &tos, proto);
	*dscp = ip4 ? (uint16_t)(tos >> 2) : NOT_IP4;
	for (uint32_t k = 0; k < t->n; k++) {
		const struct sched_class *c = &t->cls[t->order[k]];
		bool hit = c->match == SCHED_MATCH_INTERFACE ? b->rx_if == c->value
			   : !ip4                             ? false
			   : c->match == SCHED_MATCH_DSCP      ? *dscp == c->value
							       : *proto == c->value;
		if (hit)
			return t->order[k];
	}
	return 0;
}

static void trace_packet(struct node_runtime *rt, struct buffer *b, uint32_t id, uint16_t dscp, uint8_t proto)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	struct sched_ingress_trace t = {
		.dscp = dscp,
		.proto = proto,
		.class_id = (uint8_t)id,
		.priority = sched_class_table.prio[id],
	};
	memcpy(t.name, sched_class_table.cls[id].name, sizeof(t.name));
	memcpy(detail, &t, sizeof(t));
}

/* The classes of priority p (class 0 counts as the lowest priority), in
 * turns of up to weight packets each until all are empty. */
static void emit_priority(struct node_runtime *rt, const struct sched_class_table *t, uint32_t p)
{
	struct sched_ingress_data *d = rt->data;
	uint32_t ids[SCHED_MAX_CLASSES], n_ids = 0;
	uint16_t at[SCHED_MAX_CLASSES] = { 0 };
	for (uint32_t id = 0; id < SCHED_MAX_CLASSES; id++)
		if (d->n[id] && t->prio[id] == p)
			ids[n_ids++] = id;
	for (uint32_t left = n_ids; left;) {
		left = 0;
		for (uint32_t k = 0; k < n_ids; k++) {
			uint32_t id = ids[k];
			uint32_t w = id ? t->cls[id].weight : 1;
			uint32_t take = MIN(w, (uint32_t)(d->n[id] - at[id]));
			node_enqueue(rt, SCHED_INGRESS_NEXT_ETHERNET_INPUT, &d->q[id][at[id]], take);
			at[id] = (uint16_t)(at[id] + take);
			left += at[id] < d->n[id];
		}
	}
}

/* ---- the node ---- */

static uint32_t sched_ingress_fn(struct node_runtime *rt, struct frame *f)
{
	struct sched_ingress_data *d = rt->data;
	const struct sched_class_table *t = &sched_class_table;
	const uint32_t n = f->n_vectors;
	uint32_t used = 0; /* bit per class id seen */
	memset(d->n, 0, sizeof(d->n));
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		uint16_t dscp;
		uint8_t proto = 0;
		uint32_t id = classify(t, b, &dscp, &proto);
		sched_buffer_set_class(b, id);
		d->q[id][d->n[id]++] = f->buffers[i];
		used |= 1u << id;
		if (unlikely(b->flags & BUFFER_F_TRACED))
			trace_packet(rt, b, id, dscp, proto);
	}
	for (uint32_t id = 0; id < SCHED_MAX_CLASSES; id++)
		if (d->n[id])
			stat_add(&d->classified[id], d->n[id]);
	if (!(used & (used - 1))) { /* one class: the frame as it is */
		node_forward_frame(rt, SCHED_INGRESS_NEXT_ETHERNET_INPUT, f);
		return n;
	}
	for (uint32_t p = 0; p < SCHED_N_PRIO; p++)
		emit_priority(rt, t, p);
	return n;
}

static const struct node_reg sched_ingress_node = {
	.name = "sched-ingress",
	.type = NODE_TYPE_INTERNAL,
	.fn = sched_ingress_fn,
	.n_next = SCHED_INGRESS_N_NEXT,
	.next_nodes = { [SCHED_INGRESS_NEXT_ETHERNET_INPUT] = "ethernet-input" },
	.format_trace = sched_ingress_format_trace,
	.runtime_data_size = sizeof(struct sched_ingress_data),
};
NODE_REGISTER(sched_ingress_node)
