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
 *   RTM_NEWNEXTHOP/DELNEXTHOP       nexthop objects, for routes with RTA_NH_ID
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

struct lcp_nl_stats lcp_nl_stats;
uint32_t lcp_nl_route_table;
bool lcp_nl_redump_wanted;

#define ATTR_MAX 64 /* above every RTA_, IFA_, NDA_, NHA_ we read */
#define NH_MAX 1024 /* nexthop objects remembered */
#define ADDR_MAX (DEV_MAX * IP4_IF_MAX_ADDRS)

static bool logged[LCP_NL_IGN_N];
static uint32_t test_ifindex[DEV_MAX];

/* Nexthop objects by id: a gateway via an interface, a blackhole, or a
 * group (its members with their weights). */
static struct nh_obj {
	uint32_t id, oif, gw, first; /* gw network order; first: a group's first member */
	bool blackhole, group, used;
	uint8_t n_members;                             /* a group's */
	struct nexthop_grp members[IP4_LB_MAX_PATHS]; /* weight: the kernel's, minus 1 */
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

/* NHA_GROUP's members (linux/nexthop.h: struct nexthop_grp, weight - 1). */
static bool group_members(const struct nlattr *g, struct nh_obj *n)
{
	size_t k = mnl_attr_get_payload_len(g) / sizeof(struct nexthop_grp);
	if (k > IP4_LB_MAX_PATHS)
		return false;
	memcpy(n->members, mnl_attr_get_payload(g), k * sizeof(struct nexthop_grp));
	n->n_members = (uint8_t)k;
	return true;
}

static bool map_nexthop(const struct nlmsghdr *nlh)
{
	struct attrs at;
	const struct nhmsg *nhm = parse(nlh, sizeof(*nhm), &at);
	uint32_t id;
	if (!nhm || !get_u32(&at, NHA_ID, &id))
		return ignore(LCP_NL_IGN_MALFORMED, "nexthop message");
	struct nh_obj *o = nh_find(id);
	/* Routes through a nexthop object that changes or goes change with it
	 * in the kernel, with no route message: a re-dump brings sluice's in
	 * step (the listener's, after this batch). */
	if (o)
		lcp_nl_redump_wanted = true;
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		if (o)
			o->used = false;
		return applied();
	}
	struct nh_obj n = { .id = id, .used = true, .blackhole = at.tb[NHA_BLACKHOLE] != NULL };
	const struct nlattr *g = at.tb[NHA_GROUP];
	if (g) {
		if (mnl_attr_get_payload_len(g) < sizeof(struct nexthop_grp))
			return ignore(LCP_NL_IGN_MALFORMED, "empty nexthop group");
		n.group = true;
		n.first = ((const struct nexthop_grp *)mnl_attr_get_payload(g))->id;
		if (!group_members(g, &n))
			return ignore(LCP_NL_IGN_REFUSED, "nexthop group of more than 16 paths");
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
	*o = n;
	return applied();
}

/* ---- routes ---- */

struct route_want {
	uint32_t dst, gw, oif; /* dst, gw network order */
	uint8_t plen, type, protocol;
	bool multipath;
	uint32_t n_paths; /* > 1: RTA_MULTIPATH or a group's members, in mp[] */
	struct {
		uint32_t oif, gw;
		uint16_t weight;
	} mp[IP4_LB_MAX_PATHS];
};

/* ---- multipath: RTA_MULTIPATH and nexthop groups -> paths ---- */

/* RTA_MULTIPATH (rtnetlink(7): struct rtnexthop each, weight rtnh_hops + 1
 * as iproute2 shows it, RTA_GATEWAY inside) into w->mp; the first path also
 * into w->oif, w->gw. */
static bool mp_decode(const struct nlattr *mp, struct route_want *w)
{
	const uint8_t *p = mnl_attr_get_payload(mp);
	size_t len = mnl_attr_get_payload_len(mp);
	w->n_paths = 0;
	while (len >= sizeof(struct rtnexthop)) {
		const struct rtnexthop *rtnh = (const struct rtnexthop *)p;
		if (rtnh->rtnh_len < sizeof(*rtnh) || rtnh->rtnh_len > len || w->n_paths == IP4_LB_MAX_PATHS)
			return false;
		struct attrs at = { 0 };
		if (mnl_attr_parse_payload(RTNH_DATA(rtnh), rtnh->rtnh_len - sizeof(*rtnh), attr_cb, &at) < 0)
			return false;
		w->mp[w->n_paths].oif = (uint32_t)rtnh->rtnh_ifindex;
		w->mp[w->n_paths].gw = 0;
		get_u32(&at, RTA_GATEWAY, &w->mp[w->n_paths].gw);
		w->mp[w->n_paths++].weight = (uint16_t)(rtnh->rtnh_hops + 1);
		size_t step = RTNH_ALIGN(rtnh->rtnh_len);
		p += step;
		len = step < len ? len - step : 0;
	}
	if (!w->n_paths)
		return false;
	w->oif = w->mp[0].oif;
	w->gw = w->mp[0].gw;
	w->multipath = w->n_paths > 1;
	return true;
}

/* A nexthop group's members into w->mp; false when one is unknown or a
 * blackhole (a group of gateways only). */
static bool group_paths(const struct nh_obj *g, struct route_want *w)
{
	w->n_paths = 0;
	for (uint32_t i = 0; i < g->n_members; i++) {
		const struct nh_obj *o = nh_find(g->members[i].id);
		if (!o || o->blackhole || o->group)
			return false;
		w->mp[w->n_paths].oif = o->oif;
		w->mp[w->n_paths].gw = o->gw;
		w->mp[w->n_paths++].weight = (uint16_t)(g->members[i].weight + 1);
	}
	return w->n_paths > 0;
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
			.if_index = phy_of_ifindex(ctx, w->mp[i].oif),
			.gen = ctx->gen,
		};
		if (p[i].if_index == DEV_INDEX_INVALID)
			return LCP_NL_IGN_NOT_TAP;
	}
	return LCP_NL_IGN_N;
}

