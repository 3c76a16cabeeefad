/* The IPv6 extension-header walk (see ip6_ext.h). */
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_ext.h"

/* The headers with the common layout (RFC 8200 §4; RFC 6564 asks new ones
 * to keep it). ESP is not walked: what follows it is encrypted. */
const uint8_t ip6_ext_is_header[256] = {
	[IP6_NH_HOP_BY_HOP] = 1, [IP6_NH_ROUTING] = 1, [IP6_NH_FRAGMENT] = 1, [IP6_NH_DEST_OPTS] = 1,
	[IP6_NH_AH] = 1,         [IP6_NH_MOBILITY] = 1, [IP6_NH_HIP] = 1,    [IP6_NH_SHIM6] = 1,
};

static inline bool is_ext(uint8_t nh)
{
	return ip6_ext_is_header[nh];
}

/* The options of the header at p[off], len bytes (RFC 8200 §4.2). The
 * two high bits of an unrecognized type say what to do: skip it, drop
 * silently, drop with Parameter Problem code 2, or the same unless the
 * destination is multicast. */
static enum ip6_ext_verdict options(const uint8_t *p, uint32_t off, uint32_t len, bool hbh, bool mcast_dst,
				    struct ip6_ext_walk *w)
{
	uint32_t o = off + 2, end = off + len;
	for (uint32_t k = 0; o < end; k++) {
		if (k == IP6_OPT_MAX)
			return IP6_EXT_OPT_TOO_MANY;
		uint8_t t = p[o];
		if (t == IP6_OPT_PAD1) {
			o++;
			continue;
		}
		if (o + 2 > end || o + 2 + p[o + 1] > end)
			return IP6_EXT_OPT_TRUNCATED;
		uint8_t olen = p[o + 1];
		if (t == IP6_OPT_ROUTER_ALERT && hbh && olen == 2) {
			w->router_alert |= p[o + 2] == 0 && p[o + 3] == IP6_ROUTER_ALERT_MLD;
		} else if (t != IP6_OPT_PADN) {
			uint8_t action = t >> 6;
			if (action == 1 || (action == 3 && mcast_dst))
				return IP6_EXT_OPT_DISCARD;
			if (action >= 2) {
				w->icmp_code = ICMP6_PP_OPTION;
				w->pointer = o;
				return IP6_EXT_OPT_UNKNOWN;
			}
		}
		o += 2u + olen;
	}
	return IP6_EXT_OK;
}

/* A Routing header with segments left (RFC 8200 §4.4, RFC 5095 §3): to
 * us, a type we do not process (type 0 is deprecated, the others are not
 * implemented) is a Parameter Problem pointing at the type. In transit,
 * only its destination processes it: forwarded, but type 0 (the
 * amplification attack RFC 5095 describes) is dropped. */
static enum ip6_ext_verdict routing(const uint8_t *p, uint32_t off, bool local, struct ip6_ext_walk *w)
{
	uint8_t type = p[off + 2], segments_left = p[off + 3];
	if (!segments_left)
		return IP6_EXT_OK;
	if (!local)
		return type == IP6_RH_TYPE0 ? IP6_EXT_RH0_TRANSIT : IP6_EXT_OK;
	w->icmp_code = ICMP6_PP_HEADER;
	w->pointer = off + 2;
	return type == IP6_RH_TYPE0 ? IP6_EXT_RH0 : IP6_EXT_RH_UNKNOWN;
}

/* One header at p[off] of length hlen: its own checks. *stop when the
 * walk ends at it (a fragment other than an atomic one). */
static enum ip6_ext_verdict one(const uint8_t *p, uint32_t off, uint32_t hlen, uint8_t nh, bool local, bool mcast_dst,
				struct ip6_ext_walk *w, bool *stop)
{
	switch (nh) {
	case IP6_NH_HOP_BY_HOP:
		if (off != IP6_HDR_LEN) {
			w->icmp_code = ICMP6_PP_NEXT_HEADER;
			w->pointer = off; /* RFC 8200 §4.1: only right after the fixed header */
			return IP6_EXT_HBH_NOT_FIRST;
		}
		return options(p, off, hlen, true, mcast_dst, w);
	case IP6_NH_DEST_OPTS:
		return local ? options(p, off, hlen, false, mcast_dst, w) : IP6_EXT_OK;
	case IP6_NH_ROUTING:
		return routing(p, off, local, w);
	case IP6_NH_FRAGMENT:
		/* An atomic fragment (offset 0, no more: RFC 6946) is the
		 * whole packet; any other ends the walk: its upper layer is
		 * not all here and sluice does not reassemble. */
		*stop = ((p[off + 2] << 8 | p[off + 3]) & 0xfff9) != 0;
		return IP6_EXT_OK;
	default:
		return IP6_EXT_OK;
	}
}

enum ip6_ext_verdict ip6_ext_walk(const uint8_t *p, uint32_t len, bool local, bool mcast_dst, struct ip6_ext_walk *w)
{
	uint8_t nh = p[6];
	uint32_t off = IP6_HDR_LEN;
	w->router_alert = false;
	for (uint32_t n = 0; is_ext(nh); n++) {
		if (n == IP6_EXT_MAX)
			return IP6_EXT_TOO_MANY;
		if (off + 8 > len)
			return IP6_EXT_TRUNCATED;
		uint32_t hlen = nh == IP6_NH_AH ? (p[off + 1] + 2u) * 4 : nh == IP6_NH_FRAGMENT ? 8 : (p[off + 1] + 1u) * 8;
		if (off + hlen > len)
			return IP6_EXT_TRUNCATED;
		if (off + hlen - IP6_HDR_LEN > IP6_EXT_MAX_BYTES)
			return IP6_EXT_TOO_LONG;
		bool stop = false;
		enum ip6_ext_verdict v = one(p, off, hlen, nh, local, mcast_dst, w, &stop);
		if (v != IP6_EXT_OK)
			return v;
		if (stop) {
			nh = IP6_NH_FRAGMENT;
			break;
		}
		nh = p[off];
		off += hlen;
	}
	w->l4_proto = nh;
	w->l4_offset = (uint16_t)off;
	return IP6_EXT_OK;
}
