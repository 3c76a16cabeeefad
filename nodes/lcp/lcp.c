/* linux-cp's pair table and the making and unmaking of pairs (lcp.h).
 *
 * A pair's TAP is an ordinary interface of the tap driver ("tapN") in
 * DEV_MODE_LCP, so that ethernet-input hands what Linux sends to lcp-xc.
 * Its Linux side follows the port: made with the port's MAC and MTU, up
 * while the port is admin up, and given the port's new MTU or MAC
 * (dev_on_change). The other direction, Linux's `ip link set s-eth0
 * down|mtu|address` reaching the port, comes from the netlink listener
 * (lcp_nl.h, started for the pair's namespace by lcp_create) through
 * lcp_host_link for MTU and MAC.
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

/* The port changed (admin state, MTU, MAC): its TAP follows. An MTU the
 * TAP cannot take (its ring slots were sized for the MTU it was made
 * with) puts the port back to the TAP's, so that the two never differ. */
static void lcp_if_changed(uint32_t if_index)
{
	struct device *phy = dev_by_index(if_index);
	struct device *tap = phy ? dev_by_index(lcp_tap_of(if_index)) : NULL;
	if (!tap)
		return;
	if (tap->mtu != phy->mtu && dev_set_mtu(tap, phy->mtu)) {
		base_log("lcp", "%s: %s cannot take MTU %u (its rings are sized for %u): %s stays at %u", phy->name,
			 tap->name, phy->mtu, tap->mtu, phy->name, tap->mtu);
		dev_set_mtu(phy, tap->mtu);
	}
	if (memcmp(tap->mac, phy->mac, 6) && dev_set_mac(tap, phy->mac))
		base_log("lcp", "%s: %s refused the port's MAC", phy->name, tap->name);
	tap_host_set_up(tap, phy->admin_up);
}

void lcp_host_link(uint32_t phy_index, uint32_t mtu, const uint8_t *mac)
{
	struct device *phy = dev_by_index(phy_index);
	struct device *tap = phy ? dev_by_index(lcp_tap_of(phy_index)) : NULL;
	if (!tap)
		return;
	/* The message only says that something changed: what Linux has now
	 * decides, so that a stale message (its MAC before sluice set the
	 * port's) cannot start a ping-pong with the port -> TAP direction. */
	uint8_t now_mac[6];
	if (tap_host_get_link(tap, &mtu, now_mac) == 0)
		mac = now_mac;
	if (mtu && mtu != phy->mtu) {
		int rc = dev_set_mtu(tap, mtu);
		if (rc == 0)
			rc = dev_set_mtu(phy, mtu);
		if (rc) {
			base_log("lcp", "%s: Linux's MTU %u refused (%s): %s goes back to %u", phy->name, mtu,
				 strerror(-rc), tap_host_if(tap), phy->mtu);
			dev_set_mtu(tap, phy->mtu);
			tap_host_set_mtu(tap, phy->mtu); /* Linux has the refused one */
		}
	}
	if (mac && memcmp(mac, phy->mac, 6)) {
		int rc = dev_set_mac(tap, mac);
		if (rc == 0)
			rc = dev_set_mac(phy, mac);
		if (rc) {
			base_log("lcp", "%s: Linux's MAC refused (%s): %s goes back to the port's", phy->name,
				 strerror(-rc), tap_host_if(tap));
			dev_set_mac(tap, phy->mac);
			tap_host_set_mac(tap, phy->mac);
		}
	}
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
	dev_format_mac(mac, phy->mac);
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
		lcp_host_sysctls(netns, host_if); /* before the Linux side is up: no DAD, no RS */
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
