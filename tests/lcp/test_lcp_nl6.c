/* linux-cp's IPv6 netlink mapping (nodes/lcp/lcp_nl_route6.c): AF_INET6
 * rtnetlink messages built with libmnl as the kernel sends them, fed to
 * lcp_nl_apply with no socket and no thread; the exact IPv6 FIB entries
 * (adjacencies, load balances, sources), addresses and neighbours after
 * each. testdrv "a" is the port, "t" its TAP (Linux's ifindex 7); 99 is
 * no TAP of ours. Garbage is refused, counted and changes nothing. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_lb.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_route.h"
#include "nodes/lcp/lcp.h"
#include "nodes/lcp/lcp_nl.h"
#include "tests/check_run.h"
#include "tests/graph_fixture.h"
#include "tests/lcp/lcp_nl_fixture.h"

#define RTPROT_BGP_ 186


static struct in6_addr A6(const char *s)
{
	struct in6_addr a;
	ck_assert_int_eq(inet_pton(AF_INET6, s, &a), 1);
	return a;
}

static struct nlmsghdr *route6(uint16_t type, const char *dst, uint8_t plen, uint8_t proto)
{
	struct nlmsghdr *nlh = msg(type, sizeof(struct rtmsg));
	struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	rtm->rtm_family = AF_INET6;
	rtm->rtm_dst_len = plen;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_type = RTN_UNICAST;
	rtm->rtm_protocol = proto;
	struct in6_addr d = A6(dst);
	if (plen)
		mnl_attr_put(nlh, RTA_DST, 16, &d);
	return nlh;
}

static struct nlmsghdr *route6_via(uint16_t type, const char *dst, uint8_t plen, const char *gw, uint32_t oif)
{
	struct nlmsghdr *nlh = route6(type, dst, plen, RTPROT_BGP_);
	struct in6_addr a = A6(gw);
	mnl_attr_put(nlh, RTA_GATEWAY, 16, &a);
	mnl_attr_put_u32(nlh, RTA_OIF, oif);
	return nlh;
}

static void put_path6(struct nlmsghdr *nlh, const char *gw, uint32_t oif, uint8_t hops)
{
	struct rtnexthop *rtnh = mnl_nlmsg_get_payload_tail(nlh);
	memset(rtnh, 0, sizeof(*rtnh));
	nlh->nlmsg_len += RTNH_ALIGN(sizeof(*rtnh));
	rtnh->rtnh_ifindex = (int)oif;
	rtnh->rtnh_hops = hops;
	struct in6_addr a = A6(gw);
	mnl_attr_put(nlh, RTA_GATEWAY, 16, &a);
	rtnh->rtnh_len = (unsigned short)((char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)rtnh);
}

static struct nlmsghdr *addr6(uint16_t type, const char *a, uint8_t plen, uint32_t ifindex)
{
	struct nlmsghdr *nlh = msg(type, sizeof(struct ifaddrmsg));
	struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	ifa->ifa_family = AF_INET6;
	ifa->ifa_prefixlen = plen;
	ifa->ifa_index = ifindex;
	struct in6_addr x = A6(a);
	mnl_attr_put(nlh, IFA_ADDRESS, 16, &x);
	return nlh;
}

static struct nlmsghdr *neigh6(uint16_t type, const char *ip, uint16_t state)
{
	static const uint8_t mac[6] = { 0x02, 0xbb, 0, 0, 0, 6 };
	struct nlmsghdr *nlh = msg(type, sizeof(struct ndmsg));
	struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	nd->ndm_family = AF_INET6;
	nd->ndm_ifindex = TAP_IFINDEX;
	nd->ndm_state = state;
	struct in6_addr x = A6(ip);
	mnl_attr_put(nlh, NDA_DST, 16, &x);
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	return nlh;
}

/* An IPv6 nexthop object via the TAP, or (n > 0) a group. */
static struct nlmsghdr *nexthop6(uint32_t id, const char *gw, const uint32_t *group, const uint8_t *weights, int n)
{
	struct nlmsghdr *nlh = msg(RTM_NEWNEXTHOP, sizeof(struct nhmsg));
	((struct nhmsg *)mnl_nlmsg_get_payload(nlh))->nh_family = n ? AF_UNSPEC : AF_INET6;
	mnl_attr_put_u32(nlh, NHA_ID, id);
	if (!n) {
		struct in6_addr a = A6(gw);
		mnl_attr_put_u32(nlh, NHA_OIF, TAP_IFINDEX);
		mnl_attr_put(nlh, NHA_GATEWAY, 16, &a);
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


/* The FIB's adjacency for prefix/plen, or NULL. */
static const struct ip6_adj *fib6(const char *prefix, uint8_t plen, uint32_t *adj_index)
{
	uint32_t r;
	struct in6_addr p = A6(prefix);
	if (!ip6_fib_main || ip6_fib_get(ip6_fib_main, &p, plen, &r))
		return NULL;
	if (adj_index)
		*adj_index = r;
	return ip6_adj_get(r);
}

static void assert_via6(const char *prefix, uint8_t plen, const char *nh)
{
	const struct ip6_adj *a = fib6(prefix, plen, NULL);
	struct in6_addr x = A6(nh);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->kind, IP6_ADJ_REWRITE);
	ck_assert(ip6_addr_eq(&a->next_hop, &x));
	ck_assert_uint_eq(a->if_index, dev_a->index);
}

/* Which source's route is installed and its first path's protocol. */
static int best6(const char *prefix, uint8_t plen, uint8_t *proto, uint32_t *n_paths)
{
	struct ip6_route_path p[IP6_ROUTE_MAX_PATHS];
	struct in6_addr x = A6(prefix);
	uint32_t n;
	int s = ip6_route_src_best(&x, plen, p, IP6_ROUTE_MAX_PATHS, &n);
	if (proto)
		*proto = s >= 0 ? p[0].protocol : 0;
	if (n_paths)
		*n_paths = n;
	return s;
}

/* The route is a load balance over nh0 (weight w0) and nh1 (w1). */
static uint32_t assert_lb6(const char *prefix, uint8_t plen, const char *nh0, uint32_t w0, const char *nh1, uint32_t w1)
{
	uint32_t r;
	struct fib_lb_path lp[4];
	const struct ip6_adj *a = fib6(prefix, plen, &r);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->kind, IP6_ADJ_LB);
	ck_assert_uint_eq(ip6_lb_paths(r, lp, 4), 2);
	struct in6_addr x0 = A6(nh0), x1 = A6(nh1);
	ck_assert(ip6_addr_eq(&ip6_adj_get(lp[0].adj_index)->next_hop, &x0));
	ck_assert(ip6_addr_eq(&ip6_adj_get(lp[1].adj_index)->next_hop, &x1));
	ck_assert_uint_eq(lp[0].weight, w0);
	ck_assert_uint_eq(lp[1].weight, w1);
	return r;
}

