/* ip6-nd: Neighbor Discovery's Neighbor Solicitations and Advertisements
 * (RFC 4861 §7) for the router's addresses, from ip6-local (which verified
 * the checksum), the buffer at the IPv6 header.
 *
 * Both are validated as §7.1.1 and §7.1.2 ask, each failure under its own
 * error: hop limit 255 (a message from off the link cannot have it), code
 * 0, at least 24 bytes, a unicast target, options of non-zero length
 * within the message; a solicitation from the unspecified address (DAD,
 * RFC 4862) only to a solicited-node group and without a source
 * link-layer option; an advertisement to a multicast address without the
 * Solicited flag.
 *
 * A solicitation for one of the rx interface's addresses (to it, or to
 * its solicited-node group) is answered in place (§7.2.4): the same buffer
 * becomes the advertisement, out of the same interface, with the Router,
 * Override and (unless the solicitation came from the unspecified address,
 * then to all-nodes) Solicited flags and a target link-layer option with
 * the interface's MAC. Its source link-layer option teaches the sender's
 * MAC (§7.2.3: a STALE entry). An advertisement updates the entry of its
 * target (§7.2.5) and is consumed; one for an address without an entry is
 * discarded, one for our own address counted (another node claims it)
 * and the address marked duplicated (ip6_dad.h).
 * The neighbour table's lock is taken at most once per frame.
 *
 * Next nodes: error-drop, interface-output (advertisements).
 * Errors: advertisements sent (counted); advertisement consumed; the
 *   validation failures; target not ours; advertisement for our address;
 *   advertisement never solicited.
 * Trace: type, source, target, link-layer option, and what happened.
 * CLI: `show ip6 neighbors`, `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ethernet.h"
#include "nodes/ip6/ip6.h"
#include "nodes/lcp/lcp.h"
#include "nodes/ip6/ip6_dad.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_nd.h"
#include "nodes/ip6/ip6_neighbor.h"

enum ip6_nd_next {
	IP6_ND_NEXT_DROP = 0,
	IP6_ND_NEXT_OUTPUT,
	IP6_ND_NEXT_LCP_PUNT,
	IP6_ND_N_NEXT,
};

enum ip6_nd_error {
	IP6_ND_ERROR_NA_SENT = 0,
	IP6_ND_ERROR_NA_CONSUMED,
	IP6_ND_ERROR_HOP_LIMIT,
	IP6_ND_ERROR_CODE,
	IP6_ND_ERROR_TOO_SHORT,
	IP6_ND_ERROR_TARGET_MULTICAST,
	IP6_ND_ERROR_BAD_OPTION,
	IP6_ND_ERROR_DAD_MALFORMED,
	IP6_ND_ERROR_NA_SOLICITED_MCAST,
	IP6_ND_ERROR_NOT_OURS,
	IP6_ND_ERROR_NA_OURS,
	IP6_ND_ERROR_NA_UNSOLICITED,
	IP6_ND_N_ERROR,
};

static const char *const ip6_nd_error_strings[IP6_ND_N_ERROR] = {
	[IP6_ND_ERROR_NA_SENT] = "Neighbor Advertisements sent",
	[IP6_ND_ERROR_NA_CONSUMED] = "Neighbor Advertisement consumed (neighbour updated)",
	[IP6_ND_ERROR_HOP_LIMIT] = "ND hop limit not 255",
	[IP6_ND_ERROR_CODE] = "ND code not 0",
	[IP6_ND_ERROR_TOO_SHORT] = "ND message shorter than 24 bytes",
	[IP6_ND_ERROR_TARGET_MULTICAST] = "ND target is multicast",
	[IP6_ND_ERROR_BAD_OPTION] = "ND option of length 0 or beyond the message",
	[IP6_ND_ERROR_DAD_MALFORMED] = "NS from :: not to a solicited-node group or with a link-layer option",
	[IP6_ND_ERROR_NA_SOLICITED_MCAST] = "NA to multicast with the Solicited flag",
	[IP6_ND_ERROR_NOT_OURS] = "NS target not this interface's address",
	[IP6_ND_ERROR_NA_OURS] = "NA for one of our addresses (duplicate?)",
	[IP6_ND_ERROR_NA_UNSOLICITED] = "NA for an address never solicited",
};


struct ip6_nd_trace {
	struct in6_addr src, target;
	uint8_t lladdr[6];
	uint8_t type;
	uint8_t what;
};
_Static_assert(sizeof(struct ip6_nd_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ip6_nd_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct ip6_nd_trace t;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "%s from %s target %s lladdr %02x:%02x:%02x:%02x:%02x:%02x: %s",
			t.type == ICMP6_ND_NS ? "NS" : "NA", ip6_format_addr(s, &t.src), ip6_format_addr(d, &t.target),
			t.lladdr[0], t.lladdr[1], t.lladdr[2], t.lladdr[3], t.lladdr[4], t.lladdr[5],
			t.what < IP6_ND_N_ERROR ? ip6_nd_error_strings[t.what] : "?");
}

/* ---- helpers ---- */

