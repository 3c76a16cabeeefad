/* linux-cp's pair table and the making and unmaking of pairs (lcp.h).
 *
 * A pair's TAP is an ordinary interface of the tap driver ("tapN") in
 * DEV_MODE_LCP, so that ethernet-input hands what Linux sends to lcp-xc.
 * Its Linux side follows the port: made with the port's MAC and MTU, and
 * up while the port is admin up (dev_on_change). The other direction,
 * Linux's `ip link set s-eth0 down` reaching the port, is the netlink
 * listener's (lcp_nl.h), started for the pair's namespace by lcp_create.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/graph.h"
#include "nodes/lcp/lcp.h"
#include "nodes/lcp/lcp_nl.h"

struct lcp_tables lcp_tables;
static char default_netns[TAP_NETNS_SIZE];

static void __attribute__((constructor)) lcp_tables_init(void)
{
	for (uint32_t i = 0; i < DEV_MAX; i++)
		lcp_tables.tap_of[i] = lcp_tables.phy_of[i] = DEV_INDEX_INVALID;
}

int lcp_pair(struct device *phy, struct device *tap)
{
	if (phy == tap || lcp_tap_of(phy->index) != DEV_INDEX_INVALID ||
	    lcp_phy_of(phy->index) != DEV_INDEX_INVALID || lcp_tap_of(tap->index) != DEV_INDEX_INVALID ||
	    lcp_phy_of(tap->index) != DEV_INDEX_INVALID)
		return -EINVAL;
	lcp_tables.tap_of[phy->index] = tap->index;
	lcp_tables.phy_of[tap->index] = phy->index;
	tap->mode = DEV_MODE_LCP;
	return 0;
}

void lcp_unpair(uint32_t phy)
{
	uint32_t tap = lcp_tap_of(phy);
	if (tap == DEV_INDEX_INVALID)
		return;
	lcp_tables.tap_of[phy] = DEV_INDEX_INVALID;
	lcp_tables.phy_of[tap] = DEV_INDEX_INVALID;
	struct device *t = dev_by_index(tap);
	if (t && t->mode == DEV_MODE_LCP)
		dev_set_l3(t);
}

uint32_t lcp_n_pairs(void)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < DEV_MAX; i++)
		n += lcp_tables.tap_of[i] != DEV_INDEX_INVALID;
	return n;
}

/* ---- interface hooks (datapath parked) ---- */

/* A port going takes its TAP along; a TAP going leaves its port unpaired. */
static void lcp_if_deleted(uint32_t if_index)
{
	uint32_t tap = lcp_tap_of(if_index);
	if (tap != DEV_INDEX_INVALID) {
		lcp_unpair(if_index);
		dev_delete(dev_by_index(tap));
		return;
	}
	uint32_t phy = lcp_phy_of(if_index);
	if (phy != DEV_INDEX_INVALID)
		lcp_unpair(phy);
}

static void lcp_if_changed(uint32_t if_index)
{
	struct device *phy = dev_by_index(if_index);
	struct device *tap = phy ? dev_by_index(lcp_tap_of(if_index)) : NULL;
	if (tap)
		tap_host_set_up(tap, phy->admin_up);
}

static void __attribute__((constructor)) lcp_hooks_register(void)
{
	dev_on_delete(lcp_if_deleted);
	dev_on_change(lcp_if_changed);
}

/* ---- create and delete ---- */

static int need_netns(const char *netns, char *err, size_t errlen)
{
	char path[32 + TAP_NETNS_SIZE];
	struct stat st;
	if (strlen(netns) >= TAP_NETNS_SIZE || strchr(netns, '/')) {
		snprintf(err, errlen, "netns: expected a name of at most %u characters, not a path", TAP_NETNS_SIZE - 1);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/var/run/netns/%s", netns);
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "netns %s: no such namespace (expected a name `ip netns list` shows)", netns);
		return -ENOENT;
	}
	return 0;
}

