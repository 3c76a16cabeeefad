/* ip6-rs: Router Solicitations to sluice (RFC 4861 §6.1.1, §6.2.6), from
 * ip6-local (which verified the checksum), the buffer at the IPv6 header.
 *
 * A solicitation is valid with hop limit 255 (it comes from the link),
 * code 0, at least 8 bytes, options of non-zero length within the
 * message, and no source link-layer option when it comes from the
 * unspecified address; each failure counts under its own error. A valid
 * one on an interface that advertises raises that interface's
 * `solicited` flag for ip6-ra (ip6_ra.h), which sends the answer from
 * thread 0; its source link-layer option teaches the sender's MAC (§6.2.6:
 * a STALE entry, as an NS's does). The solicitation itself is consumed.
 *
 * Next nodes: error-drop.
 * Errors: solicitation taken; not advertising here; the validation
 *   failures.
 * CLI: `show errors`, `show ip6 nd`.
 */
#include <stdio.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "graph/node.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_nd.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_ra.h"

#define RS_MSG_LEN 8

enum ip6_rs_error {
	IP6_RS_ERROR_TAKEN = 0,
	IP6_RS_ERROR_NOT_ADVERTISING,
	IP6_RS_ERROR_HOP_LIMIT,
	IP6_RS_ERROR_CODE,
	IP6_RS_ERROR_TOO_SHORT,
	IP6_RS_ERROR_BAD_OPTION,
	IP6_RS_ERROR_UNSPEC_LLADDR,
	IP6_RS_N_ERROR,
};

static const char *const ip6_rs_error_strings[IP6_RS_N_ERROR] = {
	[IP6_RS_ERROR_TAKEN] = "Router Solicitation taken (RA scheduled)",
	[IP6_RS_ERROR_NOT_ADVERTISING] = "Router Solicitation on an interface not advertising",
	[IP6_RS_ERROR_HOP_LIMIT] = "RS hop limit not 255",
	[IP6_RS_ERROR_CODE] = "RS code not 0",
	[IP6_RS_ERROR_TOO_SHORT] = "RS shorter than 8 bytes",
	[IP6_RS_ERROR_BAD_OPTION] = "RS option of length 0 or beyond the message",
	[IP6_RS_ERROR_UNSPEC_LLADDR] = "RS from :: with a source link-layer option",
};

/* §6.1.1; IP6_RS_N_ERROR when valid, the source link-layer option's MAC in
 * mac (*has_mac). */
static uint16_t validate(struct buffer *b, uint8_t mac[6], bool *has_mac)
{
	const struct ip6_header *h = (const struct ip6_header *)buffer_data(b);
	const struct ip6_opaque *o = ip6_opaque(b);
	const uint8_t *p = buffer_data(b) + o->l4_offset;
	uint32_t len = IP6_HDR_LEN + ntohs(h->payload_length) - o->l4_offset;
	if (h->hop_limit != ND_HOP_LIMIT)
		return IP6_RS_ERROR_HOP_LIMIT;
	if (p[1] != 0)
		return IP6_RS_ERROR_CODE;
	if (len < RS_MSG_LEN || o->l4_offset + len > b->current_length)
		return IP6_RS_ERROR_TOO_SHORT;
	if (!ip6_nd_options(p, RS_MSG_LEN, len, ND_OPT_SOURCE_LLADDR, mac, has_mac))
		return IP6_RS_ERROR_BAD_OPTION;
	if (*has_mac && ip6_addr_is_unspecified(&h->src))
		return IP6_RS_ERROR_UNSPEC_LLADDR;
	return IP6_RS_N_ERROR;
}

static void learn(uint32_t if_index, const ip6_addr_a2 *src, const uint8_t mac[6])
{
	uint64_t now = ip6_nbr_now();
	ip6_nbr_lock();
	struct ip6_nbr *n = ip6_nbr_lookup(if_index, src);
	if (!n)
		n = ip6_nbr_create(if_index, src, now);
	if (n)
		ip6_nbr_update(n, mac, false, true, false, now);
	ip6_nbr_unlock();
}

static uint16_t rs_one(struct buffer *b)
{
	uint8_t mac[6];
	bool has_mac = false;
	uint16_t what = validate(b, mac, &has_mac);
	if (what != IP6_RS_N_ERROR)
		return what;
	if (b->rx_if >= DEV_MAX || !ip6_ra_ifs[b->rx_if].on)
		return IP6_RS_ERROR_NOT_ADVERTISING;
	struct ip6_ra_if *r = &ip6_ra_ifs[b->rx_if];
	const struct ip6_header *h = (const struct ip6_header *)buffer_data(b);
	if (has_mac && !(mac[0] & 1))
		learn(b->rx_if, &h->src, mac);
	__atomic_fetch_add(&r->n_rs, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r->solicited, true, __ATOMIC_RELEASE);
	return IP6_RS_ERROR_TAKEN;
}

static uint32_t ip6_rs_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		b->error = node_error(rt, rs_one(b));
	}
	node_forward_frame(rt, 0, f);
	return n;
}

static const struct node_reg ip6_rs_node = {
	.name = "ip6-rs",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip6_rs_fn,
	.n_next = 1,
	.next_nodes = { "error-drop" },
	.n_errors = IP6_RS_N_ERROR,
	.error_strings = ip6_rs_error_strings,
};
NODE_REGISTER(ip6_rs_node)
