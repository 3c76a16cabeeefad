/* linux-cp's netlink mapping (nodes/lcp/lcp_nl_map.c): rtnetlink messages
 * built with libmnl, as the kernel sends them, fed to lcp_nl_apply with no
 * socket and no thread; the exact FIB entries, addresses, neighbours and
 * counters after each. testdrv "a" is the port, "t" its TAP, which Linux
 * knows as ifindex 7; ifindex 99 is an interface that is no TAP of ours.
 * Bad and garbage messages are refused and counted, and change nothing. */
#include <arpa/inet.h>
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <net/if.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "cli/cli.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/fib_defer.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"
#include "nodes/lcp/lcp.h"
#include "nodes/ip4/ip4_fib_private.h"
#include "nodes/ip4/ip4_route_private.h"
#include "nodes/lcp/lcp_nl.h"
#include "nodes/lcp/lcp_nl_route.h"
#include "tests/check_run.h"
#include "tests/graph_fixture.h"
#include "tests/lcp/lcp_nl_fixture.h"

#define NET(a, b, c, d) (((uint32_t)(a) << 24) | ((b) << 16) | ((c) << 8) | (d)) /* host order */


static struct nlmsghdr *route(uint16_t type, uint32_t dst, uint8_t plen, uint8_t rtype, uint8_t proto)
{
	struct nlmsghdr *nlh = msg(type, sizeof(struct rtmsg));
	struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = plen;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_type = rtype;
	rtm->rtm_protocol = proto;
	if (plen)
		mnl_attr_put_u32(nlh, RTA_DST, htonl(dst));
	return nlh;
}

static struct nlmsghdr *route_via(uint16_t type, uint32_t dst, uint8_t plen, uint32_t gw, uint32_t oif)
{
	struct nlmsghdr *nlh = route(type, dst, plen, RTN_UNICAST, RTPROT_STATIC);
	mnl_attr_put_u32(nlh, RTA_GATEWAY, htonl(gw));
	mnl_attr_put_u32(nlh, RTA_OIF, oif);
	return nlh;
}

static struct nlmsghdr *addr(uint16_t type, uint32_t a, uint8_t plen, uint32_t ifindex)
{
	struct nlmsghdr *nlh = msg(type, sizeof(struct ifaddrmsg));
	struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = plen;
	ifa->ifa_index = ifindex;
	mnl_attr_put_u32(nlh, IFA_LOCAL, htonl(a));
	mnl_attr_put_u32(nlh, IFA_ADDRESS, htonl(a));
	return nlh;
}

static struct nlmsghdr *neigh(uint16_t type, uint32_t ip, uint16_t state)
{
	static const uint8_t mac[6] = { 0x02, 0xbb, 0, 0, 0, 5 };
	struct nlmsghdr *nlh = msg(type, sizeof(struct ndmsg));
	struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	nd->ndm_family = AF_INET;
	nd->ndm_ifindex = TAP_IFINDEX;
	nd->ndm_state = state;
	mnl_attr_put_u32(nlh, NDA_DST, htonl(ip));
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	return nlh;
}

static struct nlmsghdr *link_msg(bool up)
{
	struct nlmsghdr *nlh = msg(RTM_NEWLINK, sizeof(struct ifinfomsg));
	struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	ifi->ifi_index = TAP_IFINDEX;
	ifi->ifi_flags = up ? IFF_UP : 0;
	return nlh;
}

/* An RTM_NEWLINK for the TAP, up, with IFLA_MTU and IFLA_ADDRESS. */
static struct nlmsghdr *link_mtu_mac(uint32_t mtu, const uint8_t mac[6])
{
	struct nlmsghdr *nlh = link_msg(true);
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	mnl_attr_put(nlh, IFLA_ADDRESS, 6, mac);
	return nlh;
}


/* The FIB's adjacency for prefix/plen (host order), or NULL. */
static const struct ip4_adj *fib_adj(uint32_t prefix, uint8_t plen)
{
	uint32_t r;
	if (!ip4_fib_main || ip4_fib_get(ip4_fib_main, prefix, plen, &r))
		return NULL;
	return ip4_adj_get(ip4_fib_main, r);
}

static void assert_via(uint32_t prefix, uint8_t plen, uint32_t nh)
{
	const struct ip4_adj *a = fib_adj(prefix, plen);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->kind, IP4_ADJ_REWRITE);
	ck_assert_uint_eq(a->next_hop, nh);
	ck_assert_uint_eq(a->if_index, dev_a->index);
}

static void setup(void)
{
	lcp_nl_fixture_up();
}

static void teardown(void)
{
	fixture_graph_down(g);
	g = NULL;
	ip4_main_free();
	fixture_buffers_down();
}

START_TEST(address_and_route)
{
	ck_assert(apply(addr(RTM_NEWADDR, NET(10, 1, 0, 1), 24, TAP_IFINDEX)));
	ck_assert(ip4_if_is_local(dev_a->index, htonl(NET(10, 1, 0, 1))));
	ck_assert_uint_eq(fib_adj(NET(10, 1, 0, 0), 24)->kind, IP4_ADJ_GLEAN);
	/* the kernel's connected route for it: sluice's own already */
	ck_assert(!apply(route(RTM_NEWROUTE, NET(10, 1, 0, 0), 24, RTN_UNICAST, RTPROT_KERNEL)));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_KERNEL], 1);
	ck_assert_uint_eq(fib_adj(NET(10, 1, 0, 0), 24)->kind, IP4_ADJ_GLEAN);

	ck_assert(apply(route_via(RTM_NEWROUTE, NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX)));
	ck_assert(apply(route_via(RTM_NEWROUTE, NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX))); /* again */
	assert_via(NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2));
	struct ip4_route_path p;
	ck_assert_int_eq(ip4_route_src_best(NET(10, 9, 0, 0), 16, &p), IP4_SRC_LINUX);
	ck_assert_uint_eq(p.protocol, RTPROT_STATIC);
	ck_assert_str_eq(ip4_route_protocol_name(p.protocol), "static");
	ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), 1);

	ck_assert(apply(route(RTM_DELROUTE, NET(10, 9, 0, 0), 16, RTN_UNICAST, RTPROT_STATIC)));
	ck_assert_ptr_null(fib_adj(NET(10, 9, 0, 0), 16));
	ck_assert(apply(route(RTM_DELROUTE, NET(10, 9, 0, 0), 16, RTN_UNICAST, RTPROT_STATIC))); /* idempotent */
	ck_assert(apply(addr(RTM_DELADDR, NET(10, 1, 0, 1), 24, TAP_IFINDEX)));
	ck_assert(!ip4_if_is_local(dev_a->index, htonl(NET(10, 1, 0, 1))));
	ck_assert_ptr_null(fib_adj(NET(10, 1, 0, 0), 24));
	ck_assert_uint_eq(lcp_nl_stats.messages, 7);
	ck_assert_uint_eq(lcp_nl_stats.applied, 6);
}
END_TEST

