/* sched-ingress: classifies received packets into the scheduling classes
 * (sched/class.h) and passes them on in priority order.
 *
 * On the rx thread, between the input nodes and ethernet-input (or the
 * distributor, which re-points this node's arc as it does the inputs').
 * The input nodes send here only while a class is defined (one test per
 * burst, sched_classes_active); otherwise this node is not in the path.
 * Each packet gets the id of the first class, in definition order, whose
 * match it meets (DSCP and protocol from an IPv4 header, or the DSCP of
 * the Traffic Class and the Next Header of an IPv6 fixed header (RFC 8200
 * §7, RFC 2474: the same six bits; extension headers are not walked), after
 * one VLAN tag at most; or the rx interface), stored in its buffer flags for
 * sched-egress; no match is class 0, the lowest priority. The frame then
 * leaves class by class: priority 0 first, and among the classes of one
 * priority, round robin taking up to `weight` packets of each per turn.
 * Within a class the order of arrival is kept. A frame that is all one
 * class goes on whole.
 *
 * With workers (a distributor attached, sched_front_on): each packet goes
 * into its class's queue for sched-dist instead, which hands the workers
 * only what they have room for, by priority (nodes/sched/sched_io.h); a full
 * class queue drops the packet here.
 *
 * Next nodes: ethernet-input, error-drop.
 * Errors: class queue full (workers busy: the class's queue holds
 *   class-queue-depth packets, 1024 by default).
 * Trace: class id and name, priority, type, DSCP and IP protocol (IPv6:
 *   next header) seen, or "not IP", and "queued for the workers" when it was.
 * CLI: `sched class ...`, `no sched class NAME`, `show sched` (packets per
 *   class), `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/dist/dist_graph.h"
#include "nodes/sched/sched_io.h"

enum sched_ingress_next {
	SCHED_INGRESS_NEXT_ETHERNET_INPUT = 0,
	SCHED_INGRESS_NEXT_DROP,
	SCHED_INGRESS_N_NEXT,
};

enum sched_ingress_error {
	SCHED_INGRESS_ERROR_QUEUE_FULL = 0,
	SCHED_INGRESS_N_ERROR,
};

static const char *const sched_ingress_error_strings[SCHED_INGRESS_N_ERROR] = {
	[SCHED_INGRESS_ERROR_QUEUE_FULL] = "class queue full",
};

#define NOT_IP 0xffff

struct sched_ingress_trace {
	uint16_t dscp;  /* NOT_IP when the packet is neither IPv4 nor IPv6 */
	uint8_t proto;
	uint8_t ip6;    /* dscp and proto are an IPv6 header's */
	uint8_t class_id;
	uint8_t priority;
	uint8_t type;   /* enum sched_type */
	uint8_t queued; /* into the class queue for the workers */
	char name[SCHED_CLASS_NAME_SIZE];
};
_Static_assert(sizeof(struct sched_ingress_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int sched_ingress_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct sched_ingress_trace t;
	memcpy(&t, detail, sizeof(t));
	int n = snprintf(buf, len, "class %u %.*s priority %u type %s", t.class_id, SCHED_CLASS_NAME_SIZE,
			 t.class_id ? t.name : "(none)", t.priority,
			 t.type < SCHED_N_TYPES ? sched_type_names[t.type] : "?");
	if (n < 0 || (size_t)n >= len)
		return n;
	if (t.dscp == NOT_IP)
		n += snprintf(buf + n, len - (size_t)n, ", not IP");
	else if (t.ip6)
		n += snprintf(buf + n, len - (size_t)n, ", IPv6 dscp %u next header %u", t.dscp, t.proto);
	else
		n += snprintf(buf + n, len - (size_t)n, ", dscp %u protocol %u", t.dscp, t.proto);
	if (n < 0 || (size_t)n >= len || !t.queued)
		return n;
	return n + snprintf(buf + n, len - (size_t)n, ", queued for the workers");
}

/* ---- helpers ---- */

/* classified[] first: `show sched` reads it from every thread's runtime. */
struct sched_ingress_data {
	uint64_t classified[SCHED_MAX_CLASSES];
	uint16_t n[SCHED_MAX_CLASSES];
	uint32_t q[SCHED_MAX_CLASSES][FRAME_SIZE];
	uint16_t tag[SCHED_MAX_CLASSES][FRAME_SIZE]; /* flow tags, with workers */
};

enum { FIELDS_NONE = 0, FIELDS_IP4, FIELDS_IP6 };

/* The IPv4 TOS byte and protocol, or the IPv6 Traffic Class and Next
 * Header; FIELDS_NONE when the frame is neither. */
static inline int ip_fields(const struct buffer *b, uint8_t *tos, uint8_t *proto)
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
	if (type == 0x86dd && len >= off + 40 && (p[off] >> 4) == 6) {
		*tos = (uint8_t)(p[off] << 4 | p[off + 1] >> 4);
		*proto = p[off + 6];
		return FIELDS_IP6;
	}
	if (type != 0x0800 || len < off + 20 || (p[off] >> 4) != 4)
		return FIELDS_NONE;
	*tos = p[off + 1];
	*proto = p[off + 9];
	return FIELDS_IP4;
}

