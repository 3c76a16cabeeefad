/* Shared by the netlink mapping's files (lcp_nl_map.c: routes and nexthop
 * objects; lcp_nl_link.c: addresses, neighbours, links): the attribute
 * parser, the counting of what maps and what does not, and the TAP ->
 * port lookup. Barrier held for all of it. */
#ifndef SLUICE_NODES_LCP_LCP_NL_MAP_PRIVATE_H
#define SLUICE_NODES_LCP_LCP_NL_MAP_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include "nodes/lcp/lcp_nl.h"

#define LCP_NL_ATTR_MAX 64 /* above every RTA_, IFA_, NDA_, NHA_, IFLA_ we read */

/* A message's attributes by type (the last of a type wins). */
struct lcp_nl_attrs {
	const struct nlattr *tb[LCP_NL_ATTR_MAX];
};

/* mnl_attr_parse callback: a into the struct lcp_nl_attrs at data. */
int lcp_nl_attr_cb(const struct nlattr *a, void *data);

/* The message's fixed header (hdrlen bytes, a multiple of 4 for every
 * rtnetlink header) with its attributes in at, or NULL when it is too short
 * or an attribute runs past the end. */
const void *lcp_nl_parse(const struct nlmsghdr *nlh, size_t hdrlen, struct lcp_nl_attrs *at);

/* A u32 attribute, checked for its size: false when absent or bad. */
bool lcp_nl_get_u32(const struct lcp_nl_attrs *at, int type, uint32_t *v);

/* Each struct rtnexthop of an RTA_MULTIPATH attribute, with its own
 * attributes parsed, to fn (false from fn stops: -1). How many, or -1 when
 * one runs past the attribute, is too short, or there are more than max. */
struct rtnexthop;
int lcp_nl_rtnh_each(const struct nlattr *mp, uint32_t max,
		     bool (*fn)(const struct rtnexthop *rtnh, const struct lcp_nl_attrs *at, void *arg), void *arg);

/* Whether a route of rtm (its RTA_TABLE in at, else rtm_table) is of a
 * table sluice maps: main, or linux-cp { route-table N }. */
struct rtmsg;
bool lcp_nl_table_mapped(const struct lcp_nl_attrs *at, const struct rtmsg *rtm);

/* Whether the IPv4 RTM_NEWROUTE nlh is one lcp_nl_apply would install, as
 * far as the message tells (a route through a nexthop object counts as
 * one), with its prefix in *dst_h (host order) and *plen. Reads no state
 * the barrier guards: lcp_nl_route_prefault calls it outside the hold. */
struct nlmsghdr;
bool lcp_nl_route_would_map(const struct nlmsghdr *nlh, uint32_t *dst_h, uint8_t *plen);

/* Count (and log once per reason) a message that does not map: false. */
bool lcp_nl_ignore(enum lcp_nl_ignore why, const char *detail);

/* Count a message that mapped: true. */
bool lcp_nl_applied(void);

/* The port whose TAP is Linux's ifindex in ctx's netns, or DEV_INDEX_INVALID. */
uint32_t lcp_nl_phy_of_ifindex(const struct lcp_nl_ctx *ctx, uint32_t ifindex);

/* RTM_NEWADDR/DELADDR, RTM_NEWNEIGH/DELNEIGH, RTM_NEWLINK/DELLINK of a TAP. */
bool lcp_nl_map_addr(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh);
bool lcp_nl_map_neigh(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh);
bool lcp_nl_map_link(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh);

/* Forget the addresses Linux gave and the TAPs' link states. */
void lcp_nl_link_reset(void);

/* A nexthop object (RTM_NEWNEXTHOP): a gateway via an interface, a
 * blackhole, or a group (its members with their weights). */
#define LCP_NL_NH_MAX_MEMBERS 16 /* IP4_LB_MAX_PATHS, IP6_ROUTE_MAX_PATHS */
struct lcp_nl_nh {
	uint32_t id, oif, gw, first; /* gw (IPv4) network order; first: a group's first member */
	bool blackhole, group, used;
	uint8_t family;              /* a gateway's: AF_INET or AF_INET6 */
	uint8_t n_members;           /* a group's */
	struct in6_addr gw6;         /* an IPv6 gateway */
	struct nexthop_grp members[LCP_NL_NH_MAX_MEMBERS]; /* weight: the kernel's, minus 1 */
};

/* The nexthop object id, or NULL. */
struct lcp_nl_nh *lcp_nl_nh_find(uint32_t id);

/* The paths of a route through nexthop object id (RTA_NH_ID), for either
 * family: fn(gateway object, weight) once for the object itself (or a
 * group of one's member), or for each member of its group with the
 * member's weight + 1, as iproute2 shows it; every member is checked
 * before fn sees any. A blackhole object sets *blackhole and calls fn for
 * nothing. LCP_NL_IGN_N when done; NO_NEXTHOP when the object or a member
 * is unknown, or a member is a blackhole or a group (nesting is refused);
 * ROUTE_TYPE when fn refuses one (a gateway of the other family). */
enum lcp_nl_ignore lcp_nl_nh_walk(uint32_t id, bool *blackhole,
				  bool (*fn)(const struct lcp_nl_nh *o, uint16_t weight, void *arg), void *arg);

/* The family byte of a message whose fixed header (hdrlen bytes) starts
 * with it (rtmsg, ifaddrmsg, ndmsg), or AF_UNSPEC when it is too short. */
static inline uint8_t lcp_nl_family(const struct nlmsghdr *nlh, size_t hdrlen)
{
	return nlh->nlmsg_len >= NLMSG_HDRLEN + hdrlen ? *(const uint8_t *)mnl_nlmsg_get_payload(nlh) : 0;
}

/* Whether a route of this rtm_type maps without next hops, in both
 * families: blackhole (dropped), unreachable and prohibit (ICMP / ICMPv6
 * errors); each family picks its own adjacency kind. */
static inline bool lcp_nl_type_rejects(uint8_t type)
{
	return type == RTN_BLACKHOLE || type == RTN_UNREACHABLE || type == RTN_PROHIBIT;
}

/* ---- IPv6 (lcp_nl_route6.c); barrier held ---- */

/* A 16-byte address attribute: false when absent or of another size. */
bool lcp_nl6_gateway(const struct lcp_nl_attrs *at, int type, struct in6_addr *a);

/* AF_INET6 RTM_NEWROUTE/DELROUTE, RTM_NEWADDR/DELADDR, RTM_NEWNEIGH/DELNEIGH. */
bool lcp_nl6_map_route(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh);
bool lcp_nl6_map_addr(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh);
bool lcp_nl6_map_neigh(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh);

/* Nexthop object id changed or went: the IPv6 routes through it (or a
 * group holding it) resolved again, or removed. */
void lcp_nl6_nh_changed(const struct lcp_nl_ctx *ctx, uint32_t id);

/* The sweep after gen's dump: IPv6 addresses of gen's listener not shown
 * again (the routes went in steps before: lcp_nl6_sweep_step). How many. */
uint32_t lcp_nl6_sweep(uint32_t gen);

/* One step of the sweep of gen's IPv6 routes (ip6_route_src_sweep_step):
 * true when done; *swept counts what went. */
bool lcp_nl6_sweep_step(uint32_t gen, uint32_t *bucket, uint32_t *mask, uint64_t deadline_ns, uint32_t *swept);

/* Forget the IPv6 addresses Linux gave (tests, a new listener). */
void lcp_nl6_reset(void);

#endif
