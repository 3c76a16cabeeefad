/* The hardening packet graph (see pkt_graph.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"
#include "nodes/ip6/ip6_dad.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_route.h"
#include "sched/class.h"
#include "tests/fuzz/pkt_graph.h"

static const uint8_t port_mac[PKT_N_PORTS][6] = {
	{ 0x02, 0, 0, 0, 0, 0x0a }, { 0x02, 0, 0, 0, 0, 0x0b }, { 0x02, 0, 0, 0, 0, 0x0c } };
static const uint8_t mac_ha[6] = { 0x02, 0xaa, 0, 0, 0, 0x01 };
static const uint8_t mac_hb[6] = { 0x02, 0xbb, 0, 0, 0, 0x01 };

static struct graph *g;
static struct device *ports[PKT_N_PORTS];
static uint32_t inq[FRAME_SIZE];
static uint32_t n_inq;

/* ---- the test input node ---- */

enum { PKT_INPUT_NEXT_ETHERNET_INPUT = 0, PKT_INPUT_NEXT_SCHED_INGRESS, PKT_INPUT_N_NEXT };

/* As device-input: sched-ingress first while a scheduling class is defined. */
static uint32_t pkt_input_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	uint32_t n = n_inq;
	if (n) {
		node_trace_input(rt, inq, n);
		node_enqueue(rt, sched_classes_active() ? PKT_INPUT_NEXT_SCHED_INGRESS : PKT_INPUT_NEXT_ETHERNET_INPUT,
			     inq, n);
	}
	n_inq = 0;
	return n;
}

static const struct node_reg pkt_input_node = {
	.name = "hardening-input",
	.type = NODE_TYPE_INPUT,
	.fn = pkt_input_fn,
	.n_next = PKT_INPUT_N_NEXT,
	.next_nodes = { [PKT_INPUT_NEXT_ETHERNET_INPUT] = "ethernet-input",
			[PKT_INPUT_NEXT_SCHED_INGRESS] = "sched-ingress" },
};
NODE_REGISTER(pkt_input_node)

/* ---- set-up ---- */

static struct device *port_create(const char *name, uint32_t i, char *err, size_t errlen)
{
	struct device *d = dev_create(name, "null", NULL, 0, err, errlen);
	if (!d)
		return NULL;
	memcpy(d->mac, port_mac[i], 6);
	if (dev_set_admin_up(d, true) != 0) {
		snprintf(err, errlen, "%s: admin up failed", name);
		return NULL;
	}
	return d;
}

static int learn(uint32_t port, uint32_t ip, const uint8_t mac[6])
{
	uint64_t now = time_now_ns();
	ip4_nbr_lock();
	struct ip4_nbr *n = ip4_nbr_create(ports[port]->index, htonl(ip), now);
	if (n)
		ip4_nbr_learn(n, mac, now);
	ip4_nbr_unlock();
	return n ? 0 : -1;
}

/* IPv6 on a and b, A's and B's MACs static, the route kinds (pkt_graph.h).
 * No Duplicate Address Detection: its probes would be frames sent out of a
 * and b. */
static int add_ip6(char *err, size_t errlen)
{
	static const char *const addr[4] = { "2001:db8:1::1", "2001:db8:2::1", "2001:db8:1::2", "2001:db8:2::2" };
	struct in6_addr a[4];
	for (uint32_t i = 0; i < 4; i++)
		inet_pton(AF_INET6, addr[i], &a[i]);
	ip6_dad_transmits = 0;
	if (ip6_if_addr_add(ports[PKT_PORT_A]->index, &a[0], 64, err, errlen) != 0 ||
	    ip6_if_addr_add(ports[PKT_PORT_B]->index, &a[1], 64, err, errlen) != 0 ||
	    ip6_nbr_set(ports[PKT_PORT_A]->index, &a[2], mac_ha, true, err, errlen) != 0 ||
	    ip6_nbr_set(ports[PKT_PORT_B]->index, &a[3], mac_hb, true, err, errlen) != 0)
		return -1;
	/* The route kinds, as IPv4's (pkt_graph.h). */
	const uint8_t kinds[3] = { IP6_ADJ_BLACKHOLE, IP6_ADJ_UNREACH, IP6_ADJ_PROHIBIT };
	for (uint32_t k = 0; k < 3; k++) {
		struct ip6_route_path p = { .kind = kinds[k] };
		struct in6_addr prefix = { .s6_addr = { 0x20, 0x01, 0x0d, 0xb8, 0x00, (uint8_t)(0x66 + k) } };
		if (ip6_route_src_set(IP6_SRC_CLI, &prefix, 48, &p, 1, err, errlen) != 0)
			return -1;
	}
	return 0;
}

