/* AF_INET6 rtnetlink messages (rtnetlink(7)) -> sluice's IPv6 tables, as
 * lcp_nl_map.c and lcp_nl_link.c do IPv4's. Barrier held.
 *
 *   RTM_NEWADDR/DELADDR on a TAP    the port's IPv6 address (ip6_if_addr_*);
 *     link-local (fe80::/10)           the TAP has the port's MAC, so Linux's
 *                                      EUI-64 link-local is sluice's own: it
 *                                      only enables IPv6 on the port. One that
 *                                      differs (addr_gen_mode stable/random,
 *                                      or configured) becomes the port's
 *                                      configured link-local, so sluice
 *                                      answers ND for the address Linux's
 *                                      daemons use as their source.
 *   RTM_NEWROUTE/DELROUTE           a route of source linux (ip6_route_src_*)
 *     unicast via a gateway on a TAP   next hop on the port (link-local ones
 *                                      too: FRR installs BGP routes via the
 *                                      peer's link-local address)
 *     unicast, RTA_OIF only            a device route: glean on the port
 *     RTA_MULTIPATH, a nexthop group   one multipath route (ECMP), weights kept
 *     NLM_F_APPEND                     paths added to Linux's route
 *     a delete naming gateways         those paths removed (Linux announces a
 *                                      multipath route's paths going one by
 *                                      one); naming none: the whole route
 *     proto kernel                     skipped: the address made sluice's own
 *                                      (connected prefixes, fe80::/64); the
 *                                      local table (local /128s, ff00::/8) is
 *                                      another table, skipped too
 *     blackhole, unreachable, prohibit a route that refuses: dropped, ICMPv6
 *                                      unreachable code 0 (no route), code 1
 *                                      (administratively prohibited); also a
 *                                      nexthop object that is a blackhole
 *   RTM_NEWNEIGH/DELNEIGH on a TAP  the port's IPv6 neighbour (NUD_PERMANENT:
 *                                   static); multicast entries skipped
 *
 * Routes through a nexthop object carry its id (ip6_route_path.tag); the
 * object replaced or deleted resolves them again by a walk of Linux's IPv6
 * routes (nexthop objects change at control-plane pace). Each message is
 * checked whole before anything changes. */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_route.h"
#include "nodes/lcp/lcp.h"
#include "nodes/lcp/lcp_nl.h"
#include "nodes/lcp/lcp_nl_map_private.h"

#define ADDR6_MAX (DEV_MAX * (IP6_IF_MAX_ADDRS + 1))

/* Addresses Linux gave (for deletes and the sweep). */
static struct {
	uint32_t phy, gen;
	struct in6_addr addr;
	uint8_t plen;
	bool used;
} addrs6[ADDR6_MAX];

void lcp_nl6_reset(void)
{
	memset(addrs6, 0, sizeof(addrs6));
}

bool lcp_nl6_gateway(const struct lcp_nl_attrs *at, int type, struct in6_addr *a)
{
	const struct nlattr *x = at->tb[type];
	if (!x || mnl_attr_get_payload_len(x) != 16)
		return false;
	memcpy(a, mnl_attr_get_payload(x), 16);
	return true;
}

/* ---- addresses ---- */

static int addr6_slot(uint32_t phy, const struct in6_addr *a, uint8_t plen)
{
	for (int i = 0; i < ADDR6_MAX; i++)
		if (addrs6[i].used && addrs6[i].phy == phy && addrs6[i].plen == plen && ip6_addr_eq(&addrs6[i].addr, a))
			return i;
	return -1;
}

