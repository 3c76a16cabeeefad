/* One rtnetlink message (rtnetlink(7)) -> sluice's tables. Barrier held.
 *
 *   RTM_NEWADDR/DELADDR on a TAP    the paired port's address (ip4_if_addr_*)
 *   RTM_NEWROUTE/DELROUTE           a route of source linux (ip4_route_src_*):
 *     unicast via a TAP                next hop on the paired port
 *     unicast, RTA_OIF only            a device route: glean on the port
 *     blackhole                        drop ("blackhole route" counter)
 *     unreachable, prohibit            ICMP host unreachable, admin prohibited
 *     proto kernel                     skipped: the address made sluice's own
 *     throw                            ignored, counted
 *     RTA_MULTIPATH, a nexthop group   one multipath route (ECMP), weights kept
 *   RTM_NEWNEXTHOP/DELNEXTHOP       nexthop objects, for routes with RTA_NH_ID;
 *                                   one replaced or deleted changes the
 *                                   routes through it (lcp_nl_route.c's index)
 *   RTM_NEWNEIGH/DELNEIGH on a TAP  the port's neighbour (NUD_PERMANENT: static)
 *   RTM_NEWLINK on a TAP            Linux's up/down transitions, MTU, MAC -> the port
 *   (addresses, neighbours and links: lcp_nl_link.c)
 *
 * Each message is checked whole before anything changes, so it is applied
 * whole or not at all; what cannot be mapped is counted per reason and
 * logged once per reason. IPv6 addresses, routes and neighbours, and the
 * IPv6 routes through nexthop objects: lcp_nl_route6.c, called from here
 * and from lcp_nl_link.c by the message's family. */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "base/util.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"
#include "nodes/lcp/lcp.h"
#include "nodes/lcp/lcp_nl.h"
#include "nodes/lcp/lcp_nl_map_private.h"
#include "nodes/lcp/lcp_nl_route.h"

struct lcp_nl_stats lcp_nl_stats;
uint32_t lcp_nl_route_table;
bool lcp_nl_redump_wanted;

#define NH_MAX 1024 /* nexthop objects remembered */

static bool logged[LCP_NL_IGN_N];
static uint32_t test_ifindex[DEV_MAX];

static struct lcp_nl_nh nhs[NH_MAX];

const char *lcp_nl_ignore_name(enum lcp_nl_ignore why)
{
	static const char *const names[] = {
		"not a TAP of ours", "unsupported family", "other table", "proto kernel (address's own)",
		"unsupported route type", "unknown nexthop id", "refused by sluice", "malformed",
		"unmapped message type",
	};
	return why < LCP_NL_IGN_N ? names[why] : "?";
}

const char *lcp_nl_kind_name(enum lcp_nl_kind k)
{
	static const char *const names[LCP_NL_K_N] = { "route-add", "route-del", "route6-add", "route6-del",
						       "address",   "neighbour", "link",       "nexthop" };
	return k < LCP_NL_K_N ? names[k] : "?";
}

/* The kind of an applied message of this type and family. */
static enum lcp_nl_kind applied_kind(const struct nlmsghdr *nlh)
{
	bool v6 = lcp_nl_family(nlh, sizeof(struct rtmsg)) == AF_INET6;
	switch (nlh->nlmsg_type) {
	case RTM_NEWROUTE:
		return v6 ? LCP_NL_K_ROUTE6_ADD : LCP_NL_K_ROUTE_ADD;
	case RTM_DELROUTE:
		return v6 ? LCP_NL_K_ROUTE6_DEL : LCP_NL_K_ROUTE_DEL;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		return LCP_NL_K_ADDR;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		return LCP_NL_K_NEIGH;
	case RTM_NEWLINK:
	case RTM_DELLINK:
		return LCP_NL_K_LINK;
	default:
		return LCP_NL_K_NEXTHOP;
	}
}

bool lcp_nl_ignore(enum lcp_nl_ignore why, const char *detail)
{
	lcp_nl_stats.ignored[why]++;
	if (!logged[why]) {
		logged[why] = true;
		base_log("lcp-nl", "ignored: %s (%s); counted in show lcp, logged once", lcp_nl_ignore_name(why), detail);
	}
	return false;
}

bool lcp_nl_applied(void)
{
	lcp_nl_stats.applied++;
	return true;
}