static void setup(void)
{
	lcp_nl_fixture_up();
}

static void teardown(void)
{
	fixture_graph_down(g);
	g = NULL;
	ip6_main_free();
	for (uint32_t i = 0; i < DEV_MAX; i++)
		ip6_if_clear(i);
	fixture_buffers_down();
}

/* The TAP's EUI-64 link-local (same MAC) enables IPv6 on the port and is
 * sluice's own; a global address becomes the port's with its local /128
 * and connected prefix; the kernel's own routes for them (connected,
 * fe80::/64, the local table's) are not duplicated. */
START_TEST(addresses_and_kernel_routes)
{
	char ll[INET6_ADDRSTRLEN];
	struct in6_addr eui;
	ip6_link_local_from_mac(&eui, dev_a->mac);
	inet_ntop(AF_INET6, &eui, ll, sizeof(ll));
	ck_assert_ptr_null(ip6_if(dev_a->index));
	ck_assert(apply(addr6(RTM_NEWADDR, ll, 64, TAP_IFINDEX)));
	ck_assert_ptr_nonnull(ip6_if(dev_a->index));
	ck_assert(!ip6_interfaces[dev_a->index].ll_configured);
	ck_assert(apply(addr6(RTM_NEWADDR, "2001:db8:1::1", 64, TAP_IFINDEX)));
	struct in6_addr g1 = A6("2001:db8:1::1");
	ck_assert(ip6_if_is_local(dev_a->index, &g1));
	ck_assert_uint_eq(fib6("2001:db8:1::1", 128, NULL)->kind, IP6_ADJ_LOCAL);
	ck_assert_uint_eq(fib6("2001:db8:1::", 64, NULL)->kind, IP6_ADJ_GLEAN);
	/* the kernel's routes for them: sluice's own already */
	ck_assert(!apply(route6(RTM_NEWROUTE, "2001:db8:1::", 64, RTPROT_KERNEL)));
	ck_assert(!apply(route6(RTM_NEWROUTE, "fe80::", 64, RTPROT_KERNEL)));
	struct nlmsghdr *loc = route6(RTM_NEWROUTE, "2001:db8:1::1", 128, RTPROT_KERNEL);
	((struct rtmsg *)mnl_nlmsg_get_payload(loc))->rtm_table = RT_TABLE_LOCAL;
	((struct rtmsg *)mnl_nlmsg_get_payload(loc))->rtm_type = RTN_LOCAL;
	ck_assert(!apply(loc));
	struct nlmsghdr *mc = route6(RTM_NEWROUTE, "ff00::", 8, RTPROT_KERNEL);
	((struct rtmsg *)mnl_nlmsg_get_payload(mc))->rtm_table = RT_TABLE_LOCAL;
	((struct rtmsg *)mnl_nlmsg_get_payload(mc))->rtm_type = RTN_MULTICAST;
	ck_assert(!apply(mc));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_KERNEL], 2);
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_TABLE], 2);
	ck_assert_uint_eq(ip6_route_src_count(IP6_SRC_LINUX), 0);
	ck_assert_uint_eq(fib6("2001:db8:1::", 64, NULL)->kind, IP6_ADJ_GLEAN);
	/* a link-local of its own making (addr_gen_mode random): the port's configured one */
	ck_assert(apply(addr6(RTM_NEWADDR, "fe80::1234", 64, TAP_IFINDEX)));
	struct in6_addr l2 = A6("fe80::1234");
	ck_assert(ip6_addr_eq(&ip6_interfaces[dev_a->index].link_local, &l2));
	ck_assert(apply(addr6(RTM_DELADDR, "fe80::1234", 64, TAP_IFINDEX)));
	ck_assert(ip6_addr_eq(&ip6_interfaces[dev_a->index].link_local, &eui));
	/* deletes */
	ck_assert(apply(addr6(RTM_DELADDR, "2001:db8:1::1", 64, TAP_IFINDEX)));
	ck_assert(!ip6_if_is_local(dev_a->index, &g1));
	ck_assert_ptr_null(fib6("2001:db8:1::", 64, NULL));
	/* on an interface that is no TAP of ours */
	ck_assert(!apply(addr6(RTM_NEWADDR, "2001:db8:5::1", 64, OTHER_IFINDEX)));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_NOT_TAP], 1);
}
END_TEST