static bool addr6_add(const struct lcp_nl_ctx *ctx, uint32_t phy, const struct in6_addr *a, uint8_t plen)
{
	char err[128];
	int k = addr6_slot(phy, a, plen);
	if (k >= 0) { /* Linux's already: marked for the sweep */
		addrs6[k].gen = ctx->gen;
		return lcp_nl_applied();
	}
	if (ip6_addr_is_link_local(a)) {
		if (ip6_if_enable(phy, err, sizeof(err)))
			return lcp_nl_ignore(LCP_NL_IGN_REFUSED, err);
		if (ip6_if_is_local(phy, a))
			return lcp_nl_applied(); /* the EUI-64 one from the same MAC: sluice's own */
	} else if (ip6_if_is_local(phy, a)) {
		return lcp_nl_applied(); /* configured in sluice too: stays sluice's */
	}
	for (k = 0; k < ADDR6_MAX && addrs6[k].used; k++)
		;
	if (k == ADDR6_MAX)
		return lcp_nl_ignore(LCP_NL_IGN_REFUSED, "IPv6 address book full");
	if (ip6_if_addr_add(phy, a, plen, err, sizeof(err)))
		return lcp_nl_ignore(LCP_NL_IGN_REFUSED, err);
	addrs6[k] = (typeof(addrs6[0])){ .phy = phy, .gen = ctx->gen, .addr = *a, .plen = plen, .used = true };
	return lcp_nl_applied();
}

static bool addr6_del(uint32_t phy, const struct in6_addr *a, uint8_t plen)
{
	char err[128];
	int k = addr6_slot(phy, a, plen);
	if (k < 0)
		return lcp_nl_applied(); /* not Linux's, or gone already */
	addrs6[k].used = false;
	int rc = ip6_if_addr_del(phy, a, plen, err, sizeof(err));
	return rc == 0 || rc == -ENOENT ? lcp_nl_applied() : lcp_nl_ignore(LCP_NL_IGN_REFUSED, err);
}

bool lcp_nl6_map_addr(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct lcp_nl_attrs at;
	const struct ifaddrmsg *ifa = lcp_nl_parse(nlh, sizeof(*ifa), &at);
	struct in6_addr a;
	/* IFA_LOCAL only on point-to-point links, where IFA_ADDRESS is the peer's. */
	if (!ifa || (!lcp_nl6_gateway(&at, IFA_LOCAL, &a) && !lcp_nl6_gateway(&at, IFA_ADDRESS, &a)) ||
	    ifa->ifa_prefixlen > 128 || ifa->ifa_prefixlen == 0)
		return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "IPv6 address");
	uint32_t phy = lcp_nl_phy_of_ifindex(ctx, ifa->ifa_index);
	if (phy == DEV_INDEX_INVALID)
		return lcp_nl_ignore(LCP_NL_IGN_NOT_TAP, "IPv6 address");
	return nlh->nlmsg_type == RTM_NEWADDR ? addr6_add(ctx, phy, &a, ifa->ifa_prefixlen)
					      : addr6_del(phy, &a, ifa->ifa_prefixlen);
}

/* ---- routes ---- */

struct route6_want {
	struct in6_addr dst;
	uint8_t plen, type, protocol;
	uint32_t nhid;
	uint32_t n;                           /* paths in p (oif in p[].if_index until mapped) */
	struct ip6_route_path p[IP6_ROUTE_MAX_PATHS];
};

/* rtm_type (lcp_nl_type_rejects) -> the IPv6 kind of a route that refuses. */
static uint8_t reject_kind(uint8_t type)
{
	return type == RTN_UNREACHABLE ? IP6_ADJ_UNREACH : type == RTN_PROHIBIT ? IP6_ADJ_PROHIBIT : IP6_ADJ_BLACKHOLE;
}

/* The route's one path of a refusing kind (its type's, or a blackhole
 * nexthop object's): no interface, no next hop. */
static void want_reject(struct route6_want *w, uint8_t type)
{
	w->p[0] = (struct ip6_route_path){ .kind = reject_kind(type), .protocol = w->protocol,
					   .if_index = DEV_INDEX_INVALID, .tag = w->nhid };
	w->n = 1;
}

static void want_path(struct route6_want *w, uint32_t oif, const struct in6_addr *gw, uint16_t weight)
{
	struct ip6_route_path *q = &w->p[w->n++];
	*q = (struct ip6_route_path){ .kind = gw ? IP6_ADJ_REWRITE : IP6_ADJ_GLEAN, .protocol = w->protocol,
				      .weight = weight, .if_index = oif, .tag = w->nhid };
	if (gw)
		q->next_hop = *gw;
}