/* What the FIB cannot or must not take: counted per reason, not
 * installed; the route kinds and device routes it can. */
START_TEST(unmapped_kinds)
{
	ck_assert(!apply(route_via(RTM_NEWROUTE, NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2), OTHER_IFINDEX)));
	struct nlmsghdr *other = route(RTM_NEWROUTE, 0, 0, RTN_UNICAST, RTPROT_STATIC);
	((struct rtmsg *)mnl_nlmsg_get_payload(other))->rtm_family = AF_BRIDGE; /* a family sluice does not route */
	ck_assert(!apply(other));
	struct nlmsghdr *t100 = route_via(RTM_NEWROUTE, NET(10, 10, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX);
	((struct rtmsg *)mnl_nlmsg_get_payload(t100))->rtm_table = 100;
	ck_assert(!apply(t100));
	lcp_nl_route_table = 100; /* linux-cp { route-table 100 } */
	ck_assert(apply(t100));
	assert_via(NET(10, 10, 0, 0), 16, NET(10, 1, 0, 2));
	/* the route kinds and a device route map; throw does not */
	ck_assert(apply(route(RTM_NEWROUTE, NET(10, 67, 0, 0), 16, RTN_UNREACHABLE, RTPROT_BOOT)));
	ck_assert(apply(route(RTM_NEWROUTE, NET(10, 68, 0, 0), 16, RTN_PROHIBIT, RTPROT_BOOT)));
	ck_assert(!apply(route(RTM_NEWROUTE, NET(10, 70, 0, 0), 16, RTN_THROW, RTPROT_BOOT)));
	struct nlmsghdr *dev_route = route(RTM_NEWROUTE, NET(10, 69, 0, 0), 16, RTN_UNICAST, RTPROT_BOOT);
	mnl_attr_put_u32(dev_route, RTA_OIF, TAP_IFINDEX); /* no gateway: a device route */
	ck_assert(apply(dev_route));
	ck_assert(apply(route(RTM_NEWROUTE, NET(10, 66, 0, 0), 16, RTN_BLACKHOLE, RTPROT_BOOT)));
	const struct ip4_adj *bh = fib_adj(NET(10, 66, 0, 0), 16);
	ck_assert_ptr_nonnull(bh);
	ck_assert_uint_eq(bh->kind, IP4_ADJ_BLACKHOLE);
	ck_assert_uint_eq(fib_adj(NET(10, 67, 0, 0), 16)->kind, IP4_ADJ_UNREACH);
	ck_assert_uint_eq(fib_adj(NET(10, 68, 0, 0), 16)->kind, IP4_ADJ_PROHIBIT);
	const struct ip4_adj *dr = fib_adj(NET(10, 69, 0, 0), 16);
	ck_assert_uint_eq(dr->kind, IP4_ADJ_GLEAN);
	ck_assert_uint_eq(dr->if_index, dev_a->index);
	ck_assert_ptr_null(fib_adj(NET(10, 9, 0, 0), 16));
	ck_assert_ptr_null(fib_adj(NET(10, 70, 0, 0), 16));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_NOT_TAP], 1);
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_FAMILY], 1);
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_TABLE], 1);
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_ROUTE_TYPE], 1);
	ck_assert_uint_eq(lcp_nl_stats.applied, 5);
	ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), 5);
	/* a device route is Linux's, not an address's: its delete applies */
	ck_assert(apply(route(RTM_DELROUTE, NET(10, 69, 0, 0), 16, RTN_UNICAST, RTPROT_BOOT)));
	ck_assert_ptr_null(fib_adj(NET(10, 69, 0, 0), 16));
}
END_TEST

/* The 2 MiB regions of tbl24 lcp_nl_route_prefault has faulted in, a bit
 * each (32 for the 64 MiB): region r holds the /5 whose first bits are r. */
static uint64_t prefaulted(void)
{
	return atomic_load(&ip4_fib_main->tbl24_populated[0]);
}

static void set_table(struct nlmsghdr *nlh, uint8_t table)
{
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_table = table;
}

/* Prefault (outside the barrier) only what the hold will install: a
 * default route of another table, Linux's own, of a kind sluice ignores,
 * or a delete commits nothing of tbl24; a mapped /16 its one region; a
 * default route of the configured table all of it. */
START_TEST(prefault_only_mapped)
{
	ck_assert(apply(addr(RTM_NEWADDR, NET(10, 1, 0, 1), 24, TAP_IFINDEX))); /* makes the FIB */
	ck_assert_ptr_nonnull(ip4_fib_main);
	ck_assert_uint_eq(prefaulted(), 0);
	struct nlmsghdr *nlh = route_via(RTM_NEWROUTE, 0, 0, NET(10, 1, 0, 2), TAP_IFINDEX);
	set_table(nlh, 100); /* ip rule ... lookup 100 */
	lcp_nl_route_prefault(nlh);
	ck_assert_uint_eq(prefaulted(), 0);
	nlh = route_via(RTM_NEWROUTE, 0, 0, NET(10, 1, 0, 2), TAP_IFINDEX);
	set_table(nlh, RT_TABLE_COMPAT);
	mnl_attr_put_u32(nlh, RTA_TABLE, 1000); /* a VRF's table: above 255, in RTA_TABLE */
	lcp_nl_route_prefault(nlh);
	ck_assert_uint_eq(prefaulted(), 0);
	nlh = route(RTM_NEWROUTE, 0, 0, RTN_UNICAST, RTPROT_KERNEL);
	mnl_attr_put_u32(nlh, RTA_OIF, TAP_IFINDEX);
	lcp_nl_route_prefault(nlh);
	lcp_nl_route_prefault(route(RTM_NEWROUTE, 0, 0, RTN_THROW, RTPROT_BOOT));
	lcp_nl_route_prefault(route(RTM_NEWROUTE, 0, 0, RTN_UNICAST, RTPROT_STATIC)); /* no next hop */
	lcp_nl_route_prefault(route(RTM_DELROUTE, 0, 0, RTN_BLACKHOLE, RTPROT_STATIC));
	ck_assert_uint_eq(prefaulted(), 0);

	lcp_nl_route_prefault(route_via(RTM_NEWROUTE, NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX));
	ck_assert_uint_eq(prefaulted(), 1ull << (NET(10, 9, 0, 0) >> 27));
	lcp_nl_route_prefault(route(RTM_NEWROUTE, NET(192, 0, 2, 0), 24, RTN_UNREACHABLE, RTPROT_BOOT));
	ck_assert_uint_eq(prefaulted(), 1ull << (NET(10, 9, 0, 0) >> 27) | 1ull << (NET(192, 0, 2, 0) >> 27));
	lcp_nl_route_table = 100; /* linux-cp { route-table 100 } */
	nlh = route_via(RTM_NEWROUTE, 0, 0, NET(10, 1, 0, 2), TAP_IFINDEX);
	set_table(nlh, 100);
	lcp_nl_route_prefault(nlh);
	ck_assert_uint_eq(prefaulted(), UINT32_MAX);
	ck_assert_uint_eq(lcp_nl_stats.messages, 1); /* prefaulting applies and counts nothing */
	ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), 0);
}
END_TEST