void lcp_nl_set_test_ifindex(uint32_t dev_index, uint32_t ifindex)
{
	if (dev_index < DEV_MAX)
		test_ifindex[dev_index] = ifindex;
}

void lcp_nl_map_reset(void)
{
	memset(nhs, 0, sizeof(nhs));
	lcp_nl_link_reset();
	memset(logged, 0, sizeof(logged));
	lcp_nl_route_reset();
	lcp_nl_redump_wanted = false;
}

/* The port whose TAP is Linux's ifindex in netns, or DEV_INDEX_INVALID. */
uint32_t lcp_nl_phy_of_ifindex(const struct lcp_nl_ctx *ctx, uint32_t ifindex)
{
	for (uint32_t i = 0; i < DEV_MAX && ifindex; i++) {
		uint32_t phy = lcp_phy_of(i);
		const struct device *tap = dev_by_index(i);
		if (phy == DEV_INDEX_INVALID || !tap || strcmp(tap_netns(tap), ctx->netns))
			continue;
		uint32_t idx = test_ifindex[i];
		if (tap_is(tap)) {
			struct tap_host_stats st;
			tap_host_stats_get(tap, &st);
			idx = st.host_gone ? 0 : st.host_ifindex;
		}
		if (idx == ifindex)
			return phy;
	}
	return DEV_INDEX_INVALID;
}

/* ---- nexthop objects ---- */

struct lcp_nl_nh *lcp_nl_nh_find(uint32_t id)
{
	for (int i = 0; i < NH_MAX; i++)
		if (nhs[i].used && nhs[i].id == id)
			return &nhs[i];
	return NULL;
}

/* NHA_GROUP's members (linux/nexthop.h: struct nexthop_grp, weight - 1). */
static bool group_members(const struct nlattr *g, struct lcp_nl_nh *n)
{
	size_t k = mnl_attr_get_payload_len(g) / sizeof(struct nexthop_grp);
	if (k > IP4_LB_MAX_PATHS)
		return false;
	memcpy(n->members, mnl_attr_get_payload(g), k * sizeof(struct nexthop_grp));
	n->n_members = (uint8_t)k;
	return true;
}

static void nh_changed(const struct lcp_nl_ctx *ctx, uint32_t id, bool gone);

static bool map_nexthop(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct lcp_nl_attrs at;
	const struct nhmsg *nhm = lcp_nl_parse(nlh, sizeof(*nhm), &at);
	uint32_t id;
	if (!nhm || !lcp_nl_get_u32(&at, NHA_ID, &id))
		return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "nexthop message");
	struct lcp_nl_nh *o = lcp_nl_nh_find(id);
	/* Routes through a nexthop object that changes or goes change with it
	 * in the kernel, with no route message: the nhid index finds them. */
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		if (o)
			o->used = false;
		if (o)
			nh_changed(ctx, id, true);
		return lcp_nl_applied();
	}
	struct lcp_nl_nh n = { .id = id, .used = true, .blackhole = at.tb[NHA_BLACKHOLE] != NULL };
	const struct nlattr *g = at.tb[NHA_GROUP];
	if (g) {
		if (mnl_attr_get_payload_len(g) < sizeof(struct nexthop_grp))
			return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "empty nexthop group");
		n.group = true;
		n.first = ((const struct nexthop_grp *)mnl_attr_get_payload(g))->id;
		if (!group_members(g, &n))
			return lcp_nl_ignore(LCP_NL_IGN_REFUSED, "nexthop group of more than 16 paths");
	} else if (!n.blackhole) {
		if (nhm->nh_family != AF_INET && nhm->nh_family != AF_INET6)
			return lcp_nl_ignore(LCP_NL_IGN_FAMILY, "nexthop");
		if (!lcp_nl_get_u32(&at, NHA_OIF, &n.oif))
			return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "nexthop without NHA_OIF");
		n.family = nhm->nh_family;
		if (n.family == AF_INET6 && at.tb[NHA_GATEWAY] && !lcp_nl6_gateway(&at, NHA_GATEWAY, &n.gw6))
			return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "IPv6 nexthop gateway");
		if (n.family == AF_INET)
			lcp_nl_get_u32(&at, NHA_GATEWAY, &n.gw);
	}
	for (int i = 0; !o && i < NH_MAX; i++)
		if (!nhs[i].used)
			o = &nhs[i];
	if (!o)
		return lcp_nl_ignore(LCP_NL_IGN_REFUSED, "nexthop table full");
	bool known = o->used;
	*o = n;
	if (known)
		nh_changed(ctx, id, false);
	return lcp_nl_applied();
}

