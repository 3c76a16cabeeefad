/* Packet harness: bytes -> frames (pkt_graph_feed's records) -> one-thread
 * graph from ethernet-input on: ethernet-input, l2-xconnect, ip4-input,
 * arp-input, ip4-lookup, ip4-local, icmp4-echo, ip4-arp, ip4-rewrite,
 * interface-output. The graph lives across inputs (as a router's does);
 * unresolved next hops time out after 1 ms so that held buffers come back.
 * Seeds: tests/fuzz/seeds/pkt (the corpus, from tests/data/corpus/gen.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "nodes/ip4_neighbor.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/pkt_graph.h"

/* The parsing nodes whose every error counter the seeds must reach, but
 * for the few no received frame can cause. */
static const char *const fed_nodes[] = { "ethernet-input", "l2-xconnect", "ip4-input", "arp-input", "ip4-lookup",
					 "ip4-local", "icmp4-echo", "ip4-arp", "ip4-rewrite" };
static const char *const unreachable[] = {
	"rx interface not cross-connected",               /* c is cross-connected for good */
	"ARP hold queue full (dropped)",                  /* needs > 4 packets held for one hop */
	"neighbour table full (dropped)",                 /* needs 512 unresolved hops */
	"no buffer for an ARP request",                   /* needs an empty pool */
	"neighbour resolved but not in the FIB (dropped)", /* a race with ip4-neighbor */
	"output interface gone",                          /* an interface deleted under traffic */
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	char err[256];
	if (pkt_graph_init(err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_pkt: %s\n", err);
		abort();
	}
	ip4_nbr_resolve_timeout_ns = 1000000;
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

int fuzz_seed_check(void)
{
	struct graph *g = pkt_graph();
	int bad = 0;
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
