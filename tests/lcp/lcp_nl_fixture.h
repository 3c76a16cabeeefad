/* Shared by the netlink mapping's tests (test_lcp_nl.c: IPv4, links;
 * test_lcp_nl6.c: IPv6): testdrv "a" is the port, "t" its TAP, which Linux
 * knows as ifindex TAP_IFINDEX; OTHER_IFINDEX is no TAP of ours. Messages
 * are built in one static buffer (build, apply, then build the next). */
#ifndef SLUICE_TESTS_LCP_LCP_NL_FIXTURE_H
#define SLUICE_TESTS_LCP_LCP_NL_FIXTURE_H

#include <check.h>
#include <libmnl/libmnl.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/lcp/lcp.h"
#include "nodes/lcp/lcp_nl.h"
#include "tests/graph_fixture.h"

#define TAP_IFINDEX 7
#define OTHER_IFINDEX 99

static struct graph *g;
static struct device *dev_a, *dev_tap;
static char err[256];
static char buf[8192];
static const struct lcp_nl_ctx ctx1 = { .netns = "", .gen = 1 };

static struct nlmsghdr *msg(uint16_t type, size_t hdr)
{
	memset(buf, 0, sizeof(buf));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	mnl_nlmsg_put_extra_header(nlh, hdr);
	return nlh;
}

static bool apply(const struct nlmsghdr *nlh)
{
	return lcp_nl_apply(&ctx1, nlh);
}

/* The graph, the pair a/t, the mapping's state and counters reset. */
static void lcp_nl_fixture_up(void)
{
	fixture_buffers_up(1024);
	g = fixture_graph_up();
	dev_a = fixture_testdrv("a");
	dev_tap = fixture_testdrv("t");
	ck_assert_int_eq(lcp_pair(dev_a, dev_tap), 0);
	lcp_nl_set_test_ifindex(dev_tap->index, TAP_IFINDEX);
	lcp_nl_map_reset();
	memset(&lcp_nl_stats, 0, sizeof(lcp_nl_stats));
	lcp_nl_route_table = 0;
}

#endif
