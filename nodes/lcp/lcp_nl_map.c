/* One rtnetlink message (rtnetlink(7)) -> sluice's tables. Barrier held.
 *
 *   RTM_NEWADDR/DELADDR on a TAP    the paired port's address (ip4_if_addr_*)
 *   RTM_NEWROUTE/DELROUTE           a route of source linux (ip4_route_src_*):
 *     unicast via a TAP                next hop on the paired port
 *     blackhole                        drop
 *     proto kernel                     skipped: the address made sluice's own
 *     unreachable, prohibit, throw     ignored, counted (no ICMP-error
 *                                      adjacency in the FIB yet)
 *     RTA_MULTIPATH, a nexthop group   first path only, counted (no ECMP yet)
 *   RTM_NEWNEXTHOP/DELNEXTHOP       nexthop objects, for routes with RTA_NH_ID;
 *                                   one replaced or deleted changes the
 *                                   routes through it (lcp_nl_route.c's index)
 *   RTM_NEWNEIGH/DELNEIGH on a TAP  the port's neighbour (NUD_PERMANENT: static)
 *   RTM_NEWLINK on a TAP            Linux's up/down transitions, MTU, MAC -> the port
 *
 * Each message is checked whole before anything changes, so it is applied
 * whole or not at all; what cannot be mapped is counted per reason and
 * logged once per reason. IPv4 only for now: AF_INET6 counts as
 * "unsupported family" until sluice has IPv6 (the families stay in the
 * messages and in struct ip4_route_path's neighbours, not in this file's
 * shape). */
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
#include "nodes/lcp/lcp_nl_route.h"

struct lcp_nl_stats lcp_nl_stats;
uint32_t lcp_nl_route_table;
bool lcp_nl_redump_wanted;

#define ATTR_MAX 64 /* above every RTA_, IFA_, NDA_, NHA_ we read */
#define NH_MAX 1024 /* nexthop objects remembered */
#define ADDR_MAX (DEV_MAX * IP4_IF_MAX_ADDRS)

static bool logged[LCP_NL_IGN_N];
static uint32_t test_ifindex[DEV_MAX];

/* Nexthop objects by id: a gateway via an interface, a blackhole, or a
 * group (its first member stands for it). */
static struct nh_obj {
	uint32_t id, oif, gw, first; /* gw network order; first: a group's first member */
	bool blackhole, group, used;
} nhs[NH_MAX];

/* Addresses Linux gave (for the sweep), and the TAPs' last up state. */
static struct {
	uint32_t phy, addr, gen;
	uint8_t plen;
	bool used;
} addrs[ADDR_MAX];
static int8_t link_up[DEV_MAX]; /* -1 unknown, 0 down, 1 up */

const char *lcp_nl_ignore_name(enum lcp_nl_ignore why)
{
	static const char *const names[] = {
		"not a TAP of ours", "unsupported family", "other table", "proto kernel (address's own)",
		"unsupported route type", "unknown nexthop id", "refused by sluice", "malformed",
		"unmapped message type",
	};
	return why < LCP_NL_IGN_N ? names[why] : "?";
}

static bool ignore(enum lcp_nl_ignore why, const char *detail)
{
	lcp_nl_stats.ignored[why]++;
	if (!logged[why]) {
		logged[why] = true;
		base_log("lcp-nl", "ignored: %s (%s); counted in show lcp, logged once", lcp_nl_ignore_name(why), detail);
	}
	return false;
}

static bool applied(void)
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
	memset(addrs, 0, sizeof(addrs));
	memset(link_up, -1, sizeof(link_up));
	memset(logged, 0, sizeof(logged));
	lcp_nl_route_reset();
	lcp_nl_redump_wanted = false;
}

static void __attribute__((constructor)) map_init(void)
{
	memset(link_up, -1, sizeof(link_up));
}

/* The port whose TAP is Linux's ifindex in netns, or DEV_INDEX_INVALID. */
static uint32_t phy_of_ifindex(const struct lcp_nl_ctx *ctx, uint32_t ifindex)
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

/* ---- attributes ---- */

struct attrs {
	const struct nlattr *tb[ATTR_MAX];
};

static int attr_cb(const struct nlattr *a, void *data)
{
	struct attrs *at = data;
	uint16_t type = mnl_attr_get_type(a);
	if (type < ATTR_MAX)
		at->tb[type] = a;
	return MNL_CB_OK;
}

/* The message's fixed header (hdrlen bytes, a multiple of 4 for every
 * rtnetlink header) and its attributes, or NULL when it is too short or an
 * attribute runs past the end (mnl_attr_parse would stop there quietly). */