/* The route kinds and an ECMP route (pkt_graph.h). */
static int add_routes(char *err, size_t errlen)
{
	const uint8_t kinds[3] = { IP4_ADJ_BLACKHOLE, IP4_ADJ_UNREACH, IP4_ADJ_PROHIBIT };
	for (uint32_t k = 0; k < 3; k++) {
		struct ip4_route_path p = { .kind = kinds[k] };
		if (ip4_route_src_add(IP4_SRC_CLI, htonl(0x0a420000u + (k << 16)), 16, &p, err, errlen) != 0)
			return -1;
	}
	const struct ip4_route_path mp[2] = {
		{ .kind = IP4_ADJ_REWRITE, .next_hop = htonl(0x0a010002u), .if_index = ports[PKT_PORT_A]->index },
		{ .kind = IP4_ADJ_REWRITE, .next_hop = htonl(0x0a020002u), .if_index = ports[PKT_PORT_B]->index },
	};
	return ip4_route_src_set(IP4_SRC_CLI, htonl(0x0a090000u), 16, mp, 2, err, errlen);
}

int pkt_graph_init(char *err, size_t errlen)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 8192;
	bc.page_size = 4096;
	if (buffer_main_init(&bc, err, errlen) != 0)
		return -1;
	n_inq = 0;
	g = graph_create(NULL, err, errlen);
	if (!g || graph_add_registered(g, err, errlen) != 0 || graph_build(g, err, errlen) != 0 ||
	    dev_graph_attach(g, err, errlen) != 0)
		return -1;
	static const char *const names[PKT_N_PORTS] = { "a", "b", "c" };
	for (uint32_t i = 0; i < PKT_N_PORTS; i++)
		if (!(ports[i] = port_create(names[i], i, err, errlen)))
			return -1;
	if (ip4_if_addr_add(ports[PKT_PORT_A]->index, htonl(0x0a010001u), 24, err, errlen) != 0 ||
	    ip4_if_addr_add(ports[PKT_PORT_B]->index, htonl(0x0a020001u), 24, err, errlen) != 0)
		return -1;
	if (add_routes(err, errlen) != 0 || add_ip6(err, errlen) != 0)
		return -1;
	if (dev_set_xconnect(ports[PKT_PORT_C], ports[PKT_PORT_B]) != 0) {
		snprintf(err, errlen, "c: xconnect failed");
		return -1;
	}
	if (learn(PKT_PORT_A, 0x0a010002u, mac_ha) != 0 || learn(PKT_PORT_B, 0x0a020002u, mac_hb) != 0) {
		snprintf(err, errlen, "neighbour table full");
		return -1;
	}
	/* The ip4-neighbor process node (every millisecond) applies both. */
	int nbr = graph_node_index(g, "ip4-neighbor");
	uint64_t end = time_now_ns() + 2000000000ull;
	while (nbr >= 0 && graph_node_error_count(g, (uint32_t)nbr, 1) < 2 && time_now_ns() < end) {
		graph_main_poll(g);
		usleep(200);
	}
	if (nbr < 0 || graph_node_error_count(g, (uint32_t)nbr, 1) < 2) {
		snprintf(err, errlen, "neighbours A and B not applied to the FIB");
		return -1;
	}
	graph_clear_errors(g);
	return 0;
}

uint32_t pkt_graph_fini(void)
{
	pkt_graph_run();
	dev_graph_detach(g);
	if (g)
		graph_destroy(g);
	g = NULL;
	ip4_main_free();
	ip6_main_free();
	sched_class_clear();
	dev_delete_all();
	memset(ports, 0, sizeof(ports));
	uint32_t left = buffer_n_in_use();
	buffer_thread_unregister();
	buffer_main_free();
	return left;
}

struct graph *pkt_graph(void)
{
	return g;
}

/* ---- packets ---- */

int pkt_graph_inject(uint32_t port, const uint8_t *bytes, uint32_t len)
{
	if (n_inq == FRAME_SIZE)
		pkt_graph_run();
	/* Beyond one buffer: a chain, as a driver receiving a jumbo frame makes it. */
	uint32_t bi = buffer_chain_from_bytes(bytes, len, -1);
	if (bi == BUFFER_INVALID)
		return -1;
	struct buffer *head = buffer_get(bi);
	head->rx_if = port < PKT_N_PORTS ? ports[port]->index : DEV_INDEX_INVALID - 1;
	inq[n_inq++] = bi;
	return 0;
}

void pkt_graph_run(void)
{
	/* One poll takes the queue through the graph; a few more let arcs
	 * added at run time and the process nodes settle. */
	for (int i = 0; i < 4; i++)
		graph_main_poll(g);
}

uint32_t pkt_graph_if_index(uint32_t port)
{
	return ports[port]->index;
}

uint64_t pkt_graph_tx(uint32_t port)
{
	uint64_t n = 0;
	for (uint16_t q = 0; q < ports[port]->n_tx_queues; q++)
		n += ports[port]->txq[q].c.tx_packets;
	return n;
}

void pkt_graph_feed(const uint8_t *data, size_t size)
{
	while (size >= 3) {
		uint32_t port = data[0] % (PKT_N_PORTS + 1);
		uint32_t len = (uint32_t)(data[1] << 8 | data[2]);
		data += 3;
		size -= 3;
		if (len > size)
			len = (uint32_t)size;
		pkt_graph_inject(port, data, len);
		data += len;
		size -= len;
	}
	pkt_graph_run();
}