/* One NS or NA as read from the packet. */
struct nd_msg {
	uint8_t type;
	uint32_t flags; /* NA: R, S, O (host order) */
	struct in6_addr src, dst, target;
	bool has_lladdr;
	uint8_t lladdr[6];   /* the source (NS) or target (NA) link-layer option's MAC */
	uint8_t peer_mac[6]; /* the frame's Ethernet source */
};

/* The options after the 24 bytes (RFC 4861 §4.6): each of non-zero length
 * within the message; the link-layer address one of type want kept. */
static bool options(const uint8_t *p, uint32_t len, uint8_t want, struct nd_msg *m)
{
	return ip6_nd_options(p, ND_MSG_LEN, len, want, m->lladdr, &m->has_lladdr);
}

/* §7.1.1 and §7.1.2: IP6_ND_N_ERROR when valid, else the error. */
static uint16_t validate(struct buffer *b, struct nd_msg *m)
{
	const struct ip6_header *h = (const struct ip6_header *)buffer_data(b);
	const struct ip6_opaque *o = ip6_opaque(b);
	const uint8_t *p = buffer_data(b) + o->l4_offset;
	uint32_t len = IP6_HDR_LEN + ntohs(h->payload_length) - o->l4_offset;
	m->type = p[0];
	m->src = h->src;
	m->dst = h->dst;
	memcpy(m->peer_mac, buffer_data(b) - ETH_HDR_LEN + 6, 6);
	if (h->hop_limit != ND_HOP_LIMIT)
		return IP6_ND_ERROR_HOP_LIMIT;
	if (p[1] != 0)
		return IP6_ND_ERROR_CODE;
	if (len < ND_MSG_LEN || o->l4_offset + len > b->current_length)
		return IP6_ND_ERROR_TOO_SHORT;
	memcpy(&m->target, p + 8, 16);
	m->flags = (uint32_t)p[4] << 24;
	if (ip6_addr_is_multicast(&m->target))
		return IP6_ND_ERROR_TARGET_MULTICAST;
	bool ns = m->type == ICMP6_ND_NS;
	if (!options(p, len, ns ? ND_OPT_SOURCE_LLADDR : ND_OPT_TARGET_LLADDR, m))
		return IP6_ND_ERROR_BAD_OPTION;
	if (ns && ip6_addr_is_unspecified(&m->src) && (!ip6_addr_is_solicited_node(&m->dst) || m->has_lladdr))
		return IP6_ND_ERROR_DAD_MALFORMED;
	if (!ns && ip6_addr_is_multicast(&m->dst) && (m->flags & ND_NA_F_SOLICITED))
		return IP6_ND_ERROR_NA_SOLICITED_MCAST;
	return IP6_ND_N_ERROR;
}

/* Make b the advertisement answering m (§7.2.4). */
static void make_na(struct buffer *b, const struct nd_msg *m, const struct device *dev)
{
	static const struct in6_addr all_nodes = { .s6_addr = { 0xff, 2, [15] = 1 } };
	bool dad = ip6_addr_is_unspecified(&m->src);
	uint8_t dst_mac[6];
	if (dad)
		ip6_mcast_mac(dst_mac, &all_nodes);
	else
		memcpy(dst_mac, m->has_lladdr ? m->lladdr : m->peer_mac, 6);
	uint32_t flags = ND_NA_F_ROUTER | ND_NA_F_OVERRIDE | (dad ? 0 : ND_NA_F_SOLICITED);
	ip6_nd_msg_make(b, ICMP6_ND_NA, flags, &m->target, dad ? &all_nodes : &m->src, &m->target,
			ND_OPT_TARGET_LLADDR, dev->mac);
	ip6_eth_push(b, dst_mac);
}

