/* Packet harness: bytes -> frames (pkt_graph_feed's records) -> one-thread
 * graph from sched-ingress on (four scheduling classes defined below):
 * sched-ingress, ethernet-input, l2-xconnect, ip4-input,
 * arp-input, ip4-lookup, ip4-local, icmp4-echo, ip4-arp, ip4-rewrite,
 * ip6-input, ip6-lookup, ip6-local, icmp6-echo, ip6-nd, ip6-rewrite,
 * interface-output. The graph lives across inputs (as a router's does);
 * unresolved next hops time out after 1 ms so that held buffers come back.
 * Seeds: tests/fuzz/seeds/pkt (the corpus, from tests/data/corpus/gen.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "nodes/ip4/ip4_neighbor.h"
#include "sched/class.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/pkt_graph.h"

/* The parsing nodes whose every error counter the seeds must reach, but
 * for the few no received frame can cause. */
static const char *const fed_nodes[] = { "ethernet-input", "l2-xconnect", "ip4-input", "arp-input",
					 "ip4-lookup", "ip4-local", "icmp4-echo", "ip4-arp", "ip4-rewrite",
					 "ip6-input", "ip6-lookup", "ip6-local", "icmp6-echo", "ip6-rewrite" };
static const char *const unreachable[] = {
	"rx interface not cross-connected",               /* c is cross-connected for good */
	"ARP hold queue full (dropped)",                  /* needs > 4 packets held for one hop */
	"neighbour table full (dropped)",                 /* needs 512 unresolved hops */
	"no buffer for an ARP request",                   /* needs an empty pool */
	"neighbour resolved but not in the FIB (dropped)", /* a race with ip4-neighbor */
	"output interface gone",                          /* an interface deleted under traffic */
	"IPv6 not enabled on the interface",              /* a and b have IPv6; c is L2; x has no interface */
	"transit: no IPv6 FIB wired (ip6-lookup missing)", /* a build-time choice */
	"no source address for the reply",                /* ip6-input checks the source first */
};

/* One class per kind of match, in this match order, with two sharing a
 * priority so that sched-ingress's weighted turns run. The seeds must put
 * packets in every one and in class 0 (no match). */
static struct sched_class classes[] = {
	{ .name = "ef", .priority = 0, .match = SCHED_MATCH_DSCP, .weight = 1, .value = 46 },
	{ .name = "from-c", .priority = 1, .match = SCHED_MATCH_INTERFACE, .weight = 1 },
	{ .name = "icmp", .priority = 2, .match = SCHED_MATCH_PROTOCOL, .weight = 2, .value = 1 },
	{ .name = "udp", .priority = 2, .match = SCHED_MATCH_PROTOCOL, .weight = 1, .value = 17 },
};
#define N_CLASSES (sizeof(classes) / sizeof(classes[0]))
static int class_ids[N_CLASSES];

/* Packets traced from the start: enough for every seed (the seed check
 * reads sched-ingress's parse from the trace); a fuzz run stops tracing
 * once they are used. */
#define N_TRACED 1024