/* Garbage: refused as malformed (or an unknown type), nothing changes. */
START_TEST(garbage_refused)
{
	struct nlmsghdr *nlh = route_via(RTM_NEWROUTE, NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX);
	nlh->nlmsg_len = 10; /* shorter than its own header */
	ck_assert(!apply(nlh));
	nlh = route_via(RTM_NEWROUTE, NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX);
	struct nlattr *last = (struct nlattr *)((char *)nlh + nlh->nlmsg_len - 8);
	last->nla_len = 200; /* runs past the message */
	ck_assert(!apply(nlh));
	nlh = route(RTM_NEWROUTE, 0, 0, RTN_UNICAST, RTPROT_STATIC);
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_dst_len = 16;
	mnl_attr_put_u16(nlh, RTA_DST, 0x0a09); /* two bytes for an IPv4 address */
	ck_assert(!apply(nlh));
	nlh = route_via(RTM_NEWROUTE, NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX);
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_dst_len = 40;
	ck_assert(!apply(nlh));
	nlh = msg(RTM_NEWADDR, sizeof(struct ifaddrmsg)); /* no address */
	((struct ifaddrmsg *)mnl_nlmsg_get_payload(nlh))->ifa_family = AF_INET;
	ck_assert(!apply(nlh));
	nlh = msg(RTM_NEWNEXTHOP, sizeof(struct nhmsg)); /* no id */
	ck_assert(!apply(nlh));
	ck_assert(!apply(msg(0x99, 4))); /* a type nobody maps */
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_MALFORMED], 6);
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_OTHER], 1);
	ck_assert_uint_eq(lcp_nl_stats.applied, 0);
	ck_assert_ptr_null(fib_adj(NET(10, 9, 0, 0), 16));
	ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), 0);
	/* and the listener still maps the next good one */
	ck_assert(apply(route_via(RTM_NEWROUTE, NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX)));
	assert_via(NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2));
}
END_TEST

static void put_path(struct nlmsghdr *nlh, uint32_t gw, uint32_t oif, uint8_t hops)
{
	struct rtnexthop *rtnh = mnl_nlmsg_get_payload_tail(nlh);
	memset(rtnh, 0, sizeof(*rtnh));
	nlh->nlmsg_len += RTNH_ALIGN(sizeof(*rtnh));
	rtnh->rtnh_ifindex = (int)oif;
	rtnh->rtnh_hops = hops; /* weight - 1 */
	mnl_attr_put_u32(nlh, RTA_GATEWAY, htonl(gw));
	rtnh->rtnh_len = (unsigned short)((char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)rtnh);
}

/* A nexthop object: a gateway via the TAP, or (n > 0) a group of members
 * with weights (the kernel's: weight - 1 in the message). */
static struct nlmsghdr *nexthop(uint32_t id, uint32_t gw, const uint32_t *group, const uint8_t *weights, int n)
{
	struct nlmsghdr *nlh = msg(RTM_NEWNEXTHOP, sizeof(struct nhmsg));
	((struct nhmsg *)mnl_nlmsg_get_payload(nlh))->nh_family = AF_INET;
	mnl_attr_put_u32(nlh, NHA_ID, id);
	if (!n) {
		mnl_attr_put_u32(nlh, NHA_OIF, TAP_IFINDEX);
		mnl_attr_put_u32(nlh, NHA_GATEWAY, htonl(gw));
		return nlh;
	}
	struct nexthop_grp grp[4] = { 0 };
	for (int i = 0; i < n; i++) {
		grp[i].id = group[i];
		grp[i].weight = (uint8_t)(weights[i] - 1);
	}
	mnl_attr_put(nlh, NHA_GROUP, (size_t)n * sizeof(grp[0]), grp);
	return nlh;
}

/* The route's paths in the FIB: (next hop, weight) of its load balance. */
static void assert_paths(uint32_t prefix, uint8_t plen, uint32_t nh0, uint32_t w0, uint32_t nh1, uint32_t w1)
{
	uint32_t r;
	struct ip4_lb_path lp[4];
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, prefix, plen, &r), 0);
	ck_assert_uint_eq(ip4_adj_get(ip4_fib_main, r)->kind, IP4_ADJ_LB);
	ck_assert_uint_eq(ip4_lb_paths(ip4_fib_main, r, lp, 4), 2);
	ck_assert_uint_eq(ip4_adj_get(ip4_fib_main, lp[0].adj_index)->next_hop, nh0);
	ck_assert_uint_eq(lp[0].weight, w0);
	ck_assert_uint_eq(ip4_adj_get(ip4_fib_main, lp[1].adj_index)->next_hop, nh1);
	ck_assert_uint_eq(lp[1].weight, w1);
	ck_assert_uint_eq(ip4_adj_get(ip4_fib_main, lp[1].adj_index)->if_index, dev_a->index);
}