static const void *parse(const struct nlmsghdr *nlh, size_t hdrlen, struct attrs *at)
{
	memset(at, 0, sizeof(*at));
	if (nlh->nlmsg_len < NLMSG_HDRLEN + hdrlen)
		return NULL;
	const struct nlattr *a;
	mnl_attr_for_each(a, nlh, hdrlen) attr_cb(a, at);
	if ((const void *)a != mnl_nlmsg_get_payload_tail(nlh))
		return NULL;
	return mnl_nlmsg_get_payload(nlh);
}

/* A u32 attribute, checked for its size: false when absent or bad. */
static bool get_u32(const struct attrs *at, int type, uint32_t *v)
{
	const struct nlattr *a = at->tb[type];
	if (!a || mnl_attr_get_payload_len(a) != 4)
		return false;
	*v = mnl_attr_get_u32(a);
	return true;
}

/* ---- addresses ---- */

/* Addresses Linux gave are Linux's: a delete from Linux removes only
 * those, never one the CLI or startup.conf configured (the same address on
 * both sides is the usual linux-cp set-up). */
static int addr_slot(uint32_t phy, uint32_t addr, uint8_t plen)
{
	for (int i = 0; i < ADDR_MAX; i++)
		if (addrs[i].used && addrs[i].phy == phy && addrs[i].addr == addr && addrs[i].plen == plen)
			return i;
	return -1;
}

static void addr_remember(uint32_t phy, uint32_t addr, uint8_t plen, uint32_t gen)
{
	for (int i = 0; i < ADDR_MAX; i++)
		if (!addrs[i].used) {
			addrs[i] = (typeof(addrs[0])){ phy, addr, gen, plen, true };
			return;
		}
}

static bool addr_add(const struct lcp_nl_ctx *ctx, uint32_t phy, uint32_t addr, uint8_t plen)
{
	char err[128];
	int k = addr_slot(phy, addr, plen);
	if (k >= 0) { /* Linux's already: marked for the sweep */
		addrs[k].gen = ctx->gen;
		return applied();
	}
	if (ip4_if_is_local(phy, addr))
		return applied(); /* configured in sluice too: stays sluice's */
	if (ip4_if_addr_add(phy, addr, plen, err, sizeof(err)))
		return ignore(LCP_NL_IGN_REFUSED, err);
	addr_remember(phy, addr, plen, ctx->gen);
	return applied();
}

static bool addr_del(uint32_t phy, uint32_t addr, uint8_t plen)
{
	char err[128];
	int k = addr_slot(phy, addr, plen);
	if (k < 0)
		return applied(); /* not Linux's, or gone already */
	addrs[k].used = false;
	int rc = ip4_if_addr_del(phy, addr, plen, err, sizeof(err));
	return rc == 0 || rc == -ENOENT ? applied() : ignore(LCP_NL_IGN_REFUSED, err);
}

static bool map_addr(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct attrs at;
	const struct ifaddrmsg *ifa = parse(nlh, sizeof(*ifa), &at);
	if (!ifa)
		return ignore(LCP_NL_IGN_MALFORMED, "address message");
	if (ifa->ifa_family != AF_INET)
		return ignore(LCP_NL_IGN_FAMILY, "address");
	uint32_t addr;
	if ((!get_u32(&at, IFA_LOCAL, &addr) && !get_u32(&at, IFA_ADDRESS, &addr)) || ifa->ifa_prefixlen > 32)
		return ignore(LCP_NL_IGN_MALFORMED, "address without IFA_LOCAL");
	uint32_t phy = phy_of_ifindex(ctx, ifa->ifa_index);
	if (phy == DEV_INDEX_INVALID)
		return ignore(LCP_NL_IGN_NOT_TAP, "address");
	return nlh->nlmsg_type == RTM_NEWADDR ? addr_add(ctx, phy, addr, ifa->ifa_prefixlen)
					      : addr_del(phy, addr, ifa->ifa_prefixlen);
}

/* ---- nexthop objects ---- */

static struct nh_obj *nh_find(uint32_t id)
{
	for (int i = 0; i < NH_MAX; i++)
		if (nhs[i].used && nhs[i].id == id)
			return &nhs[i];
	return NULL;
}

static void nh_changed(const struct lcp_nl_ctx *ctx, uint32_t id, bool gone);