/* ---- routes ---- */

struct route_want {
	uint32_t dst, gw, oif; /* dst, gw network order */
	uint32_t nhid;         /* RTA_NH_ID, 0: none */
	uint8_t plen, type, protocol;
	bool multipath;
	uint32_t n_paths; /* > 1: RTA_MULTIPATH or a group's members, in mp[] */
	struct {
		uint32_t oif, gw;
		uint16_t weight;
	} mp[IP4_LB_MAX_PATHS];
};

/* ---- multipath: RTA_MULTIPATH and nexthop groups -> paths ---- */

int lcp_nl_rtnh_each(const struct nlattr *mp, uint32_t max,
		     bool (*fn)(const struct rtnexthop *rtnh, const struct lcp_nl_attrs *at, void *arg), void *arg)
{
	const uint8_t *p = mnl_attr_get_payload(mp);
	size_t len = mnl_attr_get_payload_len(mp);
	uint32_t n = 0;
	while (len >= sizeof(struct rtnexthop)) {
		const struct rtnexthop *rtnh = (const struct rtnexthop *)p;
		if (rtnh->rtnh_len < sizeof(*rtnh) || rtnh->rtnh_len > len || n == max)
			return -1;
		struct lcp_nl_attrs at = { 0 };
		if (mnl_attr_parse_payload(RTNH_DATA(rtnh), rtnh->rtnh_len - sizeof(*rtnh), lcp_nl_attr_cb, &at) < 0 ||
		    !fn(rtnh, &at, arg))
			return -1;
		n++;
		size_t step = RTNH_ALIGN(rtnh->rtnh_len);
		p += step;
		len = step < len ? len - step : 0;
	}
	return (int)n;
}

static bool mp_path(const struct rtnexthop *rtnh, const struct lcp_nl_attrs *at, void *arg)
{
	struct route_want *w = arg;
	w->mp[w->n_paths].oif = (uint32_t)rtnh->rtnh_ifindex;
	w->mp[w->n_paths].gw = 0;
	lcp_nl_get_u32(at, RTA_GATEWAY, &w->mp[w->n_paths].gw);
	w->mp[w->n_paths++].weight = (uint16_t)(rtnh->rtnh_hops + 1);
	return true;
}

/* RTA_MULTIPATH (rtnetlink(7): struct rtnexthop each, weight rtnh_hops + 1
 * as iproute2 shows it, RTA_GATEWAY inside) into w->mp; the first path also
 * into w->oif, w->gw. */
static bool mp_decode(const struct nlattr *mp, struct route_want *w)
{
	w->n_paths = 0;
	if (lcp_nl_rtnh_each(mp, IP4_LB_MAX_PATHS, mp_path, w) <= 0)
		return false;
	w->oif = w->mp[0].oif;
	w->gw = w->mp[0].gw;
	w->multipath = w->n_paths > 1;
	return true;
}

enum lcp_nl_ignore lcp_nl_nh_walk(uint32_t id, bool *blackhole,
				  bool (*fn)(const struct lcp_nl_nh *o, uint16_t weight, void *arg), void *arg)
{
	const struct lcp_nl_nh *o = lcp_nl_nh_find(id);
	*blackhole = false;
	if (o && o->group && o->n_members == 1)
		o = lcp_nl_nh_find(o->first); /* a group of one: its member */
	if (!o)
		return LCP_NL_IGN_NO_NEXTHOP;
	if (o->blackhole) {
		*blackhole = true;
		return LCP_NL_IGN_N;
	}
	if (!o->group)
		return fn(o, 1, arg) ? LCP_NL_IGN_N : LCP_NL_IGN_ROUTE_TYPE;
	for (uint32_t i = 0; i < o->n_members; i++) { /* whole or not at all */
		const struct lcp_nl_nh *m = lcp_nl_nh_find(o->members[i].id);
		if (!m || m->blackhole || m->group)
			return LCP_NL_IGN_NO_NEXTHOP;
	}
	for (uint32_t i = 0; i < o->n_members; i++)
		if (!fn(lcp_nl_nh_find(o->members[i].id), (uint16_t)(o->members[i].weight + 1), arg))
			return LCP_NL_IGN_ROUTE_TYPE;
	return o->n_members ? LCP_NL_IGN_N : LCP_NL_IGN_NO_NEXTHOP;
}