/* The neighbour table's lock, taken on first need for the frame. */
struct nd_lock {
	bool locked;
	uint64_t now;
};

static void lock_once(struct nd_lock *l)
{
	if (l->locked)
		return;
	ip6_nbr_lock();
	l->locked = true;
	l->now = ip6_nbr_now();
}

static uint16_t solicitation(struct buffer *b, const struct nd_msg *m, struct nd_lock *l)
{
	const struct device *dev = dev_by_index(b->rx_if);
	if (!dev || !ip6_if_is_local(b->rx_if, &m->target))
		return IP6_ND_ERROR_NOT_OURS;
	if (m->has_lladdr && !(m->lladdr[0] & 1)) {
		lock_once(l);
		struct ip6_nbr *n = ip6_nbr_lookup(b->rx_if, &m->src);
		if (!n)
			n = ip6_nbr_create(b->rx_if, &m->src, l->now);
		if (n)
			ip6_nbr_update(n, m->lladdr, false, true, false, l->now);
	}
	make_na(b, m, dev);
	return IP6_ND_ERROR_NA_SENT;
}

static uint16_t advertisement(struct buffer *b, const struct nd_msg *m, struct nd_lock *l)
{
	if (ip6_is_for_us(b->rx_if, &m->target)) {
		ip6_dad_conflict(b->rx_if, &m->target);
		return IP6_ND_ERROR_NA_OURS;
	}
	lock_once(l);
	struct ip6_nbr *n = ip6_nbr_lookup(b->rx_if, &m->target);
	if (!n)
		return IP6_ND_ERROR_NA_UNSOLICITED;
	const uint8_t *mac = m->has_lladdr && !(m->lladdr[0] & 1) ? m->lladdr : NULL;
	ip6_nbr_update(n, mac, m->flags & ND_NA_F_SOLICITED, m->flags & ND_NA_F_OVERRIDE, m->flags & ND_NA_F_ROUTER,
		       l->now);
	return IP6_ND_ERROR_NA_CONSUMED;
}

static void trace_one(struct node_runtime *rt, struct buffer *b, const struct nd_msg *m, uint16_t what)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	struct ip6_nd_trace t = { .src = m->src, .target = m->target, .type = m->type, .what = (uint8_t)what };
	memcpy(t.lladdr, m->lladdr, 6);
	memcpy(detail, &t, sizeof(t));
}

/* ---- the node ---- */

static uint32_t ip6_nd_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	uint32_t n_sent = 0;
	struct nd_lock l = { 0 };

	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		struct nd_msg m = { 0 };
		uint16_t what = validate(b, &m);
		if (what == IP6_ND_N_ERROR)
			what = m.type == ICMP6_ND_NS ? solicitation(b, &m, &l) : advertisement(b, &m, &l);
		if (what == IP6_ND_ERROR_NA_SENT) {
			nexts[i] = IP6_ND_NEXT_OUTPUT;
			n_sent++;
		} else if ((what == IP6_ND_ERROR_NA_CONSUMED || what == IP6_ND_ERROR_NA_UNSOLICITED) &&
			   lcp_tap_of(b->rx_if) != DEV_INDEX_INVALID) {
			/* A copy for Linux's neighbour table (it may have solicited
			 * it through its TAP), after sluice learnt from it. */
			nexts[i] = IP6_ND_NEXT_LCP_PUNT;
		} else {
			nexts[i] = IP6_ND_NEXT_DROP;
			b->error = node_error(rt, what);
		}
		if (unlikely(b->flags & BUFFER_F_TRACED))
			trace_one(rt, b, &m, what);
	}
	if (l.locked)
		ip6_nbr_unlock();
	if (n_sent)
		node_count_error(rt, IP6_ND_ERROR_NA_SENT, n_sent);
	node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg ip6_nd_node = {
	.name = "ip6-nd",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip6_nd_fn,
	.n_next = IP6_ND_N_NEXT,
	.next_nodes = {
		[IP6_ND_NEXT_DROP] = "error-drop",
		[IP6_ND_NEXT_OUTPUT] = "interface-output",
		[IP6_ND_NEXT_LCP_PUNT] = "lcp-punt",
	},
	.n_errors = IP6_ND_N_ERROR,
	.error_strings = ip6_nd_error_strings,
	.format_trace = ip6_nd_format_trace,
};
NODE_REGISTER(ip6_nd_node)