/* The path of a nexthop object (a group's first member). */
static enum lcp_nl_ignore nh_path(uint32_t id, struct route_want *w)
{
	const struct nh_obj *o = nh_find(id);
	if (o && o->group && o->n_members > 1) {
		w->multipath = true;
		return group_paths(o, w) ? LCP_NL_IGN_N : LCP_NL_IGN_NO_NEXTHOP;
	}
	if (o && o->group)
		o = nh_find(o->first);
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
	uint32_t nhid;
	if (get_u32(&at, RTA_NH_ID, &nhid)) {
		enum lcp_nl_ignore why = nh_path(nhid, w);
		if (why != LCP_NL_IGN_N)
			return why;
	} else if (at.tb[RTA_MULTIPATH]) {
		if (!mp_decode(at.tb[RTA_MULTIPATH], w))
			return LCP_NL_IGN_MALFORMED;
	} else {
		get_u32(&at, RTA_OIF, &w->oif);
		get_u32(&at, RTA_GATEWAY, &w->gw);
	}
	if (w->type == RTN_BLACKHOLE || w->type == RTN_UNREACHABLE || w->type == RTN_PROHIBIT)
		return LCP_NL_IGN_N;
	if (w->type != RTN_UNICAST || (!w->gw && !w->oif && !w->multipath))
		return LCP_NL_IGN_ROUTE_TYPE;
	return LCP_NL_IGN_N;
}

/* rtm_type -> the route kind of a route without next hops. */
static uint8_t route_kind(uint8_t type)
{
	return type == RTN_UNREACHABLE ? IP4_ADJ_UNREACH : type == RTN_PROHIBIT ? IP4_ADJ_PROHIBIT : IP4_ADJ_BLACKHOLE;
}

/* A multipath route (RTA_MULTIPATH or a group): one route of w's paths. */
static bool map_route_multipath(const struct lcp_nl_ctx *ctx, const struct route_want *w, const char *what)
{
	struct ip4_route_path p[IP4_LB_MAX_PATHS];
	char err[128];
	enum lcp_nl_ignore why = mp_to_paths(ctx, w, p);
	if (why != LCP_NL_IGN_N)
		return ignore(why, what);
	if (ip4_route_src_set(IP4_SRC_LINUX, w->dst, w->plen, p, w->n_paths, err, sizeof(err)))
		return ignore(LCP_NL_IGN_REFUSED, err);
	lcp_nl_stats.multipath++;
	return applied();
}

static bool map_route(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct route_want w = { 0 };
	enum lcp_nl_ignore why = route_decode(nlh, &w);
	char what[80], a[INET_ADDRSTRLEN];
	snprintf(what, sizeof(what), "route %s/%u type %u proto %u", inet_ntop(AF_INET, &w.dst, a, sizeof(a)), w.plen,
		 w.type, w.protocol);
	if (why != LCP_NL_IGN_N)
		return ignore(why, what);
	char err[128];
	if (nlh->nlmsg_type == RTM_DELROUTE) {
		int rc = ip4_route_src_del(IP4_SRC_LINUX, w.dst, w.plen, err, sizeof(err));
		return rc == 0 || rc == -ENOENT ? applied() : ignore(LCP_NL_IGN_REFUSED, err);
	}
	if (w.multipath)
		return map_route_multipath(ctx, &w, what);
	struct ip4_route_path p = { .kind = route_kind(w.type), .protocol = w.protocol, .gen = ctx->gen };
	if (w.type == RTN_UNICAST) {
		p.kind = w.gw ? IP4_ADJ_REWRITE : IP4_ADJ_GLEAN; /* no gateway: a device route */
		p.next_hop = w.gw;
		p.if_index = phy_of_ifindex(ctx, w.oif);
		if (p.if_index == DEV_INDEX_INVALID)
			return ignore(LCP_NL_IGN_NOT_TAP, what);
	}
	int rc = ip4_route_src_add(IP4_SRC_LINUX, w.dst, w.plen, &p, err, sizeof(err));
	if (rc)
		return ignore(LCP_NL_IGN_REFUSED, err);
	return applied();
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
	if (phy == DEV_INDEX_INVALID)
		return ignore(LCP_NL_IGN_NOT_TAP, "link");
	if (nlh->nlmsg_type == RTM_DELLINK)
		return ignore(LCP_NL_IGN_REFUSED, "a TAP deleted in Linux: lcp delete cleans up");
	int8_t up = (ifi->ifi_flags & IFF_UP) != 0, was = link_up[phy];
	link_up[phy] = up;
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
		return map_nexthop(nlh);
	default:
		return ignore(LCP_NL_IGN_OTHER, "message type");
	}
}

uint32_t lcp_nl_sweep(uint32_t gen)
{
	uint32_t n = ip4_route_src_sweep(IP4_SRC_LINUX, gen, LCP_NL_GEN_OWNER);
	char err[128];
	for (int i = 0; i < ADDR_MAX; i++)
		if (addrs[i].used && addrs[i].gen != gen && ((addrs[i].gen ^ gen) & LCP_NL_GEN_OWNER) == 0) {
			addrs[i].used = false;
			n += ip4_if_addr_del(addrs[i].phy, addrs[i].addr, addrs[i].plen, err, sizeof(err)) == 0;
		}
	lcp_nl_stats.swept += n;
	return n;
}