/* One IPv4 gateway object into w->mp (lcp_nl_nh_walk's fn). */
static bool nh_mp_path(const struct lcp_nl_nh *o, uint16_t weight, void *arg)
{
	struct route_want *w = arg;
	if (o->family == AF_INET6)
		return false; /* an IPv4 route via an IPv6 gateway: not sluice's */
	w->mp[w->n_paths].oif = o->oif;
	w->mp[w->n_paths].gw = o->gw;
	w->mp[w->n_paths++].weight = weight;
	return true;
}

/* w's paths as sluice's (n > 1). Network order. */
static enum lcp_nl_ignore mp_to_paths(const struct lcp_nl_ctx *ctx, const struct route_want *w,
				      struct ip4_route_path *p)
{
	for (uint32_t i = 0; i < w->n_paths; i++) {
		p[i] = (struct ip4_route_path){
			.kind = w->mp[i].gw ? IP4_ADJ_REWRITE : IP4_ADJ_GLEAN,
			.protocol = w->protocol,
			.weight = w->mp[i].weight,
			.next_hop = w->mp[i].gw,
			.if_index = lcp_nl_phy_of_ifindex(ctx, w->mp[i].oif),
			.gen = ctx->gen,
		};
		if (p[i].if_index == DEV_INDEX_INVALID)
			return LCP_NL_IGN_NOT_TAP;
	}
	return LCP_NL_IGN_N;
}

/* Whether group g has member id. */
static bool nh_has_member(const struct lcp_nl_nh *g, uint32_t id)
{
	for (uint32_t i = 0; i < g->n_members; i++)
		if (g->members[i].id == id)
			return true;
	return false;
}

/* The paths of a nexthop object (lcp_nl_nh_walk): one into w->oif and
 * w->gw, several into w->mp (multipath), a blackhole into w->type. */
static enum lcp_nl_ignore nh_path(uint32_t id, struct route_want *w)
{
	bool blackhole;
	w->n_paths = 0;
	enum lcp_nl_ignore why = lcp_nl_nh_walk(id, &blackhole, nh_mp_path, w);
	if (why != LCP_NL_IGN_N)
		return why;
	if (blackhole) {
		w->type = RTN_BLACKHOLE;
		return LCP_NL_IGN_N;
	}
	w->multipath = w->n_paths > 1;
	w->oif = w->mp[0].oif;
	w->gw = w->mp[0].gw;
	return LCP_NL_IGN_N;
}

/* Whether sluice maps a route of w's kind and next hops: the three kinds
 * without next hops, and unicast through a gateway, a device or paths. */
static bool want_maps(const struct route_want *w)
{
	if (lcp_nl_type_rejects(w->type))
		return true;
	return w->type == RTN_UNICAST && (w->gw || w->oif || w->multipath);
}

bool lcp_nl_table_mapped(const struct lcp_nl_attrs *at, const struct rtmsg *rtm)
{
	uint32_t table = rtm->rtm_table;
	lcp_nl_get_u32(at, RTA_TABLE, &table);
	return table == RT_TABLE_MAIN || (lcp_nl_route_table && table == lcp_nl_route_table);
}

/* Decode a route message into w; LCP_NL_IGN_N when it maps. Without
 * objects (outside the barrier: another listener's hold may be changing
 * the nexthop objects) a route through one is taken to map when the rest
 * of it does: its object is only known under the barrier. */