static int check_create(struct device *phy, const char *port, const char *host_if, const char *netns,
			char *err, size_t errlen)
{
	if (!phy) {
		snprintf(err, errlen, "no interface '%s'", port);
		return -ENOENT;
	}
	if (tap_is(phy) || lcp_phy_of(phy->index) != DEV_INDEX_INVALID) {
		snprintf(err, errlen, "%s is a TAP: pair a port", port);
		return -EINVAL;
	}
	if (lcp_tap_of(phy->index) != DEV_INDEX_INVALID) {
		snprintf(err, errlen, "%s is already paired with %s", port, dev_by_index(lcp_tap_of(phy->index))->name);
		return -EEXIST;
	}
	if (!host_if[0] || strlen(host_if) >= TAP_IFNAME_SIZE || strchr(host_if, '/') || strchr(host_if, ' ')) {
		snprintf(err, errlen, "host-if '%s': expected a Linux interface name of 1 to %u characters", host_if,
			 TAP_IFNAME_SIZE - 1);
		return -EINVAL;
	}
	struct graph *g = dev_graph();
	if (g && graph_n_threads(g) > DEV_MAX_QUEUES) {
		snprintf(err, errlen, "%u datapath threads: a TAP has at most %u tx rings", graph_n_threads(g),
			 DEV_MAX_QUEUES);
		return -EINVAL;
	}
	return netns[0] ? need_netns(netns, err, errlen) : 0;
}

/* The TAP's words for the tap driver, as `create interface` takes them. */
static struct device *create_tap(struct device *phy, const char *host_if, const char *netns, char *err,
				 size_t errlen)
{
	char name[DEV_NAME_SIZE], mac[18], mtu[8], txq[8];
	for (uint32_t n = 0;; n++) {
		snprintf(name, sizeof(name), "tap%u", n);
		if (!dev_by_name(name))
			break;
	}
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", phy->mac[0], phy->mac[1], phy->mac[2],
		 phy->mac[3], phy->mac[4], phy->mac[5]);
	snprintf(mtu, sizeof(mtu), "%u", phy->mtu);
	struct graph *g = dev_graph();
	snprintf(txq, sizeof(txq), "%u", g ? graph_n_threads(g) : 1);
	const char *words[] = { "host-if", host_if, "mac", mac, "mtu", mtu, "tx-queues", txq, "netns", netns };
	return dev_create(name, "tap", words, netns[0] ? 10 : 8, err, errlen);
}

int lcp_create(const char *port, const char *host_if, const char *netns, char *err, size_t errlen)
{
	struct device *phy = dev_by_name(port);
	if (!netns || !netns[0])
		netns = default_netns;
	int rc = check_create(phy, port, host_if, netns, err, errlen);
	if (rc)
		return rc;
	struct graph *g = dev_graph();
	if (g)
		graph_barrier_sync(g);
	struct device *tap = create_tap(phy, host_if, netns, err, errlen);
	if (!tap) {
		rc = strstr(err, "already exists") ? -EEXIST : -EINVAL; /* the driver's words (tap_host.c) */
	} else if ((rc = lcp_pair(phy, tap)) == 0 && (rc = dev_set_admin_up(tap, true)) == 0) {
		tap_host_set_up(tap, phy->admin_up);
	} else {
		snprintf(err, errlen, "%s: cannot bring %s up: %s", port, tap->name, strerror(-rc));
		dev_delete(tap);
	}
	if (g)
		graph_barrier_release(g);
	if (rc)
		return rc;
	int nl = lcp_nl_start(netns);
	if (nl)
		base_log("lcp-nl", "netns %s: no netlink listener: %s (addresses and routes stay Linux's)",
			 netns[0] ? netns : "(sluice's)", strerror(-nl));
	return 0;
}

int lcp_delete(const char *port, char *err, size_t errlen)
{
	struct device *phy = dev_by_name(port);
	struct device *tap = phy ? dev_by_index(lcp_tap_of(phy->index)) : NULL;
	if (!tap) {
		snprintf(err, errlen, phy ? "%s has no lcp pair" : "no interface '%s'", port);
		return -ENOENT;
	}
	struct graph *g = dev_graph();
	if (g)
		graph_barrier_sync(g);
	dev_delete(tap); /* its delete hook unpairs */
	if (g)
		graph_barrier_release(g);
	return 0;
}

const char *lcp_default_netns(void)
{
	return default_netns;
}

int lcp_set_default_netns(const char *netns, char *err, size_t errlen)
{
	int rc = netns[0] ? need_netns(netns, err, errlen) : 0;
	if (rc == 0)
		snprintf(default_netns, sizeof(default_netns), "%s", netns);
	return rc;
}