static void must(int rc, const char *err)
{
	if (rc < 0) {
		fprintf(stderr, "fuzz_pkt: %s\n", err);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	char err[256] = "";
	must(pkt_graph_init(err, sizeof(err)), err);
	ip4_nbr_resolve_timeout_ns = 1000000;
	classes[1].value = pkt_graph_if_index(PKT_PORT_C);
	for (size_t i = 0; i < N_CLASSES; i++)
		must(class_ids[i] = sched_class_set(&classes[i], err, sizeof(err)), err);
	must(graph_trace_add(pkt_graph(), "hardening-input", N_TRACED, err, sizeof(err)), err);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pkt_graph_feed(data, size);
	return 0;
}

static bool is_unreachable(const char *s)
{
	for (size_t i = 0; i < sizeof(unreachable) / sizeof(unreachable[0]); i++)
		if (!strcmp(unreachable[i], s))
			return true;
	return false;
}

/* Every class, and class 0, got packets from sched-ingress. */
static int check_classes(struct graph *g)
{
	int node = graph_node_index(g, "sched-ingress");
	const struct node_runtime *rt = node >= 0 ? graph_node_runtime(g, 0, (uint32_t)node) : NULL;
	const uint64_t *n = rt ? rt->data : NULL; /* its data starts with the per-class counts */
	if (!n) {
		printf("sched-ingress is not in the graph\n");
		return 1;
	}
	int bad = 0;
	for (size_t i = 0; i <= N_CLASSES; i++) {
		int id = i < N_CLASSES ? class_ids[i] : 0;
		const char *name = i < N_CLASSES ? classes[i].name : "(none)";
		printf("%-16s %8llu  class %d %s\n", "sched-ingress", (unsigned long long)n[id], id, name);
		if (!n[id]) {
			printf("not reached by any seed: sched-ingress class %s\n", name);
			bad = 1;
		}
	}
	return bad;
}

/* From the trace: sched-ingress met a frame it could not read as IP, one
 * it read as IPv4 through an 802.1Q tag (ethernet-input, which follows,
 * drops exactly those tagged frames on these untagged ports), and IPv6. */
static int check_parse_paths(struct graph *g)
{
	bool not_ip4 = false, vlan_ip4 = false, ip6 = false;
	for (uint32_t i = 0; i < graph_trace_n_packets(g); i++) {
		const struct trace_record *r;
		uint32_t n = graph_trace_packet(g, i, &r, NULL);
		bool ip4 = false;
		for (uint32_t k = 0; k < n; k++) {
			char text[256];
			const char *node = graph_node_reg(g, r[k].node_index)->name;
			graph_trace_format(g, &r[k], text, sizeof(text));
			if (!strcmp(node, "sched-ingress")) {
				ip4 = strstr(text, ", dscp ") != NULL;
				not_ip4 |= strstr(text, ", not IP") != NULL;
				ip6 |= strstr(text, ", IPv6 dscp ") != NULL;
			} else if (!strcmp(node, "ethernet-input")) {
				vlan_ip4 |= ip4 && strstr(text, "(VLAN or QinQ tag on an untagged interface)");
			}
		}
	}
	printf("sched-ingress parse paths: not IP %s, IPv4 under a VLAN tag %s, IPv6 %s (%u packets traced)\n",
	       not_ip4 ? "seen" : "NOT SEEN", vlan_ip4 ? "seen" : "NOT SEEN", ip6 ? "seen" : "NOT SEEN",
	       graph_trace_n_packets(g));
	return !not_ip4 || !vlan_ip4 || !ip6;
}

int fuzz_seed_check(void)
{
	struct graph *g = pkt_graph();
	int bad = check_classes(g) | check_parse_paths(g);
	uint32_t n_reached = 0;
	for (uint32_t e = 0; e < graph_n_errors(g); e++) {
		uint32_t node;
		const char *s;
		graph_error_info(g, e, &node, &s);
		const char *name = graph_node_reg(g, node)->name;
		bool fed = false;
		for (size_t i = 0; i < sizeof(fed_nodes) / sizeof(fed_nodes[0]); i++)
			fed |= !strcmp(fed_nodes[i], name);
		if (!fed)
			continue;
		uint64_t n = graph_error_count(g, e);
		if (n == 0 && !is_unreachable(s)) {
			printf("not reached by any seed: %s \"%s\"\n", name, s);
			bad = 1;
		} else if (n) {
			n_reached++;
		}
		printf("%-16s %8llu  %s\n", name, (unsigned long long)n, s);
	}
	printf("%u error counters reached\n", n_reached);
	uint32_t left = pkt_graph_fini();
	if (left) {
		printf("%u buffers still in use at the end\n", left);
		bad = 1;
	}
	return bad;
}
