/* The distributor in the graph: flow tags from packets, and attaching,
 * draining and detaching a distributor (nodes/dist/dist_graph.h).
 *
 * Attached, the main thread is the rx thread: every input node whose arc
 * led to ethernet-input (and sched-ingress, which sits between them) now
 * leads to `distributor`, distributor-flush polls
 * there, and each worker runs handoff-input -> ethernet-input -> ... and
 * transmits itself.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h"
#include "base/toeplitz.h"
#include "nodes/dist/dist_graph.h"

#define MAX_REPOINTED 64

static struct dist *attached;
static dist_type_fn_t *type_fn;
static struct {
	uint32_t node;
	uint16_t next;
} repointed[MAX_REPOINTED];
static uint32_t n_repointed;
static const struct dist_front *front;

void dist_graph_set_front(const struct dist_front *f)
{
	front = f;
}

static uint64_t front_held(void)
{
	return front ? front->held() : 0;
}

struct dist *dist_attached(void)
{
	return __atomic_load_n(&attached, __ATOMIC_ACQUIRE);
}

void dist_graph_set_type_fn(dist_type_fn_t *fn)
{
	__atomic_store_n(&type_fn, fn, __ATOMIC_RELEASE);
}

dist_type_fn_t *dist_graph_type_fn(void)
{
	return __atomic_load_n(&type_fn, __ATOMIC_ACQUIRE);
}

/* ---- flow tags ---- */

#define ETH_TYPE_VLAN 0x8100
#define ETH_TYPE_IP6 0x86dd
#define IP_PROTO_TCP 6
#define IP_PROTO_UDP 17

static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The software hash of one frame, as a NIC configured for IPv4/IPv6 with
 * TCP and UDP ports would compute it. */
static uint32_t software_hash(const struct toeplitz_table *t, const uint8_t *p, uint32_t len)
{
	if (len < 14)
		return 0;
	uint32_t off = 12;
	uint16_t type = be16(p + off);
	if (type == ETH_TYPE_VLAN && len >= 18) {
		off += 4;
		type = be16(p + off);
	}
	off += 2;
	if (type == 0x0800 && len >= off + 20 && (p[off] >> 4) == 4) {
		uint32_t ihl = (p[off] & 0xfu) * 4;
		uint8_t proto = p[off + 9];
		bool frag = (be16(p + off + 6) & 0x3fff) != 0; /* MF or an offset */
		const uint8_t *ports = NULL;
		if (!frag && (proto == IP_PROTO_TCP || proto == IP_PROTO_UDP) && ihl >= 20 && len >= off + ihl + 4)
			ports = p + off + ihl;
		return toeplitz_hash_ip4(t, p + off + 12, ports);
	}
	if (type == ETH_TYPE_IP6 && len >= off + 40 && (p[off] >> 4) == 6) {
		uint8_t nh = p[off + 6];
		const uint8_t *ports = NULL;
		if ((nh == IP_PROTO_TCP || nh == IP_PROTO_UDP) && len >= off + 44)
			ports = p + off + 40;
		return toeplitz_hash_ip6(t, p + off + 8, ports);
	}
	return toeplitz_hash_table(t, p, 12); /* not IP: the MAC pair */
}

uint16_t dist_buffer_tag(struct buffer *b)
{
	if (!(b->flags & BUFFER_F_FLOW_HASH)) {
		b->flow_hash = software_hash(toeplitz_default_table(), buffer_data(b), b->current_length);
		b->flags |= BUFFER_F_FLOW_HASH;
	}
	b->flow_tag = (uint16_t)(b->flow_hash & HANDOFF_TAG_MASK);
	return b->flow_tag;
}

/* ---- attach, drain, detach ---- */

int dist_graph_attach(struct graph *g, struct dist *d, char *err, size_t errlen)
{
	int dist_node = graph_node_index(g, "distributor");
	int flush = graph_node_index(g, "distributor-flush");
	int hin = graph_node_index(g, "handoff-input");
	int eth = graph_node_index(g, "ethernet-input");
	if (dist_node < 0 || flush < 0 || hin < 0 || eth < 0) {
		snprintf(err, errlen, "distributor: the graph lacks distributor, distributor-flush, handoff-input "
				      "or ethernet-input");
		return -ENOENT;
	}
	if (graph_n_threads(g) != dist_n_workers(d) + 1) {
		snprintf(err, errlen, "distributor: %u workers configured, %u running", dist_n_workers(d),
			 graph_n_threads(g) - 1);
		return -EINVAL;
	}
	__atomic_store_n(&attached, d, __ATOMIC_RELEASE);
	n_repointed = 0;
	/* The inputs, and sched-ingress between them and ethernet-input. */
	int sin = graph_node_index(g, "sched-ingress");
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		if ((graph_node_reg(g, n)->type != NODE_TYPE_INPUT && (int)n != sin) || (int)n == hin)
			continue;
		for (uint16_t k = 0; graph_node_next(g, n, k) >= 0; k++) {
			if (graph_node_next(g, n, k) != eth || n_repointed == MAX_REPOINTED)
				continue;
			int rc = graph_set_next(g, n, k, "distributor", err, errlen);
			if (rc)
				return rc;
			repointed[n_repointed].node = n;
			repointed[n_repointed++].next = k;
		}
	}
	graph_node_set_state(g, 0, (uint32_t)flush, NODE_STATE_POLLING);
	for (uint32_t t = 1; t < graph_n_threads(g); t++) {
		graph_node_set_state(g, t, (uint32_t)hin, NODE_STATE_POLLING);
		/* The workers wake with the rx thread, not after it (graph/sleep.c). */
		(void)graph_thread_wake_ahead(g, 0, t, true);
	}
	return 0;
}

uint64_t dist_graph_drain(struct graph *g, struct dist *d, uint64_t timeout_ns)
{
	int flush = graph_node_index(g, "distributor-flush");
	int fnode = front ? graph_node_index(g, front->node) : -1;
	for (uint32_t n = 0; n < graph_n_nodes(g); n++)
		if (graph_node_reg(g, n)->type == NODE_TYPE_INPUT && (int)n != flush && (int)n != fnode)
			graph_node_set_state(g, 0, n, NODE_STATE_DISABLED);
	uint64_t deadline = time_now_ns() + timeout_ns;
	graph_main_poll(g);
	while ((dist_outstanding(d) || front_held()) && time_now_ns() < deadline) {
		if (!graph_main_poll(g)) {
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
	}
	return dist_outstanding(d) + front_held();
}

uint64_t dist_graph_detach(struct graph *g, struct dist *d)
{
	uint32_t bi[256], k;
	uint64_t freed = front ? front->release(g) : 0;
	while ((k = dist_reclaim(d, bi, ARRAY_LEN(bi))) != 0) {
		buffer_free(bi, k);
		freed += k;
	}
	char err[256];
	for (uint32_t i = 0; i < n_repointed; i++)
		graph_set_next(g, repointed[i].node, repointed[i].next, "ethernet-input", err, sizeof(err));
	n_repointed = 0;
	int flush = graph_node_index(g, "distributor-flush");
	if (flush >= 0)
		graph_node_set_state(g, 0, (uint32_t)flush, NODE_STATE_DISABLED);
	for (uint32_t t = 1; t < graph_n_threads(g); t++)
		(void)graph_thread_wake_ahead(g, 0, t, false);
	__atomic_store_n(&attached, NULL, __ATOMIC_RELEASE);
	return freed;
}