/* RTA_MULTIPATH and nexthop groups: one multipath route, weights kept. */
START_TEST(multipath_and_nexthops)
{
	struct nlmsghdr *nlh = route(RTM_NEWROUTE, NET(10, 20, 0, 0), 16, RTN_UNICAST, RTPROT_BGP);
	struct nlattr *mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	put_path(nlh, NET(10, 1, 0, 2), TAP_IFINDEX, 0);
	put_path(nlh, NET(10, 1, 0, 3), TAP_IFINDEX, 2);
	mnl_attr_nest_end(nlh, mp);
	ck_assert(apply(nlh));
	assert_paths(NET(10, 20, 0, 0), 16, NET(10, 1, 0, 2), 1, NET(10, 1, 0, 3), 3);
	ck_assert_uint_eq(lcp_nl_stats.multipath, 1);
	struct ip4_route_path p[4];
	ck_assert_uint_eq(ip4_route_src_paths(NET(10, 20, 0, 0), 16, p, 4), 2);
	ck_assert_uint_eq(p[1].protocol, RTPROT_BGP);
	/* a path via no TAP of ours: the whole route is refused */
	nlh = route(RTM_NEWROUTE, NET(10, 24, 0, 0), 16, RTN_UNICAST, RTPROT_BGP);
	mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	put_path(nlh, NET(10, 1, 0, 2), TAP_IFINDEX, 0);
	put_path(nlh, NET(10, 1, 0, 3), OTHER_IFINDEX, 0);
	mnl_attr_nest_end(nlh, mp);
	ck_assert(!apply(nlh));
	ck_assert_ptr_null(fib_adj(NET(10, 24, 0, 0), 16));

	ck_assert(apply(nexthop(5, NET(10, 1, 0, 3), NULL, NULL, 0)));
	ck_assert(apply(nexthop(7, NET(10, 1, 0, 4), NULL, NULL, 0)));
	ck_assert(!lcp_nl_redump_wanted); /* a new one changes no route */
	const uint32_t members[] = { 5, 7 }, lone[] = { 5 };
	ck_assert(apply(nexthop(6, 0, members, (const uint8_t[]){ 2, 1 }, 2)));
	ck_assert(apply(nexthop(8, 0, lone, (const uint8_t[]){ 1 }, 1)));
	nlh = route(RTM_NEWROUTE, NET(10, 21, 0, 0), 16, RTN_UNICAST, RTPROT_BGP);
	mnl_attr_put_u32(nlh, RTA_NH_ID, 5);
	ck_assert(apply(nlh));
	assert_via(NET(10, 21, 0, 0), 16, NET(10, 1, 0, 3));
	nlh = route(RTM_NEWROUTE, NET(10, 22, 0, 0), 16, RTN_UNICAST, RTPROT_BGP);
	mnl_attr_put_u32(nlh, RTA_NH_ID, 6);
	ck_assert(apply(nlh));
	assert_paths(NET(10, 22, 0, 0), 16, NET(10, 1, 0, 3), 2, NET(10, 1, 0, 4), 1);
	ck_assert_uint_eq(lcp_nl_stats.multipath, 2);
	nlh = route(RTM_NEWROUTE, NET(10, 25, 0, 0), 16, RTN_UNICAST, RTPROT_BGP);
	mnl_attr_put_u32(nlh, RTA_NH_ID, 8); /* a group of one: its member */
	ck_assert(apply(nlh));
	assert_via(NET(10, 25, 0, 0), 16, NET(10, 1, 0, 3));
	nlh = route(RTM_NEWROUTE, NET(10, 23, 0, 0), 16, RTN_UNICAST, RTPROT_BGP);
	mnl_attr_put_u32(nlh, RTA_NH_ID, 9); /* never announced */
	ck_assert(!apply(nlh));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_NO_NEXTHOP], 1);
	ck_assert_ptr_null(fib_adj(NET(10, 23, 0, 0), 16));
	/* a known one replaced: its routes and its groups' follow, no re-dump */
	ck_assert(apply(nexthop(5, NET(10, 1, 0, 5), NULL, NULL, 0)));
	ck_assert(!lcp_nl_redump_wanted);
	assert_via(NET(10, 21, 0, 0), 16, NET(10, 1, 0, 5));
	assert_paths(NET(10, 22, 0, 0), 16, NET(10, 1, 0, 5), 2, NET(10, 1, 0, 4), 1);
	assert_via(NET(10, 25, 0, 0), 16, NET(10, 1, 0, 5));
	/* the multipath route goes whole */
	ck_assert(apply(route(RTM_DELROUTE, NET(10, 20, 0, 0), 16, RTN_UNICAST, RTPROT_BGP)));
	ck_assert_ptr_null(fib_adj(NET(10, 20, 0, 0), 16));
}
END_TEST

static struct nlmsghdr *route_nh(uint32_t dst, uint8_t plen, uint32_t nhid)
{
	struct nlmsghdr *nlh = route(RTM_NEWROUTE, dst, plen, RTN_UNICAST, RTPROT_BGP);
	mnl_attr_put_u32(nlh, RTA_NH_ID, nhid);
	return nlh;
}

/* The nhid index: 300 routes through object 40, 2 through 41. Replacing
 * 40 moves exactly its 300 (counted), deleting 41 removes its 2 (the
 * kernel removes them without route messages), a route moved from 40 to
 * 41 follows 41 and no longer 40. */
START_TEST(nexthop_index)
{
	ck_assert(apply(nexthop(40, NET(10, 1, 0, 2), NULL, NULL, 0)));
	ck_assert(apply(nexthop(41, NET(10, 1, 0, 3), NULL, NULL, 0)));
	for (uint32_t i = 0; i < 300; i++)
		ck_assert(apply(route_nh(NET(10, 100, i >> 8, i & 0xff), 32, 40)));
	ck_assert(apply(route_nh(NET(10, 101, 0, 0), 16, 41)));
	ck_assert(apply(route_nh(NET(10, 102, 0, 0), 16, 41)));
	ck_assert(apply(route_nh(NET(10, 100, 0, 7), 32, 41))); /* moves from 40 to 41 */
	ck_assert_uint_eq(lcp_nl_stats.routes, 302);
	ck_assert(apply(nexthop(40, NET(10, 1, 0, 9), NULL, NULL, 0)));
	ck_assert_uint_eq(lcp_nl_stats.nh_routes, 299);
	assert_via(NET(10, 100, 1, 43), 32, NET(10, 1, 0, 9));
	assert_via(NET(10, 100, 0, 7), 32, NET(10, 1, 0, 3));
	assert_via(NET(10, 101, 0, 0), 16, NET(10, 1, 0, 3));
	struct nlmsghdr *del = nexthop(41, 0, NULL, NULL, 0);
	del->nlmsg_type = RTM_DELNEXTHOP;
	ck_assert(apply(del));
	ck_assert_ptr_null(fib_adj(NET(10, 101, 0, 0), 16));
	ck_assert_ptr_null(fib_adj(NET(10, 102, 0, 0), 16));
	ck_assert_ptr_null(fib_adj(NET(10, 100, 0, 7), 32));
	ck_assert_uint_eq(lcp_nl_stats.routes, 299);
	ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), 299);
	ck_assert(!lcp_nl_redump_wanted);
	/* deleted in Linux one by one: the index forgets them */
	for (uint32_t i = 0; i < 300; i++)
		ck_assert(apply(route(RTM_DELROUTE, NET(10, 100, i >> 8, i & 0xff), 32, RTN_UNICAST, RTPROT_BGP)));
	ck_assert(apply(nexthop(40, NET(10, 1, 0, 2), NULL, NULL, 0)));
	ck_assert_uint_eq(lcp_nl_stats.nh_routes, 302); /* 299 moved, 3 removed; none through 40 now */
	ck_assert_uint_eq(lcp_nl_stats.routes, 0);
}
END_TEST

/* Address families and kinds sluice does not map: counted, logged once,
 * nothing installed, and the next good message still maps. */