static void port_up6(void)
{
	ck_assert(apply(addr6(RTM_NEWADDR, "2001:db8:1::1", 64, TAP_IFINDEX)));
}

/* Routes via global and link-local gateways, with their protocol; device
 * routes; the CLI's route wins over Linux's and neither removes the other's. */
START_TEST(routes_and_sources)
{
	port_up6();
	ck_assert(apply(route6_via(RTM_NEWROUTE, "2001:db8:9::", 48, "2001:db8:1::2", TAP_IFINDEX)));
	assert_via6("2001:db8:9::", 48, "2001:db8:1::2");
	uint8_t proto;
	ck_assert_int_eq(best6("2001:db8:9::", 48, &proto, NULL), IP6_SRC_LINUX);
	ck_assert_uint_eq(proto, RTPROT_BGP_);
	/* FRR installs BGP routes via the peer's link-local address */
	ck_assert(apply(route6_via(RTM_NEWROUTE, "2001:db8:a::", 48, "fe80::2", TAP_IFINDEX)));
	assert_via6("2001:db8:a::", 48, "fe80::2");
	/* a device route */
	struct nlmsghdr *dev = route6(RTM_NEWROUTE, "2001:db8:b::", 64, RTPROT_STATIC);
	mnl_attr_put_u32(dev, RTA_OIF, TAP_IFINDEX);
	ck_assert(apply(dev));
	ck_assert_uint_eq(fib6("2001:db8:b::", 64, NULL)->kind, IP6_ADJ_GLEAN);
	/* the default route */
	ck_assert(apply(route6_via(RTM_NEWROUTE, "::", 0, "2001:db8:1::fe", TAP_IFINDEX)));
	assert_via6("::", 0, "2001:db8:1::fe");
	ck_assert_uint_eq(ip6_route_src_count(IP6_SRC_LINUX), 4);
	/* the CLI's over Linux's */
	struct in6_addr p9 = A6("2001:db8:9::"), nh = A6("2001:db8:1::7");
	ck_assert_int_eq(ip6_route_add(&p9, 48, &nh, DEV_INDEX_INVALID, err, sizeof(err)), 0);
	assert_via6("2001:db8:9::", 48, "2001:db8:1::7");
	ck_assert(apply(route6_via(RTM_NEWROUTE, "2001:db8:9::", 48, "2001:db8:1::3", TAP_IFINDEX)));
	assert_via6("2001:db8:9::", 48, "2001:db8:1::7"); /* Linux's replaced, the CLI's stays installed */
	ck_assert_int_eq(ip6_route_del(&p9, 48, err, sizeof(err)), 0);
	assert_via6("2001:db8:9::", 48, "2001:db8:1::3"); /* Linux's back */
	ck_assert_int_eq(ip6_route_add(&p9, 48, &nh, DEV_INDEX_INVALID, err, sizeof(err)), 0);
	ck_assert(apply(route6_via(RTM_DELROUTE, "2001:db8:9::", 48, "2001:db8:1::3", TAP_IFINDEX)));
	assert_via6("2001:db8:9::", 48, "2001:db8:1::7"); /* Linux deleting its own leaves the CLI's */
	ck_assert_int_eq(best6("2001:db8:9::", 48, NULL, NULL), IP6_SRC_CLI);
	/* the address's own prefix: refused, counted, nothing changes */
	ck_assert(!apply(route6_via(RTM_NEWROUTE, "2001:db8:1::", 64, "2001:db8:1::9", TAP_IFINDEX)));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_REFUSED], 1);
	ck_assert_uint_eq(fib6("2001:db8:1::", 64, NULL)->kind, IP6_ADJ_GLEAN);
	/* via an interface that is no TAP; of another table; unsupported types */
	ck_assert(!apply(route6_via(RTM_NEWROUTE, "2001:db8:c::", 48, "2001:db8:1::2", OTHER_IFINDEX)));
	struct nlmsghdr *t = route6_via(RTM_NEWROUTE, "2001:db8:d::", 48, "2001:db8:1::2", TAP_IFINDEX);
	((struct rtmsg *)mnl_nlmsg_get_payload(t))->rtm_table = 100;
	ck_assert(!apply(t));
	struct nlmsghdr *bh = route6(RTM_NEWROUTE, "2001:db8:e::", 48, RTPROT_STATIC);
	((struct rtmsg *)mnl_nlmsg_get_payload(bh))->rtm_type = RTN_THROW;
	ck_assert(!apply(bh));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_NOT_TAP], 1);
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_TABLE], 1);
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_ROUTE_TYPE], 1);
	ck_assert_ptr_null(fib6("2001:db8:c::", 48, NULL));
	ck_assert_ptr_null(fib6("2001:db8:d::", 48, NULL));
	ck_assert_ptr_null(fib6("2001:db8:e::", 48, NULL));
	/* the configured table maps as main does */
	lcp_nl_route_table = 100;
	t = route6_via(RTM_NEWROUTE, "2001:db8:d::", 48, "2001:db8:1::2", TAP_IFINDEX);
	((struct rtmsg *)mnl_nlmsg_get_payload(t))->rtm_table = 100;
	ck_assert(apply(t));
	ck_assert_ptr_nonnull(fib6("2001:db8:d::", 48, NULL));
	/* a delete without a gateway: the whole route */
	ck_assert(apply(route6(RTM_DELROUTE, "2001:db8:a::", 48, RTPROT_BGP_)));
	ck_assert_ptr_null(fib6("2001:db8:a::", 48, NULL));
}
END_TEST