/* One path of RTA_MULTIPATH (weight rtnh_hops + 1, RTA_GATEWAY inside). */
static bool mp6_path(const struct rtnexthop *rtnh, const struct lcp_nl_attrs *at, void *arg)
{
	struct route6_want *w = arg;
	struct in6_addr gw;
	bool has_gw = lcp_nl6_gateway(at, RTA_GATEWAY, &gw);
	if (!has_gw && at->tb[RTA_GATEWAY])
		return false; /* a gateway of another size */
	want_path(w, (uint32_t)rtnh->rtnh_ifindex, has_gw ? &gw : NULL, (uint16_t)(rtnh->rtnh_hops + 1));
	return true;
}

static bool mp6_decode(const struct nlattr *mp, struct route6_want *w)
{
	return lcp_nl_rtnh_each(mp, IP6_ROUTE_MAX_PATHS, mp6_path, w) > 0;
}

/* One IPv6 gateway object as a path (lcp_nl_nh_walk's fn). */
static bool nh6_path(const struct lcp_nl_nh *o, uint16_t weight, void *arg)
{
	if (o->family != AF_INET6)
		return false;
	want_path(arg, o->oif, ip6_addr_is_unspecified(&o->gw6) ? NULL : &o->gw6, weight);
	return true;
}

/* The paths of nexthop object id (a gateway, or a group's members; the
 * walk is IPv4's too). A blackhole object: the route drops, as the
 * kernel's does. */
static enum lcp_nl_ignore nh6_paths(uint32_t id, struct route6_want *w)
{
	bool blackhole;
	w->n = 0;
	enum lcp_nl_ignore why = lcp_nl_nh_walk(id, &blackhole, nh6_path, w);
	if (why == LCP_NL_IGN_N && blackhole)
		want_reject(w, RTN_BLACKHOLE);
	return why;
}

/* Each path's Linux ifindex -> the port. */
static enum lcp_nl_ignore map_oifs(const struct lcp_nl_ctx *ctx, struct route6_want *w)
{
	for (uint32_t i = 0; i < w->n; i++) {
		w->p[i].gen = ctx->gen;
		if (ip6_adj_kind_rejects(w->p[i].kind))
			continue; /* no interface */
		w->p[i].if_index = lcp_nl_phy_of_ifindex(ctx, w->p[i].if_index);
		if (w->p[i].if_index == DEV_INDEX_INVALID)
			return LCP_NL_IGN_NOT_TAP;
	}
	return LCP_NL_IGN_N;
}

/* Decode a route message into w; LCP_NL_IGN_N when it maps. */
static enum lcp_nl_ignore route6_decode(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh,
					struct route6_want *w)
{
	struct lcp_nl_attrs at;
	const struct rtmsg *rtm = lcp_nl_parse(nlh, sizeof(*rtm), &at);
	if (!rtm || rtm->rtm_dst_len > 128)
		return LCP_NL_IGN_MALFORMED;
	uint32_t oif = 0;
	if (!lcp_nl_table_mapped(&at, rtm))
		return LCP_NL_IGN_TABLE;
	w->plen = rtm->rtm_dst_len;
	w->type = rtm->rtm_type;
	w->protocol = rtm->rtm_protocol;
	if (rtm->rtm_dst_len && !lcp_nl6_gateway(&at, RTA_DST, &w->dst))
		return LCP_NL_IGN_MALFORMED;
	if (rtm->rtm_protocol == RTPROT_KERNEL)
		return LCP_NL_IGN_KERNEL;
	if (lcp_nl_type_rejects(w->type) && !at.tb[RTA_NH_ID]) {
		want_reject(w, w->type);
		return LCP_NL_IGN_N;
	}
	if (w->type != RTN_UNICAST && !(w->type == RTN_BLACKHOLE && at.tb[RTA_NH_ID]))
		return LCP_NL_IGN_ROUTE_TYPE;
	struct in6_addr gw;
	bool has_gw = lcp_nl6_gateway(&at, RTA_GATEWAY, &gw);
	if (at.tb[RTA_GATEWAY] && !has_gw)
		return LCP_NL_IGN_MALFORMED;
	if (lcp_nl_get_u32(&at, RTA_NH_ID, &w->nhid)) {
		enum lcp_nl_ignore why = nh6_paths(w->nhid, w);
		if (why != LCP_NL_IGN_N)
			return nlh->nlmsg_type == RTM_DELROUTE ? LCP_NL_IGN_N : why; /* a delete needs the prefix only */
	} else if (at.tb[RTA_MULTIPATH]) {
		if (!mp6_decode(at.tb[RTA_MULTIPATH], w))
			return LCP_NL_IGN_MALFORMED;
	} else if (lcp_nl_get_u32(&at, RTA_OIF, &oif) || has_gw) {
		want_path(w, oif, has_gw ? &gw : NULL, 1);
	} else if (nlh->nlmsg_type == RTM_NEWROUTE) {
		return LCP_NL_IGN_ROUTE_TYPE;
	}
	return map_oifs(ctx, w);
}