START_TEST(unsupported_families)
{
	struct nlmsghdr *mpls = route(RTM_NEWROUTE, 0, 0, RTN_UNICAST, RTPROT_STATIC);
	((struct rtmsg *)mnl_nlmsg_get_payload(mpls))->rtm_family = AF_MPLS;
	mnl_attr_put_u32(mpls, RTA_DST, htonl(100 << 12)); /* label 100 */
	ck_assert(!apply(mpls));
	struct nlmsghdr *v6 = route(RTM_NEWROUTE, 0, 0, RTN_UNICAST, RTPROT_STATIC);
	struct rtmsg *rtm = mnl_nlmsg_get_payload(v6);
	rtm->rtm_family = AF_BRIDGE; /* (IPv6 maps now: tests/lcp/test_lcp_nl6.c) */
	rtm->rtm_dst_len = 64;
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	mnl_attr_put(v6, RTA_DST, sizeof(a6), a6);
	ck_assert(!apply(v6));
	rtm->rtm_dst_len = 200; /* and garbage in it */
	ck_assert(!apply(v6));
	struct nlmsghdr *na = addr(RTM_NEWADDR, NET(10, 1, 0, 1), 24, TAP_IFINDEX);
	((struct ifaddrmsg *)mnl_nlmsg_get_payload(na))->ifa_family = AF_MPLS;
	ck_assert(!apply(na));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_FAMILY], 4);
	ck_assert_uint_eq(lcp_nl_stats.applied, 0);
	ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), 0);
	ck_assert(apply(route_via(RTM_NEWROUTE, NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX)));
	assert_via(NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2));
}
END_TEST

/* The sweep in steps: a deadline already past still makes progress (64
 * records a step at least), and the steps together sweep exactly what the
 * whole sweep would. */
START_TEST(sweep_in_steps)
{
	const struct lcp_nl_ctx gen2 = { .netns = "", .gen = 2 };
	for (uint32_t i = 0; i < 1000; i++)
		ck_assert(apply(route_via(RTM_NEWROUTE, NET(10, 40 + (i >> 8), i & 0xff, 0), 24, NET(10, 1, 0, 2),
					  TAP_IFINDEX)));
	for (uint32_t i = 0; i < 1000; i += 3) /* the new dump shows every third */
		ck_assert(lcp_nl_apply(&gen2, route_via(RTM_NEWROUTE, NET(10, 40 + (i >> 8), i & 0xff, 0), 24,
						       NET(10, 1, 0, 2), TAP_IFINDEX)));
	struct lcp_nl_sweep cursor = { 0 };
	uint32_t steps = 0;
	while (!lcp_nl_sweep_step(2, &cursor, 0))
		steps++;
	ck_assert_uint_gt(steps, 5);
	ck_assert_uint_eq(lcp_nl_stats.swept, 666);
	ck_assert_uint_eq(lcp_nl_stats.routes, 334);
	ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), 334);
	assert_via(NET(10, 40, 3, 0), 24, NET(10, 1, 0, 2));
	ck_assert_ptr_null(fib_adj(NET(10, 40, 4, 0), 24));
}
END_TEST

/* The hold bound, structurally: no one message costs in proportion to the
 * tables. 100,000 routes, as bench/lcp loads them, then their deletes:
 * the per-source store's and the route book's incremental rehashes move at
 * most a few buckets' chains per message (16 buckets, REHASH_STEP, at one
 * entry per bucket on average), although both double several times on the
 * way up; and every route is there at the end. (The FIB's own store is
 * bounded the same way: tests/ip4's fib_rules test.) */
#define SCALE_ROUTES 100000u
#define MOVES_PER_MESSAGE_MAX 96u

static uint32_t scale_prefix(uint32_t i)
{
	return NET(20, 0, 0, 0) + i * 4; /* /30s, distinct */
}

START_TEST(growth_bounded_per_message)
{
	uint64_t src0 = ip4_route_src_rehashed(), book0 = lcp_nl_route_rehashed();
	uint64_t worst_src = 0, worst_book = 0;
	for (uint32_t i = 0; i < SCALE_ROUTES; i++) {
		uint64_t s = ip4_route_src_rehashed(), b = lcp_nl_route_rehashed();
		ck_assert(apply(route_via(RTM_NEWROUTE, scale_prefix(i), 30, NET(10, 1, 0, 2), TAP_IFINDEX)));
		worst_src = MAX(worst_src, ip4_route_src_rehashed() - s);
		worst_book = MAX(worst_book, lcp_nl_route_rehashed() - b);
	}
	/* The stores did grow (from 256 and 1,024 buckets to 131,072), so the
	 * bound below is about rehashing, not its absence. */
	ck_assert_uint_gt(ip4_route_src_rehashed() - src0, SCALE_ROUTES);
	ck_assert_uint_gt(lcp_nl_route_rehashed() - book0, SCALE_ROUTES);
	ck_assert_uint_le(worst_src, MOVES_PER_MESSAGE_MAX);
	ck_assert_uint_le(worst_book, MOVES_PER_MESSAGE_MAX);
	ck_assert_uint_eq(lcp_nl_stats.routes, SCALE_ROUTES);
	ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), SCALE_ROUTES);
	for (uint32_t i = 0; i < SCALE_ROUTES; i += 997)
		assert_via(scale_prefix(i), 30, NET(10, 1, 0, 2));
	for (uint32_t i = 0; i < SCALE_ROUTES; i++) {
		uint64_t s = ip4_route_src_rehashed(), b = lcp_nl_route_rehashed();
		ck_assert(apply(route(RTM_DELROUTE, scale_prefix(i), 30, RTN_UNICAST, RTPROT_STATIC)));
		ck_assert_uint_le(ip4_route_src_rehashed() - s, MOVES_PER_MESSAGE_MAX);
		ck_assert_uint_le(lcp_nl_route_rehashed() - b, MOVES_PER_MESSAGE_MAX);
	}
	ck_assert_uint_eq(lcp_nl_stats.routes, 0);
	ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), 0);
	ck_assert_ptr_null(fib_adj(scale_prefix(5), 30));
}
END_TEST

/* A batch as the listener applies it (lcp_nl_apply_batch): 100,000 route
 * changes in barrier holds of at most the budget's messages each. With the
 * CPU budget out of the way the holds are exactly ceil(100,000 / 1,024),
 * each a barrier hold of the graph; with a CPU budget far below 1,024
 * messages' worth, more holds, none of more messages. Every route applied. */