/* RTA_MULTIPATH: one load balance, weights kept; Linux's per-path deletes
 * and appends; the buckets of a path that stays keep their path. */
START_TEST(multipath6)
{
	port_up6();
	struct nlmsghdr *mp = route6(RTM_NEWROUTE, "2001:db8:9::", 48, RTPROT_BGP_);
	struct nlattr *nest = mnl_attr_nest_start(mp, RTA_MULTIPATH);
	put_path6(mp, "2001:db8:1::2", TAP_IFINDEX, 0);
	put_path6(mp, "2001:db8:1::3", TAP_IFINDEX, 2);
	mnl_attr_nest_end(mp, nest);
	ck_assert(apply(mp));
	uint32_t r = assert_lb6("2001:db8:9::", 48, "2001:db8:1::2", 1, "2001:db8:1::3", 3);
	ck_assert_uint_eq(lcp_nl_stats.multipath, 1);
	/* 16 buckets, 4 and 12 */
	const struct ip6_lb *lb = &ip6_lbs[ip6_adj_get(r)->if_index];
	ck_assert_uint_eq(lb->mask, 15);
	struct fib_lb_path lp[2];
	ip6_lb_paths(r, lp, 2);
	uint32_t n0 = 0, keep[16];
	for (int k = 0; k < 16; k++) {
		n0 += lb->buckets[k] == lp[0].adj_index;
		keep[k] = lb->buckets[k];
	}
	ck_assert_uint_eq(n0, 4);
	/* an append adds a third path: the buckets of the two stay theirs where within share */
	struct nlmsghdr *ap = route6_via(RTM_NEWROUTE, "2001:db8:9::", 48, "2001:db8:1::4", TAP_IFINDEX);
	ap->nlmsg_flags |= NLM_F_APPEND;
	ck_assert(apply(ap));
	uint32_t n;
	ck_assert_int_eq(best6("2001:db8:9::", 48, NULL, &n), IP6_SRC_LINUX);
	ck_assert_uint_eq(n, 3);
	/* Linux deletes the appended path and then 2001:db8:1::2 (one by one) */
	ck_assert(apply(route6_via(RTM_DELROUTE, "2001:db8:9::", 48, "2001:db8:1::4", TAP_IFINDEX)));
	assert_lb6("2001:db8:9::", 48, "2001:db8:1::2", 1, "2001:db8:1::3", 3);
	for (int k = 0; k < 16; k++) /* back to two paths: the same shares */
		ck_assert_uint_eq(lb->buckets[k] == lp[0].adj_index, keep[k] == lp[0].adj_index);
	ck_assert(apply(route6_via(RTM_DELROUTE, "2001:db8:9::", 48, "2001:db8:1::2", TAP_IFINDEX)));
	assert_via6("2001:db8:9::", 48, "2001:db8:1::3");
	ck_assert(apply(route6_via(RTM_DELROUTE, "2001:db8:9::", 48, "2001:db8:1::3", TAP_IFINDEX)));
	ck_assert_ptr_null(fib6("2001:db8:9::", 48, NULL));
	ck_assert_uint_eq(ip6_route_src_count(IP6_SRC_LINUX), 0);
}
END_TEST