static bool map_nexthop(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct attrs at;
	const struct nhmsg *nhm = parse(nlh, sizeof(*nhm), &at);
	uint32_t id;
	if (!nhm || !get_u32(&at, NHA_ID, &id))
		return ignore(LCP_NL_IGN_MALFORMED, "nexthop message");
	struct nh_obj *o = nh_find(id);
	/* Routes through a nexthop object that changes or goes change with it
	 * in the kernel, with no route message: the nhid index finds them. */
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		if (o)
			o->used = false;
		if (o)
			nh_changed(ctx, id, true);
		return applied();
	}
	struct nh_obj n = { .id = id, .used = true, .blackhole = at.tb[NHA_BLACKHOLE] != NULL };
	const struct nlattr *g = at.tb[NHA_GROUP];
	if (g) {
		if (mnl_attr_get_payload_len(g) < sizeof(struct nexthop_grp))
			return ignore(LCP_NL_IGN_MALFORMED, "empty nexthop group");
		n.group = true;
		n.first = ((const struct nexthop_grp *)mnl_attr_get_payload(g))->id;
	} else if (!n.blackhole) {
		if (nhm->nh_family != AF_INET)
			return ignore(LCP_NL_IGN_FAMILY, "nexthop");
		if (!get_u32(&at, NHA_OIF, &n.oif))
			return ignore(LCP_NL_IGN_MALFORMED, "nexthop without NHA_OIF");
		get_u32(&at, NHA_GATEWAY, &n.gw);
	}
	for (int i = 0; !o && i < NH_MAX; i++)
		if (!nhs[i].used)
			o = &nhs[i];
	if (!o)
		return ignore(LCP_NL_IGN_REFUSED, "nexthop table full");
	bool known = o->used;
	*o = n;
	if (known)
		nh_changed(ctx, id, false);
	return applied();
}

/* ---- routes ---- */

struct route_want {
	uint32_t dst, gw, oif; /* dst, gw network order */
	uint32_t nhid;         /* RTA_NH_ID, 0: none */
	uint8_t plen, type, protocol;
	bool multipath;
};

/* The first path of RTA_MULTIPATH into w. */
static bool first_path(const struct nlattr *mp, struct route_want *w)
{
	const struct rtnexthop *rtnh = mnl_attr_get_payload(mp);
	size_t len = mnl_attr_get_payload_len(mp);
	if (len < sizeof(*rtnh) || rtnh->rtnh_len < sizeof(*rtnh) || rtnh->rtnh_len > len)
		return false;
	w->oif = (uint32_t)rtnh->rtnh_ifindex;
	struct attrs at = { 0 };
	if (mnl_attr_parse_payload(RTNH_DATA(rtnh), rtnh->rtnh_len - sizeof(*rtnh), attr_cb, &at) < 0)
		return false;
	get_u32(&at, RTA_GATEWAY, &w->gw);
	w->multipath = (size_t)RTNH_ALIGN(rtnh->rtnh_len) < len; /* more paths follow */
	return true;
}

/* The path of a nexthop object (a group's first member). */
static enum lcp_nl_ignore nh_path(uint32_t id, struct route_want *w)
{
	const struct nh_obj *o = nh_find(id);
	if (o && o->group) {
		w->multipath = true;
		o = nh_find(o->first);
	}
	if (!o)
		return LCP_NL_IGN_NO_NEXTHOP;
	if (o->blackhole)
		w->type = RTN_BLACKHOLE;
	w->oif = o->oif;
	w->gw = o->gw;
	return LCP_NL_IGN_N;
}

/* Decode a route message into w; LCP_NL_IGN_N when it maps. */
static enum lcp_nl_ignore route_decode(const struct nlmsghdr *nlh, struct route_want *w)
{
	struct attrs at;
	const struct rtmsg *rtm = parse(nlh, sizeof(*rtm), &at);
	if (!rtm)
		return LCP_NL_IGN_MALFORMED;
	if (rtm->rtm_family != AF_INET)
		return LCP_NL_IGN_FAMILY;
	if (rtm->rtm_dst_len > 32)
		return LCP_NL_IGN_MALFORMED;
	uint32_t table = rtm->rtm_table;
	get_u32(&at, RTA_TABLE, &table);
	if (table != RT_TABLE_MAIN && (!lcp_nl_route_table || table != lcp_nl_route_table))
		return LCP_NL_IGN_TABLE;
	w->plen = rtm->rtm_dst_len;
	w->type = rtm->rtm_type;
	w->protocol = rtm->rtm_protocol;
	if (rtm->rtm_dst_len && !get_u32(&at, RTA_DST, &w->dst))
		return LCP_NL_IGN_MALFORMED;
	if (rtm->rtm_protocol == RTPROT_KERNEL)
		return LCP_NL_IGN_KERNEL;
	if (nlh->nlmsg_type == RTM_DELROUTE)
		return LCP_NL_IGN_N; /* the prefix is all a delete needs */
	if (get_u32(&at, RTA_NH_ID, &w->nhid)) {
		enum lcp_nl_ignore why = nh_path(w->nhid, w);
		if (why != LCP_NL_IGN_N)
			return why;
	} else if (at.tb[RTA_MULTIPATH]) {
		if (!first_path(at.tb[RTA_MULTIPATH], w))
			return LCP_NL_IGN_MALFORMED;
	} else {
		get_u32(&at, RTA_OIF, &w->oif);
		get_u32(&at, RTA_GATEWAY, &w->gw);
	}
	if (w->type == RTN_BLACKHOLE)
		return LCP_NL_IGN_N;
	if (w->type != RTN_UNICAST || !w->gw)
		return LCP_NL_IGN_ROUTE_TYPE;
	return LCP_NL_IGN_N;
}