static uint8_t *batch_of(uint16_t type, uint32_t n, size_t *len)
{
	size_t cap = (size_t)n * 64, off = 0;
	uint8_t *p = malloc(cap);
	ck_assert_ptr_nonnull(p);
	for (uint32_t i = 0; i < n; i++) {
		const struct nlmsghdr *nlh = type == RTM_NEWROUTE
						     ? route_via(type, scale_prefix(i), 30, NET(10, 1, 0, 2), TAP_IFINDEX)
						     : route(type, scale_prefix(i), 30, RTN_UNICAST, RTPROT_STATIC);
		ck_assert_uint_le(off + NLMSG_ALIGN(nlh->nlmsg_len), cap);
		memcpy(p + off, nlh, nlh->nlmsg_len);
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	*len = off;
	return p;
}

START_TEST(holds_within_budget)
{
	size_t len;
	uint8_t *adds = batch_of(RTM_NEWROUTE, SCALE_ROUTES, &len);
	struct graph_barrier_stats b0, b1;
	graph_barrier_stats(g, &b0);
	lcp_nl_hold_cpu_ns = UINT64_MAX; /* entries alone */
	ck_assert(!lcp_nl_apply_batch(&ctx1, adds, len));
	graph_barrier_stats(g, &b1);
	uint32_t holds = (SCALE_ROUTES + LCP_NL_HOLD_ENTRIES - 1) / LCP_NL_HOLD_ENTRIES;
	ck_assert_uint_eq(lcp_nl_stats.batches, holds);
	ck_assert_uint_eq(b1.holds - b0.holds, holds); /* each one barrier hold */
	ck_assert_uint_eq(lcp_nl_stats.max_batch, LCP_NL_HOLD_ENTRIES);
	ck_assert_uint_eq(lcp_nl_stats.messages, SCALE_ROUTES);
	ck_assert_uint_eq(lcp_nl_stats.routes, SCALE_ROUTES);
	ck_assert_uint_eq(lcp_nl_stats.holds_raised + lcp_nl_stats.holds_unraised, holds);
	uint64_t hist = 0;
	for (int i = 0; i < LCP_NL_HOLD_HIST_N; i++)
		hist += lcp_nl_stats.hold_hist[i];
	ck_assert_uint_eq(hist, holds);
	assert_via(scale_prefix(SCALE_ROUTES - 1), 30, NET(10, 1, 0, 2));
	free(adds);

	uint8_t *dels = batch_of(RTM_DELROUTE, SCALE_ROUTES, &len);
	lcp_nl_hold_cpu_ns = 10000; /* 10 us: a few dozen deletes */
	lcp_nl_stats.batches = lcp_nl_stats.max_batch = 0;
	ck_assert(!lcp_nl_apply_batch(&ctx1, dels, len));
	lcp_nl_hold_cpu_ns = LCP_NL_HOLD_CPU_NS;
	ck_assert_uint_gt(lcp_nl_stats.batches, holds);
	ck_assert_uint_le(lcp_nl_stats.max_batch, LCP_NL_HOLD_ENTRIES);
	ck_assert_uint_eq(lcp_nl_stats.routes, 0);
	ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), 0);
	ck_assert_uint_gt(lcp_nl_stats.frees_deferred, 0); /* the store's entries, after each release */
	free(dels);
}
END_TEST

/* A delete's memory is freed after the hold is released, not in it: the
 * per-source store's entry (and the multipath route's array of paths)
 * wait on this thread's deferred list while the barrier is held. */
START_TEST(delete_frees_after_release)
{
	ck_assert(apply(route_via(RTM_NEWROUTE, NET(10, 77, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX)));
	struct lcp_nl_hold h;
	lcp_nl_hold_begin(&h);
	ck_assert_uint_eq(fib_defer_pending(), 0);
	ck_assert(apply(route(RTM_DELROUTE, NET(10, 77, 0, 0), 16, RTN_UNICAST, RTPROT_STATIC)));
	ck_assert_ptr_null(fib_adj(NET(10, 77, 0, 0), 16)); /* gone from the FIB at once */
	uint32_t waiting = fib_defer_pending();
	ck_assert_uint_ge(waiting, 1);
	uint64_t before = lcp_nl_stats.frees_deferred;
	lcp_nl_hold_end(&h);
	ck_assert_uint_eq(fib_defer_pending(), 0);
	ck_assert_uint_eq(lcp_nl_stats.frees_deferred - before, waiting);
	/* Outside a hold (the CLI's thread, a test): freed at once. */
	ck_assert(apply(route_via(RTM_NEWROUTE, NET(10, 78, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX)));
	ck_assert(apply(route(RTM_DELROUTE, NET(10, 78, 0, 0), 16, RTN_UNICAST, RTPROT_STATIC)));
	ck_assert_uint_eq(fib_defer_pending(), 0);
}
END_TEST

/* The book through its incremental rehashes with adds and removes mixed
 * (a resync's dump and held deletes do that): its count is the reference
 * set's after every operation, so no record is lost or doubled mid-rehash. */
START_TEST(book_random_against_reference)
{
	enum { KEYS = 40000, OPS = 400000 };
	static bool in[KEYS];
	uint32_t n = 0, x = 12345;
	memset(in, 0, sizeof(in));
	for (uint32_t op = 0; op < OPS; op++) {
		x = x * 1103515245u + 12345u;
		uint32_t k = (x >> 8) % KEYS;
		/* mostly adds in the first half, mostly removes in the second */
		bool add = ((x >> 4) & 7) < (op < OPS / 2 ? 6u : 2u);
		uint32_t dst = htonl(NET(30, 0, 0, 0) + k * 256);
		if (add) {
			struct lcp_nl_route r = { .dst = dst, .plen = 24, .gen = op };
			ck_assert_int_eq(lcp_nl_route_note(&r), 0);
			n += !in[k];
			in[k] = true;
		} else {
			lcp_nl_route_forget(dst, 24);
			n -= in[k];
			in[k] = false;
		}
		ck_assert_uint_eq(lcp_nl_stats.routes, n);
	}
	ck_assert_uint_gt(lcp_nl_route_rehashed(), KEYS / 2);
}
END_TEST

/* The same for the per-source store (ip4_route_src.c) and the FIB's own
 * store behind it: counts and the FIB's answer after every operation. */
START_TEST(sources_random_against_reference)
{
	enum { KEYS = 40000, OPS = 300000 };
	static bool in[KEYS];
	uint32_t n = 0, x = 777;
	memset(in, 0, sizeof(in));
	const struct ip4_route_path p = { .kind = IP4_ADJ_REWRITE, .next_hop = htonl(NET(10, 1, 0, 2)),
					  .if_index = dev_a->index };
	for (uint32_t op = 0; op < OPS; op++) {
		x = x * 1103515245u + 12345u;
		uint32_t k = (x >> 8) % KEYS;
		bool add = ((x >> 4) & 7) < (op < OPS / 2 ? 6u : 2u);
		uint32_t pfx = NET(30, 0, 0, 0) + k * 64;
		if (add) {
			ck_assert_int_eq(ip4_route_src_add(IP4_SRC_LINUX, htonl(pfx), 26, &p, err, sizeof(err)), 0);
			n += !in[k];
			in[k] = true;
		} else {
			int rc = ip4_route_src_del(IP4_SRC_LINUX, htonl(pfx), 26, err, sizeof(err));
			ck_assert_int_eq(rc, in[k] ? 0 : -ENOENT);
			n -= in[k];
			in[k] = false;
		}
		ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), n);
		if ((op & 255) == 0)
			ck_assert_uint_eq(fib_adj(pfx, 26) != NULL, in[k]);
	}
	ck_assert_uint_gt(ip4_route_src_rehashed(), KEYS / 2);
}
END_TEST