static const char *route6_what(char *buf, size_t n, const struct route6_want *w)
{
	char a[INET6_ADDRSTRLEN];
	snprintf(buf, n, "IPv6 route %s/%u type %u proto %u", inet_ntop(AF_INET6, &w->dst, a, sizeof(a)), w->plen,
		 w->type, w->protocol);
	return buf;
}

/* A delete: the paths it names (a multipath route's going one by one),
 * else (none named, a nexthop object's, a route that refuses) the whole
 * route. */
static bool route6_delete(const struct route6_want *w)
{
	char err[128];
	int rc = 0;
	bool whole = w->nhid || !w->n || ip6_adj_kind_rejects(w->p[0].kind);
	if (whole)
		rc = ip6_route_src_del(IP6_SRC_LINUX, &w->dst, w->plen, err, sizeof(err));
	for (uint32_t i = 0; !whole && i < w->n && rc != -ENOENT; i++) {
		rc = ip6_route_src_path_del(IP6_SRC_LINUX, &w->dst, w->plen, &w->p[i], err, sizeof(err));
		rc = rc == -ENOENT ? 0 : rc; /* that path gone already */
	}
	return rc == 0 || rc == -ENOENT ? lcp_nl_applied() : lcp_nl_ignore(LCP_NL_IGN_REFUSED, err);
}

static bool map_route6(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct route6_want w = { 0 };
	char what[96], err[128];
	enum lcp_nl_ignore why = route6_decode(ctx, nlh, &w);
	if (why == LCP_NL_IGN_NOT_TAP && nlh->nlmsg_type == RTM_DELROUTE)
		why = LCP_NL_IGN_N, w.n = 0; /* via an interface no longer a TAP: the prefix goes */
	if (why != LCP_NL_IGN_N)
		return lcp_nl_ignore(why, route6_what(what, sizeof(what), &w));
	if (nlh->nlmsg_type == RTM_DELROUTE)
		return route6_delete(&w);
	int rc = nlh->nlmsg_flags & NLM_F_APPEND
			 ? ip6_route_src_path_add(IP6_SRC_LINUX, &w.dst, w.plen, w.p, w.n, err, sizeof(err))
			 : ip6_route_src_set(IP6_SRC_LINUX, &w.dst, w.plen, w.p, w.n, err, sizeof(err));
	if (rc)
		return lcp_nl_ignore(LCP_NL_IGN_REFUSED, err);
	lcp_nl_stats.multipath += w.n > 1;
	return lcp_nl_applied();
}

bool lcp_nl6_map_route(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	bool ok = map_route6(ctx, nlh);
	lcp_nl_stats.routes6 = ip6_route_src_count(IP6_SRC_LINUX);
	return ok;
}

/* ---- routes through a nexthop object that changed ---- */

struct nh6_change {
	const struct lcp_nl_ctx *ctx;
	uint32_t id;
};

/* Whether nexthop object tag is id, or a group holding id. */
static bool nh_uses(uint32_t tag, uint32_t id)
{
	if (tag == id)
		return true;
	const struct lcp_nl_nh *g = tag ? lcp_nl_nh_find(tag) : NULL;
	for (uint32_t i = 0; g && g->group && i < g->n_members; i++)
		if (g->members[i].id == id)
			return true;
	return false;
}