/* Nexthop objects with IPv6 gateways (FRR's default): a group is one load
 * balance; a member replaced moves the routes through it; a member gone
 * takes them out (never the old path). */
START_TEST(nexthop_objects6)
{
	port_up6();
	ck_assert(apply(nexthop6(1, "2001:db8:1::2", NULL, NULL, 0)));
	ck_assert(apply(nexthop6(2, "fe80::3", NULL, NULL, 0)));
	ck_assert(apply(nexthop6(10, NULL, (const uint32_t[]){ 1, 2 }, (const uint8_t[]){ 1, 1 }, 2)));
	struct nlmsghdr *r1 = route6(RTM_NEWROUTE, "2001:db8:9::", 48, RTPROT_BGP_);
	mnl_attr_put_u32(r1, RTA_NH_ID, 1);
	ck_assert(apply(r1));
	assert_via6("2001:db8:9::", 48, "2001:db8:1::2");
	struct nlmsghdr *r10 = route6(RTM_NEWROUTE, "2001:db8:a::", 48, RTPROT_BGP_);
	mnl_attr_put_u32(r10, RTA_NH_ID, 10);
	ck_assert(apply(r10));
	assert_lb6("2001:db8:a::", 48, "2001:db8:1::2", 1, "fe80::3", 1);
	/* nexthop 1 replaced: both routes follow, no route message */
	ck_assert(apply(nexthop6(1, "2001:db8:1::5", NULL, NULL, 0)));
	assert_via6("2001:db8:9::", 48, "2001:db8:1::5");
	assert_lb6("2001:db8:a::", 48, "2001:db8:1::5", 1, "fe80::3", 1);
	ck_assert_uint_eq(lcp_nl_stats.nh_routes, 2);
	/* an unknown id: refused, counted */
	struct nlmsghdr *r99 = route6(RTM_NEWROUTE, "2001:db8:b::", 48, RTPROT_BGP_);
	mnl_attr_put_u32(r99, RTA_NH_ID, 99);
	ck_assert(!apply(r99));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_NO_NEXTHOP], 1);
	/* nexthop 2 deleted: the group's route goes (the kernel re-announces what stays) */
	struct nlmsghdr *d2 = msg(RTM_DELNEXTHOP, sizeof(struct nhmsg));
	mnl_attr_put_u32(d2, NHA_ID, 2);
	ck_assert(apply(d2));
	ck_assert_ptr_null(fib6("2001:db8:a::", 48, NULL));
	assert_via6("2001:db8:9::", 48, "2001:db8:1::5");
}
END_TEST

static struct nlmsghdr *route6_type(uint16_t type, const char *dst, uint8_t plen, uint8_t rtm_type)
{
	struct nlmsghdr *nlh = route6(type, dst, plen, RTPROT_STATIC);
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_type = rtm_type;
	return nlh;
}

/* Routes that refuse (`ip -6 route add blackhole|unreachable|prohibit P`,
 * and a route through `ip nexthop add id N blackhole`): one path of their
 * kind, no interface, source linux; replaced by a unicast route and back;
 * deleted whole; swept as any other. A blackhole member of a group is
 * still refused. */
