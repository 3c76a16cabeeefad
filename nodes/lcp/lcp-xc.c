/* lcp-xc: what Linux sends out of a linux-cp TAP leaves through the port
 * the TAP mirrors (ethernet-input sends every frame of a DEV_MODE_LCP
 * interface here, its Ethernet header in place).
 *
 * Straight to the port's tx (interface-output with tx_if the port), ARP
 * and IP alike: Linux has already resolved the next hop and written the
 * whole Ethernet header (its own neighbour table, filled by the ARP
 * replies lcp-punt copies up), so there is nothing for sluice's lookup or
 * rewrite to add. VPP's linux-cp cross-connects its TAPs to their phys the
 * same way (its linux-cp-xc nodes). Frames Linux sends while the port is
 * down are dropped by interface-output as for any interface.
 *
 * Next nodes: error-drop, interface-output.
 * Errors: no lcp pair for the TAP (unpaired while in flight). Counters
 *   (not drops): injected ARP, IPv4, other (IPv6 and the rest).
 * Trace: TAP index, port name and index, ethertype.
 * CLI: `show errors`, `show trace`, `show lcp`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/ethernet.h"
#include "nodes/lcp/lcp.h"

enum lcp_xc_next {
	LCP_XC_NEXT_DROP = 0,
	LCP_XC_NEXT_OUTPUT,
	LCP_XC_N_NEXT,
};

enum lcp_xc_error {
	LCP_XC_ERROR_NO_PAIR = 0,
	LCP_XC_COUNT_ARP,
	LCP_XC_COUNT_IP4,
	LCP_XC_COUNT_OTHER,
	LCP_XC_N_ERROR,
};

static const char *const lcp_xc_error_strings[LCP_XC_N_ERROR] = {
	[LCP_XC_ERROR_NO_PAIR] = "no lcp pair for the TAP",
	[LCP_XC_COUNT_ARP] = "injected: ARP",
	[LCP_XC_COUNT_IP4] = "injected: IPv4",
	[LCP_XC_COUNT_OTHER] = "injected: other ethertype (IPv6, ...)",
};

struct lcp_xc_trace {
	uint32_t tap, phy; /* phy DEV_INDEX_INVALID: dropped */
	uint16_t type;
	char phy_name[ETH_TRACE_NAME_SIZE];
};
_Static_assert(sizeof(struct lcp_xc_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int lcp_xc_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct lcp_xc_trace t;
	memcpy(&t, detail, sizeof(t));
	if (t.phy == DEV_INDEX_INVALID)
		return snprintf(buf, len, "from tap if %u type 0x%04x -> error-drop (no lcp pair)", t.tap, t.type);
	return snprintf(buf, len, "from tap if %u type 0x%04x -> %.*s (if %u)", t.tap, t.type, ETH_TRACE_NAME_SIZE,
			t.phy_name, t.phy);
}

static void trace_one(struct node_runtime *rt, struct buffer *b, uint32_t phy, uint16_t type)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	struct lcp_xc_trace t = { .tap = b->rx_if, .phy = phy, .type = type };
	eth_trace_name(t.phy_name, phy);
	memcpy(detail, &t, sizeof(t));
}

static uint32_t lcp_xc_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	uint64_t counts[LCP_XC_N_ERROR] = { 0 };

	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		const uint8_t *p = buffer_data(b);
		uint16_t type = (uint16_t)(p[12] << 8 | p[13]);
		uint32_t phy = lcp_phy_of(b->rx_if);
		if (likely(phy != DEV_INDEX_INVALID)) {
			b->tx_if = phy;
			nexts[i] = LCP_XC_NEXT_OUTPUT;
			counts[type == ETH_TYPE_ARP ? LCP_XC_COUNT_ARP
			       : type == ETH_TYPE_IP4 ? LCP_XC_COUNT_IP4
						  : LCP_XC_COUNT_OTHER]++;
		} else {
			b->error = node_error(rt, LCP_XC_ERROR_NO_PAIR);
			nexts[i] = LCP_XC_NEXT_DROP;
		}
		if (unlikely(b->flags & BUFFER_F_TRACED))
			trace_one(rt, b, phy, type);
	}
	for (uint16_t k = LCP_XC_COUNT_ARP; k < LCP_XC_N_ERROR; k++)
		if (counts[k])
			node_count_error(rt, k, counts[k]);
	node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg lcp_xc_node = {
	.name = "lcp-xc",
	.type = NODE_TYPE_INTERNAL,
	.fn = lcp_xc_fn,
	.n_next = LCP_XC_N_NEXT,
	.next_nodes = {
		[LCP_XC_NEXT_DROP] = "error-drop",
		[LCP_XC_NEXT_OUTPUT] = "interface-output",
	},
	.n_errors = LCP_XC_N_ERROR,
	.error_strings = lcp_xc_error_strings,
	.format_trace = lcp_xc_format_trace,
};
NODE_REGISTER(lcp_xc_node)