static void route6_reresolve(const struct in6_addr *prefix, uint8_t plen, const struct ip6_route_path *p,
			     uint32_t n, void *arg)
{
	const struct nh6_change *c = arg;
	char err[128];
	(void)n;
	if (!nh_uses(p[0].tag, c->id))
		return;
	lcp_nl_stats.nh_routes++;
	struct route6_want w = { .dst = *prefix, .plen = plen, .protocol = p[0].protocol, .nhid = p[0].tag };
	if (nh6_paths(w.nhid, &w) != LCP_NL_IGN_N || map_oifs(c->ctx, &w) != LCP_NL_IGN_N ||
	    ip6_route_src_set(IP6_SRC_LINUX, prefix, plen, w.p, w.n, err, sizeof(err)))
		ip6_route_src_del(IP6_SRC_LINUX, prefix, plen, err, sizeof(err)); /* never the old path */
}

void lcp_nl6_nh_changed(const struct lcp_nl_ctx *ctx, uint32_t id)
{
	struct nh6_change c = { ctx, id };
	if (ip6_route_src_count(IP6_SRC_LINUX))
		ip6_route_src_each(IP6_SRC_LINUX, route6_reresolve, &c);
	lcp_nl_stats.routes6 = ip6_route_src_count(IP6_SRC_LINUX);
}

/* ---- neighbours ---- */

bool lcp_nl6_map_neigh(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct lcp_nl_attrs at;
	const struct ndmsg *nd = lcp_nl_parse(nlh, sizeof(*nd), &at);
	struct in6_addr ip;
	if (!nd || !lcp_nl6_gateway(&at, NDA_DST, &ip))
		return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "IPv6 neighbour");
	uint32_t phy = lcp_nl_phy_of_ifindex(ctx, (uint32_t)nd->ndm_ifindex);
	if (phy == DEV_INDEX_INVALID)
		return lcp_nl_ignore(LCP_NL_IGN_NOT_TAP, "IPv6 neighbour");
	if (ip6_addr_is_multicast(&ip) || ip6_addr_is_unspecified(&ip))
		return lcp_nl_applied(); /* Linux's NOARP entries for groups: nothing to resolve */
	ip6_nbr_lock();
	const struct ip6_nbr *n = ip6_nbr_lookup(phy, &ip);
	bool was_static = n && (n->flags & IP6_NBR_F_STATIC);
	ip6_nbr_unlock();
	/* As IPv4's: sluice resolves and ages its own entries by ND; only a
	 * permanent entry's removal counts. */
	if (nlh->nlmsg_type == RTM_DELNEIGH || (nd->ndm_state & (NUD_FAILED | NUD_INCOMPLETE))) {
		if (was_static)
			ip6_nbr_flush(phy, &ip, 128);
		return lcp_nl_applied();
	}
	const struct nlattr *ll = at.tb[NDA_LLADDR];
	if (!ll || mnl_attr_get_payload_len(ll) != 6)
		return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "IPv6 neighbour without a MAC");
	char err[128];
	if (!ip6_if(phy) && ip6_if_enable(phy, err, sizeof(err)))
		return lcp_nl_ignore(LCP_NL_IGN_REFUSED, err);
	if (ip6_nbr_set(phy, &ip, mnl_attr_get_payload(ll), nd->ndm_state & NUD_PERMANENT, err, sizeof(err)))
		return lcp_nl_ignore(LCP_NL_IGN_REFUSED, err);
	return lcp_nl_applied();
}

/* ---- the sweep ---- */

bool lcp_nl6_sweep_step(uint32_t gen, uint32_t *bucket, uint32_t *mask, uint64_t deadline_ns, uint32_t *swept)
{
	bool done = ip6_route_src_sweep_step(IP6_SRC_LINUX, gen, LCP_NL_GEN_OWNER, bucket, mask, deadline_ns, swept);
	lcp_nl_stats.routes6 = ip6_route_src_count(IP6_SRC_LINUX);
	return done;
}

uint32_t lcp_nl6_sweep(uint32_t gen)
{
	char err[128];
	uint32_t n = 0;
	for (int i = 0; i < ADDR6_MAX; i++)
		if (addrs6[i].used && addrs6[i].gen != gen && ((addrs6[i].gen ^ gen) & LCP_NL_GEN_OWNER) == 0) {
			addrs6[i].used = false;
			n += ip6_if_addr_del(addrs6[i].phy, &addrs6[i].addr, addrs6[i].plen, err, sizeof(err)) == 0;
		}
	return n;
}