/* `show ip fib` of a big table does not hold the datapath for its walk:
 * the prefixes one length per hold, then 256 routes per hold (counted
 * from the barrier's own statistics), and every route shows once, in
 * order. */
START_TEST(show_fib_in_holds)
{
	const uint32_t n = 3000;
	for (uint32_t i = 0; i < n; i++) /* one per /20, lengths /20 to /32 in turn */
		ck_assert(apply(route_via(RTM_NEWROUTE, NET(20, 0, 0, 0) + (i << 12), (uint8_t)(20 + i % 13), NET(10, 1, 0, 2),
					  TAP_IFINDEX)));
	cli_set_graph(g);
	struct graph_barrier_stats st0, st;
	graph_barrier_stats(g, &st0);
	char *out = NULL;
	int rc = cli_exec_line("show ip fib json", &out);
	ck_assert_msg(rc == 0, "show ip fib json: %d %s", rc, out ? out : "");
	graph_barrier_stats(g, &st);
	cJSON *j = cJSON_Parse(out);
	free(out);
	ck_assert_ptr_nonnull(j);
	const cJSON *routes = cJSON_GetObjectItem(j, "routes");
	ck_assert_int_eq(cJSON_GetArraySize(routes), (int)n);
	/* 33 lengths, then ceil(3000 / 256) = 12 chunks: 45 holds, none of the whole table. */
	ck_assert_uint_eq(st.holds - st0.holds, 33 + (n + 255) / 256);
	const cJSON *first = cJSON_GetArrayItem(routes, 0), *last = cJSON_GetArrayItem(routes, (int)n - 1);
	ck_assert_str_eq(cJSON_GetObjectItem(first, "prefix")->valuestring, "20.0.0.0/20");
	ck_assert_str_eq(cJSON_GetObjectItem(first, "source")->valuestring, "linux/static");
	ck_assert_str_eq(cJSON_GetObjectItem(last, "next_hop")->valuestring, "10.1.0.2");
	cJSON_Delete(j);
	cli_set_graph(NULL);
}
END_TEST

/* CLI over Linux for one prefix; each source removes only its own. */
START_TEST(sources_and_precedence)
{
	uint32_t pfx = htonl(NET(10, 9, 0, 0));
	ck_assert(apply(route_via(RTM_NEWROUTE, NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX)));
	ck_assert_int_eq(ip4_route_add(pfx, 16, htonl(NET(10, 1, 0, 4)), dev_a->index, err, sizeof(err)), 0);
	assert_via(NET(10, 9, 0, 0), 16, NET(10, 1, 0, 4));
	ck_assert_int_eq(ip4_route_src_best(NET(10, 9, 0, 0), 16, NULL), IP4_SRC_CLI);
	ck_assert(apply(route(RTM_DELROUTE, NET(10, 9, 0, 0), 16, RTN_UNICAST, RTPROT_STATIC)));
	assert_via(NET(10, 9, 0, 0), 16, NET(10, 1, 0, 4)); /* the CLI's survives */
	ck_assert(apply(route_via(RTM_NEWROUTE, NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX)));
	assert_via(NET(10, 9, 0, 0), 16, NET(10, 1, 0, 4)); /* Linux's does not overwrite it */
	ck_assert_int_eq(ip4_route_del(pfx, 16, err, sizeof(err)), 0);
	assert_via(NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2)); /* Linux's comes back */
	ck_assert_int_eq(ip4_route_del(pfx, 16, err, sizeof(err)), -ENOENT); /* the CLI has none now */
	assert_via(NET(10, 9, 0, 0), 16, NET(10, 1, 0, 2));
	/* an address's prefix is its own: Linux's route for it is refused */
	ck_assert_int_eq(ip4_if_addr_add(dev_a->index, htonl(NET(10, 1, 0, 1)), 24, err, sizeof(err)), 0);
	ck_assert(!apply(route_via(RTM_NEWROUTE, NET(10, 1, 0, 0), 24, NET(10, 1, 0, 2), TAP_IFINDEX)));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_REFUSED], 1);
	ck_assert_uint_eq(fib_adj(NET(10, 1, 0, 0), 24)->kind, IP4_ADJ_GLEAN);
	/* the CLI configured the address: Linux deleting it leaves it */
	ck_assert(apply(addr(RTM_NEWADDR, NET(10, 1, 0, 1), 24, TAP_IFINDEX)));
	ck_assert(apply(addr(RTM_DELADDR, NET(10, 1, 0, 1), 24, TAP_IFINDEX)));
	ck_assert(ip4_if_is_local(dev_a->index, htonl(NET(10, 1, 0, 1))));
}
END_TEST

/* A resync's sweep: what the new dump did not show goes, what another
 * listener (namespace) owns stays. */