/* Remove the Linux route of dst/plen from sluice and the book. */
static int route_remove(uint32_t dst, uint8_t plen)
{
	char err[128];
	lcp_nl_route_forget(dst, plen);
	return ip4_route_src_del(IP4_SRC_LINUX, dst, plen, err, sizeof(err));
}

/* Install w (decoded, or re-resolved through its nexthop object) as the
 * Linux route of its prefix, and note it in the book. */
static const char *route_what(char *buf, size_t n, const struct route_want *w);

static bool route_install(const struct lcp_nl_ctx *ctx, const struct route_want *w)
{
	char err[128];
	struct ip4_route_path p = { .kind = IP4_ADJ_DROP, .protocol = w->protocol, .gen = ctx->gen };
	if (w->type != RTN_BLACKHOLE) {
		p.kind = IP4_ADJ_REWRITE;
		p.next_hop = w->gw;
		p.if_index = phy_of_ifindex(ctx, w->oif);
		if (p.if_index == DEV_INDEX_INVALID)
			return ignore(LCP_NL_IGN_NOT_TAP, route_what(err, sizeof(err), w));
	}
	int rc = ip4_route_src_add(IP4_SRC_LINUX, w->dst, w->plen, &p, err, sizeof(err));
	if (rc)
		return ignore(LCP_NL_IGN_REFUSED, err);
	const struct lcp_nl_route r = { .dst = w->dst, .nhid = w->nhid, .gen = ctx->gen, .plen = w->plen,
					.protocol = w->protocol, .type = w->type };
	if (lcp_nl_route_note(&r)) { /* out of memory: sluice must not hold what it cannot sweep */
		route_remove(w->dst, w->plen);
		return ignore(LCP_NL_IGN_REFUSED, "out of memory for the route book");
	}
	lcp_nl_stats.multipath_first += w->multipath;
	return applied();
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
	struct route_want w = { 0 };
	enum lcp_nl_ignore why = route_decode(nlh, &w);
	char what[80];
	if (why != LCP_NL_IGN_N)
		return ignore(why, route_what(what, sizeof(what), &w));
	if (nlh->nlmsg_type == RTM_DELROUTE) {
		int rc = route_remove(w.dst, w.plen);
		return rc == 0 || rc == -ENOENT ? applied() : ignore(LCP_NL_IGN_REFUSED, "route delete");
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
	if (w.type != RTN_BLACKHOLE && (w.type != RTN_UNICAST || !w.gw)) {
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
	for (int i = 0; i < NH_MAX; i++) {
		if (!nhs[i].used || !nhs[i].group || nhs[i].first != id)
			continue;
		if (gone)
			lcp_nl_redump_wanted = true;
		else
			lcp_nl_route_each_nh(nhs[i].id, route_reresolve, (void *)ctx);
	}
}

/* ---- neighbours and links ---- */

static bool map_neigh(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct attrs at;
	const struct ndmsg *nd = parse(nlh, sizeof(*nd), &at);
	uint32_t ip;
	if (!nd)
		return ignore(LCP_NL_IGN_MALFORMED, "neighbour message");
	if (nd->ndm_family != AF_INET)
		return ignore(LCP_NL_IGN_FAMILY, "neighbour");
	if (!get_u32(&at, NDA_DST, &ip))
		return ignore(LCP_NL_IGN_MALFORMED, "neighbour without NDA_DST");
	uint32_t phy = phy_of_ifindex(ctx, (uint32_t)nd->ndm_ifindex);
	if (phy == DEV_INDEX_INVALID)
		return ignore(LCP_NL_IGN_NOT_TAP, "neighbour");
	bool is_static = nd->ndm_state & NUD_PERMANENT;
	ip4_nbr_lock();
	const struct ip4_nbr *n = ip4_nbr_lookup(phy, ip);
	bool was_static = n && (n->flags & IP4_NBR_F_STATIC);
	ip4_nbr_unlock();
	/* Linux's dynamic entries age on Linux's clock; sluice resolves and
	 * ages its own by ARP, so only a permanent entry's removal counts. */
	if (nlh->nlmsg_type == RTM_DELNEIGH || (nd->ndm_state & (NUD_FAILED | NUD_INCOMPLETE))) {
		if (was_static)
			ip4_nbr_flush(phy, ip, 0xffffffffu);
		return applied();
	}
	const struct nlattr *ll = at.tb[NDA_LLADDR];
	if (!ll || mnl_attr_get_payload_len(ll) != 6)
		return ignore(LCP_NL_IGN_MALFORMED, "neighbour without a MAC");
	char err[128];
	if (ip4_nbr_set(phy, ip, mnl_attr_get_payload(ll), is_static, err, sizeof(err)))
		return ignore(LCP_NL_IGN_REFUSED, err);
	return applied();
}

/* The TAP's MTU and MAC as Linux has them: the port follows (lcp.c). */
static void link_mtu_mac(uint32_t phy, const struct attrs *at)
{
	uint32_t mtu = 0;
	const struct nlattr *ll = at->tb[IFLA_ADDRESS];
	get_u32(at, IFLA_MTU, &mtu);
	lcp_host_link(phy, mtu, ll && mnl_attr_get_payload_len(ll) == 6 ? mnl_attr_get_payload(ll) : NULL);
}

/* Linux's up/down transitions of a TAP reach its port (`ip link set
 * s-eth0 down`); the first state seen only records (a TAP is made down
 * and brought up after), and a state equal to the port's changes nothing,
 * which ends the echo of the port -> TAP direction (lcp.c). */
static bool map_link(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct attrs at;
	const struct ifinfomsg *ifi = parse(nlh, sizeof(*ifi), &at);
	if (!ifi)
		return ignore(LCP_NL_IGN_MALFORMED, "link message");
	uint32_t phy = phy_of_ifindex(ctx, (uint32_t)ifi->ifi_index);
	if (phy == DEV_INDEX_INVALID) {
		if (nlh->nlmsg_type == RTM_DELLINK) /* perhaps a TAP already seen gone: its routes went unannounced */
			lcp_nl_redump_wanted = true;
		return ignore(LCP_NL_IGN_NOT_TAP, "link");
	}
	if (nlh->nlmsg_type == RTM_DELLINK)
		return ignore(LCP_NL_IGN_REFUSED, "a TAP deleted in Linux: lcp delete cleans up");
	int8_t up = (ifi->ifi_flags & IFF_UP) != 0, was = link_up[phy];
	link_up[phy] = up;
	if (was == 1 && !up) /* IPv4 drops the routes via a device that goes down (or is deleted) unannounced */
		lcp_nl_redump_wanted = true;
	struct device *d = dev_by_index(phy);
	if (was >= 0 && was != up && d && d->admin_up != (bool)up)
		dev_set_admin_up(d, up);
	link_mtu_mac(phy, &at);
	return applied();
}

bool lcp_nl_apply(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	lcp_nl_stats.messages++;
	if (nlh->nlmsg_len < NLMSG_HDRLEN)
		return ignore(LCP_NL_IGN_MALFORMED, "short message");
	switch (nlh->nlmsg_type) {
	case RTM_NEWADDR:
	case RTM_DELADDR:
		return map_addr(ctx, nlh);
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		return map_route(ctx, nlh);
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		return map_neigh(ctx, nlh);
	case RTM_NEWLINK:
	case RTM_DELLINK:
		return map_link(ctx, nlh);
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		return map_nexthop(ctx, nlh);
	default:
		return ignore(LCP_NL_IGN_OTHER, "message type");
	}
}

/* The addresses Linux gave that gen's dump did not show. */
uint32_t lcp_nl_sweep_addrs(uint32_t gen)
{
	uint32_t n = 0;
	char err[128];
	for (int i = 0; i < ADDR_MAX; i++)
		if (addrs[i].used && addrs[i].gen != gen && ((addrs[i].gen ^ gen) & LCP_NL_GEN_OWNER) == 0) {
			addrs[i].used = false;
			n += ip4_if_addr_del(addrs[i].phy, addrs[i].addr, addrs[i].plen, err, sizeof(err)) == 0;
		}
	return n;
}