static enum lcp_nl_ignore route_decode(const struct nlmsghdr *nlh, struct route_want *w, bool objects)
{
	struct lcp_nl_attrs at;
	const struct rtmsg *rtm = lcp_nl_parse(nlh, sizeof(*rtm), &at);
	if (!rtm)
		return LCP_NL_IGN_MALFORMED;
	if (rtm->rtm_family != AF_INET)
		return LCP_NL_IGN_FAMILY;
	if (rtm->rtm_dst_len > 32)
		return LCP_NL_IGN_MALFORMED;
	if (!lcp_nl_table_mapped(&at, rtm))
		return LCP_NL_IGN_TABLE;
	w->plen = rtm->rtm_dst_len;
	w->type = rtm->rtm_type;
	w->protocol = rtm->rtm_protocol;
	if (rtm->rtm_dst_len && !lcp_nl_get_u32(&at, RTA_DST, &w->dst))
		return LCP_NL_IGN_MALFORMED;
	if (rtm->rtm_protocol == RTPROT_KERNEL)
		return LCP_NL_IGN_KERNEL;
	if (nlh->nlmsg_type == RTM_DELROUTE)
		return LCP_NL_IGN_N; /* the prefix is all a delete needs */
	if (lcp_nl_get_u32(&at, RTA_NH_ID, &w->nhid)) {
		if (!objects)
			return LCP_NL_IGN_N;
		enum lcp_nl_ignore why = nh_path(w->nhid, w);
		if (why != LCP_NL_IGN_N)
			return why;
	} else if (at.tb[RTA_MULTIPATH]) {
		if (!mp_decode(at.tb[RTA_MULTIPATH], w))
			return LCP_NL_IGN_MALFORMED;
	} else {
		lcp_nl_get_u32(&at, RTA_OIF, &w->oif);
		lcp_nl_get_u32(&at, RTA_GATEWAY, &w->gw);
	}
	return want_maps(w) ? LCP_NL_IGN_N : LCP_NL_IGN_ROUTE_TYPE;
}

bool lcp_nl_route_would_map(const struct nlmsghdr *nlh, uint32_t *dst_h, uint8_t *plen)
{
	struct route_want w = { 0 };
	if (nlh->nlmsg_type != RTM_NEWROUTE || route_decode(nlh, &w, false) != LCP_NL_IGN_N)
		return false;
	*dst_h = ntohl(w.dst);
	*plen = w.plen;
	return true;
}

/* rtm_type -> the route kind of a route without next hops. */
static uint8_t route_kind(uint8_t type)
{
	return type == RTN_UNREACHABLE ? IP4_ADJ_UNREACH : type == RTN_PROHIBIT ? IP4_ADJ_PROHIBIT : IP4_ADJ_BLACKHOLE;
}

/* Remove the Linux route of dst/plen from sluice and the book. */
static int route_remove(uint32_t dst, uint8_t plen)
{
	char err[128];
	lcp_nl_route_forget(dst, plen);
	return ip4_route_src_del(IP4_SRC_LINUX, dst, plen, err, sizeof(err));
}

static const char *route_what(char *buf, size_t n, const struct route_want *w);

/* w as sluice's route of source linux: its paths (multipath: RTA_MULTIPATH
 * or a group's members), its one next hop (no gateway: a device route,
 * glean on the port) or its kind (blackhole, unreachable, prohibit).
 * LCP_NL_IGN_N when installed; else why not (REFUSED: the FIB's err). */
static enum lcp_nl_ignore route_set(const struct lcp_nl_ctx *ctx, const struct route_want *w, char *err, size_t n)
{
	struct ip4_route_path p[IP4_LB_MAX_PATHS];
	if (w->multipath) {
		enum lcp_nl_ignore why = mp_to_paths(ctx, w, p);
		if (why != LCP_NL_IGN_N)
			return why;
		return ip4_route_src_set(IP4_SRC_LINUX, w->dst, w->plen, p, w->n_paths, err, n) ? LCP_NL_IGN_REFUSED
												 : LCP_NL_IGN_N;
	}
	p[0] = (struct ip4_route_path){ .kind = route_kind(w->type), .protocol = w->protocol, .gen = ctx->gen };
	if (w->type == RTN_UNICAST) {
		p[0].kind = w->gw ? IP4_ADJ_REWRITE : IP4_ADJ_GLEAN;
		p[0].next_hop = w->gw;
		p[0].if_index = lcp_nl_phy_of_ifindex(ctx, w->oif);
		if (p[0].if_index == DEV_INDEX_INVALID)
			return LCP_NL_IGN_NOT_TAP;
	}
	return ip4_route_src_add(IP4_SRC_LINUX, w->dst, w->plen, &p[0], err, n) ? LCP_NL_IGN_REFUSED : LCP_NL_IGN_N;
}

/* Install w (decoded, or re-resolved through its nexthop object) as the
 * Linux route of its prefix, and note it in the book. */