/* The first class, in definition order, that b matches; 0 for none. */
static inline uint32_t classify(const struct sched_class_table *t, const struct buffer *b, uint16_t *dscp,
				uint8_t *proto, int *kind)
{
	uint8_t tos = 0;
	*kind = ip_fields(b, &tos, proto);
	bool ip = *kind != FIELDS_NONE;
	*dscp = ip ? (uint16_t)(tos >> 2) : NOT_IP;
	for (uint32_t k = 0; k < t->n; k++) {
		const struct sched_class *c = &t->cls[t->order[k]];
		bool hit = c->match == SCHED_MATCH_INTERFACE ? b->rx_if == c->value
			   : !ip                              ? false
			   : c->match == SCHED_MATCH_DSCP      ? *dscp == c->value
							       : *proto == c->value;
		if (hit)
			return t->order[k];
	}
	return 0;
}

static void trace_packet(struct node_runtime *rt, struct buffer *b, uint32_t id, uint16_t dscp, uint8_t proto,
			 int kind)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	struct sched_ingress_trace t = {
		.dscp = dscp,
		.proto = proto,
		.ip6 = kind == FIELDS_IP6,
		.class_id = (uint8_t)id,
		.priority = sched_class_table.prio[id],
		.type = sched_class_table.type[id],
		.queued = sched_front_on(rt->thread_index),
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

/* With workers: each class's packets into its queue, in arrival order;
 * what a full queue refuses is dropped here. One enqueue per class: the
 * evq stops a burst at its first full queue, which must not cost the
 * other classes their place. */
static void to_front(struct node_runtime *rt, const struct sched_class_table *t, uint32_t used)
{
	struct sched_ingress_data *d = rt->data;
	struct sched_front *fr = &sched_front;
	struct evq_event ev[FRAME_SIZE];
	for (; used; used &= used - 1) {
		uint32_t id = (uint32_t)__builtin_ctz(used), n = d->n[id];
		const uint32_t *bi = d->q[id];
		for (uint32_t i = 0; i < n; i++)
			ev[i] = (struct evq_event){ .flow = d->tag[id][i], .queue = (uint8_t)id, .priority = t->prio[id],
						    .buffer_index = bi[i] };
		uint32_t taken = evq_enqueue(fr->evq, ev, n);
		stat_add(&fr->queued[id], taken);
		if (likely(taken == n))
			continue;
		stat_add(&fr->queue_full[id], n - taken);
		for (uint32_t i = taken; i < n; i++)
			buffer_get(bi[i])->error = node_error(rt, SCHED_INGRESS_ERROR_QUEUE_FULL);
		node_enqueue(rt, SCHED_INGRESS_NEXT_DROP, bi + taken, n - taken);
	}
}

/* ---- the node ---- */

static uint32_t sched_ingress_fn(struct node_runtime *rt, struct frame *f)
{
	struct sched_ingress_data *d = rt->data;
	const struct sched_class_table *t = &sched_class_table;
	const uint32_t n = f->n_vectors;
	const bool front = sched_front_on(rt->thread_index);
	uint32_t used = 0; /* bit per class id seen */
	memset(d->n, 0, sizeof(d->n));
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		uint16_t dscp;
		uint8_t proto = 0;
		int kind;
		uint32_t id = classify(t, b, &dscp, &proto, &kind);
		sched_buffer_set_class(b, id);
		if (front)
			d->tag[id][d->n[id]] = dist_buffer_tag(b);
		d->q[id][d->n[id]++] = f->buffers[i];
		used |= 1u << id;
		if (unlikely(b->flags & BUFFER_F_TRACED))
			trace_packet(rt, b, id, dscp, proto, kind);
	}
	for (uint32_t id = 0; id < SCHED_MAX_CLASSES; id++)
		if (d->n[id])
			stat_add(&d->classified[id], d->n[id]);
	if (front) {
		to_front(rt, t, used);
		return n;
	}
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
	.next_nodes = { [SCHED_INGRESS_NEXT_ETHERNET_INPUT] = "ethernet-input",
			[SCHED_INGRESS_NEXT_DROP] = "error-drop" },
	.n_errors = SCHED_INGRESS_N_ERROR,
	.error_strings = sched_ingress_error_strings,
	.format_trace = sched_ingress_format_trace,
	.runtime_data_size = sizeof(struct sched_ingress_data),
};
NODE_REGISTER(sched_ingress_node)