START_TEST(resync_sweep)
{
	const struct lcp_nl_ctx gen2 = { .netns = "", .gen = 2 };
	const struct lcp_nl_ctx other = { .netns = "", .gen = (1u << 24) | 1 };
	ck_assert(apply(route_via(RTM_NEWROUTE, NET(10, 30, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX)));
	ck_assert(apply(route_via(RTM_NEWROUTE, NET(10, 31, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX)));
	ck_assert(lcp_nl_apply(&other, route_via(RTM_NEWROUTE, NET(10, 32, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX)));
	ck_assert(apply(addr(RTM_NEWADDR, NET(10, 5, 0, 1), 24, TAP_IFINDEX)));
	ck_assert(lcp_nl_apply(&gen2, route_via(RTM_NEWROUTE, NET(10, 30, 0, 0), 16, NET(10, 1, 0, 2), TAP_IFINDEX)));
	ck_assert_uint_eq(lcp_nl_sweep(2), 2); /* 10.31/16 and 10.5.0.1/24 */
	assert_via(NET(10, 30, 0, 0), 16, NET(10, 1, 0, 2));
	ck_assert_ptr_null(fib_adj(NET(10, 31, 0, 0), 16));
	assert_via(NET(10, 32, 0, 0), 16, NET(10, 1, 0, 2));
	ck_assert(!ip4_if_is_local(dev_a->index, htonl(NET(10, 5, 0, 1))));
	ck_assert_uint_eq(lcp_nl_stats.swept, 2);
	ck_assert_uint_eq(ip4_route_src_count(IP4_SRC_LINUX), 2);
}
END_TEST

/* Permanent neighbours become static; Linux's dynamic ones only confirm. */
START_TEST(neighbours)
{
	ck_assert(apply(neigh(RTM_NEWNEIGH, NET(10, 1, 0, 5), NUD_PERMANENT)));
	ck_assert(apply(neigh(RTM_NEWNEIGH, NET(10, 1, 0, 6), NUD_REACHABLE)));
	ip4_nbr_lock();
	const struct ip4_nbr *n5 = ip4_nbr_lookup(dev_a->index, htonl(NET(10, 1, 0, 5)));
	const struct ip4_nbr *n6 = ip4_nbr_lookup(dev_a->index, htonl(NET(10, 1, 0, 6)));
	ck_assert(n5 && (n5->flags & IP4_NBR_F_STATIC) && n5->state == IP4_NBR_REACHABLE);
	ck_assert(n6 && !(n6->flags & IP4_NBR_F_STATIC));
	ck_assert_uint_eq(n5->mac[5], 5);
	ip4_nbr_unlock();
	ck_assert(apply(neigh(RTM_DELNEIGH, NET(10, 1, 0, 5), 0)));
	ck_assert(apply(neigh(RTM_DELNEIGH, NET(10, 1, 0, 6), 0)));
	ip4_nbr_lock();
	ck_assert_ptr_null(ip4_nbr_lookup(dev_a->index, htonl(NET(10, 1, 0, 5))));
	ck_assert_ptr_nonnull(ip4_nbr_lookup(dev_a->index, htonl(NET(10, 1, 0, 6)))); /* sluice's ARP ages it */
	ip4_nbr_unlock();
}
END_TEST

/* Linux's up/down transitions of the TAP reach the port. */
START_TEST(link_state)
{
	ck_assert(apply(link_msg(false))); /* first sight: only noted */
	ck_assert(dev_a->admin_up);
	ck_assert(apply(link_msg(true)));
	ck_assert(dev_a->admin_up);
	ck_assert(apply(link_msg(false)));
	ck_assert(!dev_a->admin_up);
	ck_assert(apply(link_msg(true)));
	ck_assert(dev_a->admin_up);
}
END_TEST

/* The TAP's MTU and MAC changed in Linux (`ip link set s-eth0 mtu 1400
 * address ...`): the port follows; the same values again change nothing;
 * out of range ones are put back (the TAP keeps the port's). */
START_TEST(link_mtu_mac_to_port)
{
	uint8_t mac[6], mac0[6];
	memcpy(mac0, dev_a->mac, 6);
	memcpy(mac, mac0, 6);
	ck_assert(apply(link_mtu_mac(dev_a->mtu, mac))); /* as made: nothing */
	ck_assert_uint_eq(dev_a->mtu, 1500);
	mac[5] ^= 0x55;
	ck_assert(apply(link_mtu_mac(1400, mac)));
	ck_assert_uint_eq(dev_a->mtu, 1400);
	ck_assert_uint_eq(dev_tap->mtu, 1400);
	ck_assert_mem_eq(dev_a->mac, mac, 6);
	ck_assert_mem_eq(dev_tap->mac, mac, 6);
	ck_assert(apply(link_mtu_mac(20, mac))); /* below RFC 791's 68: refused, both stay */
	ck_assert_uint_eq(dev_a->mtu, 1400);
	ck_assert_uint_eq(dev_tap->mtu, 1400);
	uint8_t group[6] = { 0x01, 0, 0x5e, 0, 0, 5 };
	ck_assert(apply(link_mtu_mac(1400, group))); /* a group MAC: refused */
	ck_assert_mem_eq(dev_a->mac, mac, 6);
}
END_TEST

/* The port's MTU and MAC set in sluice: its TAP follows, and the IPv4
 * rewrites out of the port take the new source MAC at once. */
START_TEST(port_mtu_mac_to_tap)
{
	static const uint8_t nbr_mac[6] = { 0x02, 0xbb, 0, 0, 0, 2 };
	static const uint8_t new_mac[6] = { 0x02, 0x42, 0, 0, 0, 9 };
	ck_assert_int_eq(ip4_if_addr_add(dev_a->index, htonl(NET(10, 1, 0, 1)), 24, err, sizeof(err)), 0);
	ck_assert_int_eq(ip4_nbr_set(dev_a->index, htonl(NET(10, 1, 0, 2)), nbr_mac, true, err, sizeof(err)), 0);
	ck_assert_msg(ip4_route_add(htonl(NET(10, 9, 0, 0)), 16, htonl(NET(10, 1, 0, 2)), dev_a->index, err,
				    sizeof(err)) == 0, "%s", err);
	const struct ip4_adj *a = fib_adj(NET(10, 9, 0, 0), 16);
	ck_assert_uint_eq(a->rewrite_len, 14);
	ck_assert_mem_eq(a->rewrite + 6, dev_a->mac, 6);

	ck_assert_int_eq(dev_set_mtu(dev_a, 9000), 0);
	ck_assert_uint_eq(dev_tap->mtu, 9000);
	ck_assert_int_eq(dev_set_mtu(dev_a, 67), -ERANGE);
	ck_assert_int_eq(dev_set_mtu(dev_a, DEV_MTU_MAX + 1), -ERANGE);
	ck_assert_uint_eq(dev_a->mtu, 9000);
	ck_assert_int_eq(dev_set_mac(dev_a, new_mac), 0);
	ck_assert_mem_eq(dev_tap->mac, new_mac, 6);
	a = fib_adj(NET(10, 9, 0, 0), 16);
	ck_assert_mem_eq(a->rewrite, nbr_mac, 6);
	ck_assert_mem_eq(a->rewrite + 6, new_mac, 6);
	static const uint8_t zero[6], bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	ck_assert_int_eq(dev_set_mac(dev_a, zero), -EINVAL);
	ck_assert_int_eq(dev_set_mac(dev_a, bcast), -EINVAL);
	ck_assert_mem_eq(dev_a->mac, new_mac, 6);
}
END_TEST

static Suite *lcp_nl_suite(void)
{
	Suite *s = suite_create("lcp netlink");
	TCase *tc = tcase_create("map");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, address_and_route);
	tcase_add_test(tc, unmapped_kinds);
	tcase_add_test(tc, prefault_only_mapped);
	tcase_add_test(tc, garbage_refused);
	tcase_add_test(tc, multipath_and_nexthops);
	tcase_add_test(tc, nexthop_index);
	tcase_add_test(tc, unsupported_families);
	tcase_add_test(tc, sweep_in_steps);
	tcase_add_test(tc, growth_bounded_per_message);
	tcase_add_test(tc, holds_within_budget);
	tcase_add_test(tc, delete_frees_after_release);
	tcase_add_test(tc, show_fib_in_holds);
	tcase_add_test(tc, book_random_against_reference);
	tcase_add_test(tc, sources_random_against_reference);
	tcase_add_test(tc, sources_and_precedence);
	tcase_add_test(tc, resync_sweep);
	tcase_add_test(tc, neighbours);
	tcase_add_test(tc, link_state);
	tcase_add_test(tc, link_mtu_mac_to_port);
	tcase_add_test(tc, port_mtu_mac_to_tap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(lcp_nl_suite());
}