static bool route_install(const struct lcp_nl_ctx *ctx, const struct route_want *w)
{
	char err[128];
	enum lcp_nl_ignore why = route_set(ctx, w, err, sizeof(err));
	if (why == LCP_NL_IGN_REFUSED)
		return lcp_nl_ignore(why, err);
	if (why != LCP_NL_IGN_N)
		return lcp_nl_ignore(why, route_what(err, sizeof(err), w));
	const struct lcp_nl_route r = { .dst = w->dst, .nhid = w->nhid, .gen = ctx->gen, .plen = w->plen,
					.protocol = w->protocol, .type = w->type };
	if (lcp_nl_route_note(&r)) { /* out of memory: sluice must not hold what it cannot sweep */
		route_remove(w->dst, w->plen);
		return lcp_nl_ignore(LCP_NL_IGN_REFUSED, "out of memory for the route book");
	}
	lcp_nl_stats.multipath += w->multipath;
	return lcp_nl_applied();
}

/* What the log says of a route it ignores (formatted only then: every
 * route at a 100,000-route load would otherwise pay for it). */
static const char *route_what(char *buf, size_t n, const struct route_want *w)
{
	char a[INET_ADDRSTRLEN];
	snprintf(buf, n, "route %s/%u type %u proto %u", inet_ntop(AF_INET, &w->dst, a, sizeof(a)), w->plen, w->type,
		 w->protocol);
	return buf;
}

static bool map_route(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	if (lcp_nl_family(nlh, sizeof(struct rtmsg)) == AF_INET6)
		return lcp_nl6_map_route(ctx, nlh); /* lcp_nl_route6.c */
	struct route_want w = { 0 };
	enum lcp_nl_ignore why = route_decode(nlh, &w, true);
	char what[80];
	if (why != LCP_NL_IGN_N)
		return lcp_nl_ignore(why, route_what(what, sizeof(what), &w));
	if (nlh->nlmsg_type == RTM_DELROUTE) {
		int rc = route_remove(w.dst, w.plen);
		return rc == 0 || rc == -ENOENT ? lcp_nl_applied() : lcp_nl_ignore(LCP_NL_IGN_REFUSED, "route delete");
	}
	return route_install(ctx, &w);
}

/* ---- routes through a nexthop object that changed (the nhid index) ---- */

/* A route through a nexthop object, resolved again (the object replaced)
 * or removed (the object, or a group's member it stood on, is gone). */
static void route_reresolve(const struct lcp_nl_route *r, void *arg)
{
	const struct lcp_nl_ctx *ctx = arg;
	struct route_want w = { .dst = r->dst, .nhid = r->nhid, .plen = r->plen, .type = r->type,
				.protocol = r->protocol };
	lcp_nl_stats.nh_routes++;
	if (nh_path(r->nhid, &w) != LCP_NL_IGN_N) {
		route_remove(r->dst, r->plen);
		return;
	}
	if (!want_maps(&w)) {
		route_remove(r->dst, r->plen); /* now a kind sluice does not map */
		return;
	}
	if (!route_install(ctx, &w))
		route_remove(r->dst, r->plen); /* never keep the old path of a changed object */
}

/* Nexthop object id changed (replaced) or went: its routes, and those of
 * the groups it heads, follow. A member that went from a group may have
 * changed the group in ways the kernel does not announce: re-dump. */
static void nh_changed(const struct lcp_nl_ctx *ctx, uint32_t id, bool gone)
{
	lcp_nl_route_each_nh(id, route_reresolve, (void *)ctx);
	lcp_nl6_nh_changed(ctx, id); /* IPv6 routes through it, or through a group it is in */
	for (int i = 0; i < NH_MAX; i++) {
		if (!nhs[i].used || !nhs[i].group || !nh_has_member(&nhs[i], id))
			continue;
		if (gone)
			lcp_nl_redump_wanted = true;
		else
			lcp_nl_route_each_nh(nhs[i].id, route_reresolve, (void *)ctx);
	}
}

static bool apply(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	switch (nlh->nlmsg_type) {
	case RTM_NEWADDR:
	case RTM_DELADDR:
		return lcp_nl_map_addr(ctx, nlh);
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		return map_route(ctx, nlh);
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		return lcp_nl_map_neigh(ctx, nlh);
	case RTM_NEWLINK:
	case RTM_DELLINK:
		return lcp_nl_map_link(ctx, nlh);
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		return map_nexthop(ctx, nlh);
	default:
		return lcp_nl_ignore(LCP_NL_IGN_OTHER, "message type");
	}
}

bool lcp_nl_apply(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	lcp_nl_stats.messages++;
	if (nlh->nlmsg_len < NLMSG_HDRLEN)
		return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "short message");
	if (!apply(ctx, nlh))
		return false;
	lcp_nl_stats.applied_kind[applied_kind(nlh)]++;
	return true;
}