START_TEST(refusing_routes6)
{
	port_up6();
	static const struct {
		const char *p;
		uint8_t type, kind;
	} r[] = {
		{ "2001:db8:e1::", RTN_BLACKHOLE, IP6_ADJ_BLACKHOLE },
		{ "2001:db8:e2::", RTN_UNREACHABLE, IP6_ADJ_UNREACH },
		{ "2001:db8:e3::", RTN_PROHIBIT, IP6_ADJ_PROHIBIT },
	};
	for (int i = 0; i < 3; i++) {
		ck_assert(apply(route6_type(RTM_NEWROUTE, r[i].p, 48, r[i].type)));
		uint32_t n;
		ck_assert_uint_eq(fib6(r[i].p, 48, NULL)->kind, r[i].kind);
		ck_assert_int_eq(best6(r[i].p, 48, NULL, &n), IP6_SRC_LINUX);
		ck_assert_uint_eq(n, 1);
		ck_assert(ip6_adj_kind_rejects(r[i].kind));
	}
	ck_assert_str_eq(ip6_adj_kind_name(IP6_ADJ_PROHIBIT), "prohibit");
	ck_assert_uint_eq(ip6_route_src_count(IP6_SRC_LINUX), 3);
	/* one adjacency per kind, shared */
	ck_assert(apply(route6_type(RTM_NEWROUTE, "2001:db8:e4::", 64, RTN_PROHIBIT)));
	uint32_t a3, a4;
	fib6("2001:db8:e3::", 48, &a3);
	fib6("2001:db8:e4::", 64, &a4);
	ck_assert_uint_eq(a3, a4);
	/* unreachable -> a gateway -> blackhole again: Linux's replace */
	ck_assert(apply(route6_via(RTM_NEWROUTE, "2001:db8:e2::", 48, "2001:db8:1::2", TAP_IFINDEX)));
	assert_via6("2001:db8:e2::", 48, "2001:db8:1::2");
	ck_assert(apply(route6_type(RTM_NEWROUTE, "2001:db8:e2::", 48, RTN_BLACKHOLE)));
	ck_assert_uint_eq(fib6("2001:db8:e2::", 48, NULL)->kind, IP6_ADJ_BLACKHOLE);
	/* deleted (Linux's delete names the type): the whole route */
	ck_assert(apply(route6_type(RTM_DELROUTE, "2001:db8:e1::", 48, RTN_BLACKHOLE)));
	ck_assert_ptr_null(fib6("2001:db8:e1::", 48, NULL));
	/* a blackhole nexthop object */
	struct nlmsghdr *nb = msg(RTM_NEWNEXTHOP, sizeof(struct nhmsg));
	((struct nhmsg *)mnl_nlmsg_get_payload(nb))->nh_family = AF_INET6;
	mnl_attr_put_u32(nb, NHA_ID, 5);
	mnl_attr_put(nb, NHA_BLACKHOLE, 0, NULL);
	ck_assert(apply(nb));
	struct nlmsghdr *r5 = route6(RTM_NEWROUTE, "2001:db8:e5::", 48, RTPROT_BGP_);
	mnl_attr_put_u32(r5, RTA_NH_ID, 5);
	ck_assert(apply(r5));
	ck_assert_uint_eq(fib6("2001:db8:e5::", 48, NULL)->kind, IP6_ADJ_BLACKHOLE);
	/* the object replaced by a gateway: the route follows */
	ck_assert(apply(nexthop6(5, "2001:db8:1::4", NULL, NULL, 0)));
	assert_via6("2001:db8:e5::", 48, "2001:db8:1::4");
	/* a group with a blackhole member: refused, the route gone (never its old path) */
	ck_assert(apply(nexthop6(6, "2001:db8:1::6", NULL, NULL, 0)));
	struct nlmsghdr *b7 = msg(RTM_NEWNEXTHOP, sizeof(struct nhmsg));
	mnl_attr_put_u32(b7, NHA_ID, 7);
	mnl_attr_put(b7, NHA_BLACKHOLE, 0, NULL);
	ck_assert(apply(b7));
	ck_assert(apply(nexthop6(20, NULL, (const uint32_t[]){ 6, 7 }, (const uint8_t[]){ 1, 1 }, 2)));
	struct nlmsghdr *r20 = route6(RTM_NEWROUTE, "2001:db8:e6::", 48, RTPROT_BGP_);
	mnl_attr_put_u32(r20, RTA_NH_ID, 20);
	ck_assert(!apply(r20));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_NO_NEXTHOP], 1); /* as IPv4's */
	ck_assert_ptr_null(fib6("2001:db8:e6::", 48, NULL));
	/* the CLI-side checks: a refusing kind is a route's only path */
	struct ip6_route_path two[2] = { { .kind = IP6_ADJ_BLACKHOLE }, { .kind = IP6_ADJ_UNREACH } };
	struct in6_addr p7 = A6("2001:db8:e7::");
	ck_assert_int_eq(ip6_route_src_set(IP6_SRC_CLI, &p7, 48, two, 2, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(fib6("2001:db8:e7::", 48, NULL));
	/* the sweep: a dump of a new generation that shows none of them */
	ck_assert_uint_eq(lcp_nl_sweep(0x123), 5); /* e2, e3, e4, e5 and the address */
	ck_assert_uint_eq(ip6_route_src_count(IP6_SRC_LINUX), 0);
	ck_assert_ptr_null(fib6("2001:db8:e3::", 48, NULL));
}
END_TEST

START_TEST(neighbours6)
{
	port_up6();
	ck_assert(apply(neigh6(RTM_NEWNEIGH, "2001:db8:1::2", NUD_PERMANENT)));
	struct in6_addr x = A6("2001:db8:1::2"), ll = A6("fe80::2"), mc = A6("ff02::1:ff00:2");
	ip6_nbr_lock();
	const struct ip6_nbr *n = ip6_nbr_lookup(dev_a->index, &x);
	ck_assert_ptr_nonnull(n);
	ck_assert(n->flags & IP6_NBR_F_STATIC);
	ck_assert_uint_eq(n->mac[5], 6);
	ip6_nbr_unlock();
	ck_assert(apply(neigh6(RTM_NEWNEIGH, "fe80::2", NUD_REACHABLE)));
	ck_assert(apply(neigh6(RTM_NEWNEIGH, "ff02::1:ff00:2", NUD_NOARP)));
	ip6_nbr_lock();
	n = ip6_nbr_lookup(dev_a->index, &ll);
	ck_assert_ptr_nonnull(n);
	ck_assert(!(n->flags & IP6_NBR_F_STATIC));
	ck_assert_ptr_null(ip6_nbr_lookup(dev_a->index, &mc));
	ip6_nbr_unlock();
	ck_assert(apply(neigh6(RTM_DELNEIGH, "2001:db8:1::2", NUD_PERMANENT)));
	ip6_nbr_lock();
	ck_assert_ptr_null(ip6_nbr_lookup(dev_a->index, &x));
	ip6_nbr_unlock();
}
END_TEST

/* Garbage of every shape: refused under "malformed", nothing applied,
 * and the next good message still maps. */
START_TEST(garbage6)
{
	port_up6();
	uint64_t applied = lcp_nl_stats.applied;
	struct nlmsghdr *nlh = route6(RTM_NEWROUTE, "2001:db8:9::", 48, RTPROT_BGP_);
	mnl_attr_put_u32(nlh, RTA_GATEWAY, 0x0a010002); /* an IPv4-sized gateway */
	mnl_attr_put_u32(nlh, RTA_OIF, TAP_IFINDEX);
	ck_assert(!apply(nlh));
	nlh = route6_via(RTM_NEWROUTE, "2001:db8:9::", 48, "2001:db8:1::2", TAP_IFINDEX);
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_dst_len = 129;
	ck_assert(!apply(nlh));
	nlh = route6(RTM_NEWROUTE, "::", 0, RTPROT_BGP_);
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_dst_len = 48;
	mnl_attr_put_u32(nlh, RTA_DST, 0x20010db8); /* 4 bytes for an IPv6 prefix */
	ck_assert(!apply(nlh));
	nlh = route6(RTM_NEWROUTE, "2001:db8:9::", 48, RTPROT_BGP_); /* a multipath of a bad length */
	struct nlattr *nest = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	put_path6(nlh, "2001:db8:1::2", TAP_IFINDEX, 0);
	((struct rtnexthop *)mnl_attr_get_payload(nest))->rtnh_len = 200;
	mnl_attr_nest_end(nlh, nest);
	ck_assert(!apply(nlh));
	nlh = route6_via(RTM_NEWROUTE, "2001:db8:9::", 48, "2001:db8:1::2", TAP_IFINDEX);
	((struct nlattr *)((char *)nlh + nlh->nlmsg_len - 8))->nla_len = 300; /* runs past the end */
	ck_assert(!apply(nlh));
	nlh = msg(RTM_NEWADDR, sizeof(struct ifaddrmsg)); /* no address */
	((struct ifaddrmsg *)mnl_nlmsg_get_payload(nlh))->ifa_family = AF_INET6;
	((struct ifaddrmsg *)mnl_nlmsg_get_payload(nlh))->ifa_prefixlen = 64;
	ck_assert(!apply(nlh));
	nlh = neigh6(RTM_NEWNEIGH, "2001:db8:1::2", NUD_REACHABLE);
	((struct ndmsg *)mnl_nlmsg_get_payload(nlh))->ndm_family = AF_INET6;
	nlh->nlmsg_len -= 12; /* the MAC attribute cut off: a neighbour without one */
	ck_assert(!apply(nlh));
	nlh = msg(RTM_NEWNEXTHOP, sizeof(struct nhmsg)); /* an IPv6 gateway of 4 bytes */
	((struct nhmsg *)mnl_nlmsg_get_payload(nlh))->nh_family = AF_INET6;
	mnl_attr_put_u32(nlh, NHA_ID, 5);
	mnl_attr_put_u32(nlh, NHA_OIF, TAP_IFINDEX);
	mnl_attr_put_u32(nlh, NHA_GATEWAY, 1);
	ck_assert(!apply(nlh));
	ck_assert_uint_eq(lcp_nl_stats.ignored[LCP_NL_IGN_MALFORMED], 8);
	ck_assert_uint_eq(lcp_nl_stats.applied, applied);
	ck_assert_ptr_null(fib6("2001:db8:9::", 48, NULL));
	ck_assert_uint_eq(ip6_route_src_count(IP6_SRC_LINUX), 0);
	ck_assert(apply(route6_via(RTM_NEWROUTE, "2001:db8:9::", 48, "2001:db8:1::2", TAP_IFINDEX)));
	assert_via6("2001:db8:9::", 48, "2001:db8:1::2");
}
END_TEST

/* A resync: what the dump of generation 2 did not show again goes; the
 * CLI's routes stay. */
START_TEST(sweep6)
{
	port_up6();
	ck_assert(apply(route6_via(RTM_NEWROUTE, "2001:db8:9::", 48, "2001:db8:1::2", TAP_IFINDEX)));
	ck_assert(apply(route6_via(RTM_NEWROUTE, "2001:db8:a::", 48, "2001:db8:1::2", TAP_IFINDEX)));
	struct in6_addr pc = A6("2001:db8:c::"), nh = A6("2001:db8:1::7");
	ck_assert_int_eq(ip6_route_add(&pc, 48, &nh, DEV_INDEX_INVALID, err, sizeof(err)), 0);
	const struct lcp_nl_ctx ctx2 = { .netns = "", .gen = 2 };
	ck_assert(lcp_nl_apply(&ctx2, route6_via(RTM_NEWROUTE, "2001:db8:9::", 48, "2001:db8:1::2", TAP_IFINDEX)));
	ck_assert_uint_eq(lcp_nl_sweep(2), 2); /* 2001:db8:a::/48 and the address 2001:db8:1::1 */
	assert_via6("2001:db8:9::", 48, "2001:db8:1::2");
	ck_assert_ptr_null(fib6("2001:db8:a::", 48, NULL));
	assert_via6("2001:db8:c::", 48, "2001:db8:1::7");
}
END_TEST

/* The IPv6 sweep in steps, each a bounded hold (a deadline already past:
 * the least a step does): 3,000 routes, a dump of generation 2 showing
 * every third; between steps another listener's 2,000 routes arrive and
 * grow the store (4,096 buckets to 8,192), so the walk begins again on
 * the new buckets. Exactly the 2,000 not shown go, the rest stay. */
static const char *p6(const char *fmt, uint32_t i)
{
	static char b[64];
	snprintf(b, sizeof(b), fmt, i);
	return b;
}

START_TEST(sweep6_in_steps)
{
	port_up6();
	const struct lcp_nl_ctx gen2 = { .netns = "", .gen = 2 }, other = { .netns = "", .gen = 0x01000001 };
	for (uint32_t i = 0; i < 3000; i++)
		ck_assert(apply(route6_via(RTM_NEWROUTE, p6("2001:dc8:%x::", i), 48, "2001:db8:1::2", TAP_IFINDEX)));
	for (uint32_t i = 0; i < 3000; i += 3)
		ck_assert(lcp_nl_apply(&gen2, route6_via(RTM_NEWROUTE, p6("2001:dc8:%x::", i), 48, "2001:db8:1::2",
							 TAP_IFINDEX)));
	ck_assert(lcp_nl_apply(&gen2, addr6(RTM_NEWADDR, "2001:db8:1::1", 64, TAP_IFINDEX))); /* shown again */
	struct lcp_nl_sweep cur = { 0 };
	uint32_t steps = 0, added = 0;
	uint64_t swept0 = lcp_nl_stats.swept;
	while (!lcp_nl_sweep_step(2, &cur, 0)) {
		steps++;
		for (uint32_t k = 0; cur.phase == 1 && k < 500 && added < 2000; k++, added++)
			ck_assert(lcp_nl_apply(&other, route6_via(RTM_NEWROUTE, p6("2001:dc9:%x::", added), 48,
								  "2001:db8:1::2", TAP_IFINDEX)));
	}
	ck_assert_uint_eq(added, 2000);
	ck_assert_uint_eq(cur.v6_mask, 8191); /* the walk that ended was on the grown store */
	ck_assert_uint_gt(steps, 10);
	ck_assert_uint_eq(lcp_nl_stats.swept - swept0, 2000);
	ck_assert_uint_eq(ip6_route_src_count(IP6_SRC_LINUX), 1000 + 2000);
	assert_via6("2001:dc8:0::", 48, "2001:db8:1::2");
	assert_via6("2001:dc8:bb5::", 48, "2001:db8:1::2"); /* 2997: shown */
	ck_assert_ptr_null(fib6("2001:dc8:1::", 48, NULL));
	ck_assert_ptr_null(fib6("2001:dc8:bb7::", 48, NULL));
	assert_via6("2001:dc9:7cf::", 48, "2001:db8:1::2"); /* the other listener's 1,999th */
}
END_TEST

static Suite *lcp_nl6_suite(void)
{
	Suite *s = suite_create("lcp netlink ipv6");
	TCase *tc = tcase_create("map6");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, addresses_and_kernel_routes);
	tcase_add_test(tc, routes_and_sources);
	tcase_add_test(tc, multipath6);
	tcase_add_test(tc, nexthop_objects6);
	tcase_add_test(tc, refusing_routes6);
	tcase_add_test(tc, neighbours6);
	tcase_add_test(tc, garbage6);
	tcase_add_test(tc, sweep6);
	tcase_add_test(tc, sweep6_in_steps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(lcp_nl6_suite());
}
