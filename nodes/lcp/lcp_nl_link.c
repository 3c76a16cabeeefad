/* rtnetlink messages about a TAP's addresses, neighbours and link
 * (rtnetlink(7)), mapped to the paired port; the attribute helpers every
 * part of the mapping uses. Barrier held, as in lcp_nl_map.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "base/util.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"
#include "nodes/lcp/lcp.h"
#include "nodes/lcp/lcp_nl.h"
#include "nodes/lcp/lcp_nl_map_private.h"

#define ADDR_MAX (DEV_MAX * IP4_IF_MAX_ADDRS)

/* Addresses Linux gave (for the sweep), and the TAPs' last up state. */
static struct {
	uint32_t phy, addr, gen;
	uint8_t plen;
	bool used;
} addrs[ADDR_MAX];
static int8_t link_up[DEV_MAX]; /* -1 unknown, 0 down, 1 up */

void lcp_nl_link_reset(void)
{
	memset(addrs, 0, sizeof(addrs));
	memset(link_up, -1, sizeof(link_up));
	lcp_nl6_reset();
}

static void __attribute__((constructor)) link_init(void)
{
	memset(link_up, -1, sizeof(link_up));
}

/* ---- attributes ---- */

int lcp_nl_attr_cb(const struct nlattr *a, void *data)
{
	struct lcp_nl_attrs *at = data;
	uint16_t type = mnl_attr_get_type(a);
	if (type < LCP_NL_ATTR_MAX)
		at->tb[type] = a;
	return MNL_CB_OK;
}

/* The message's fixed header (hdrlen bytes, a multiple of 4 for every
 * rtnetlink header) and its attributes, or NULL when it is too short or an
 * attribute runs past the end (mnl_attr_parse would stop there quietly). */
const void *lcp_nl_parse(const struct nlmsghdr *nlh, size_t hdrlen, struct lcp_nl_attrs *at)
{
	memset(at, 0, sizeof(*at));
	if (nlh->nlmsg_len < NLMSG_HDRLEN + hdrlen)
		return NULL;
	const struct nlattr *a;
	mnl_attr_for_each(a, nlh, hdrlen) lcp_nl_attr_cb(a, at);
	if ((const void *)a != mnl_nlmsg_get_payload_tail(nlh))
		return NULL;
	return mnl_nlmsg_get_payload(nlh);
}

/* A u32 attribute, checked for its size: false when absent or bad. */
bool lcp_nl_get_u32(const struct lcp_nl_attrs *at, int type, uint32_t *v)
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
		return lcp_nl_applied();
	}
	if (ip4_if_is_local(phy, addr))
		return lcp_nl_applied(); /* configured in sluice too: stays sluice's */
	if (ip4_if_addr_add(phy, addr, plen, err, sizeof(err)))
		return lcp_nl_ignore(LCP_NL_IGN_REFUSED, err);
	addr_remember(phy, addr, plen, ctx->gen);
	return lcp_nl_applied();
}

static bool addr_del(uint32_t phy, uint32_t addr, uint8_t plen)
{
	char err[128];
	int k = addr_slot(phy, addr, plen);
	if (k < 0)
		return lcp_nl_applied(); /* not Linux's, or gone already */
	addrs[k].used = false;
	int rc = ip4_if_addr_del(phy, addr, plen, err, sizeof(err));
	return rc == 0 || rc == -ENOENT ? lcp_nl_applied() : lcp_nl_ignore(LCP_NL_IGN_REFUSED, err);
}

bool lcp_nl_map_addr(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct lcp_nl_attrs at;
	const struct ifaddrmsg *ifa = lcp_nl_parse(nlh, sizeof(*ifa), &at);
	if (!ifa)
		return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "address message");
	if (ifa->ifa_family == AF_INET6)
		return lcp_nl6_map_addr(ctx, nlh);
	if (ifa->ifa_family != AF_INET)
		return lcp_nl_ignore(LCP_NL_IGN_FAMILY, "address");
	uint32_t addr;
	if ((!lcp_nl_get_u32(&at, IFA_LOCAL, &addr) && !lcp_nl_get_u32(&at, IFA_ADDRESS, &addr)) || ifa->ifa_prefixlen > 32)
		return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "address without IFA_LOCAL");
	uint32_t phy = lcp_nl_phy_of_ifindex(ctx, ifa->ifa_index);
	if (phy == DEV_INDEX_INVALID)
		return lcp_nl_ignore(LCP_NL_IGN_NOT_TAP, "address");
	return nlh->nlmsg_type == RTM_NEWADDR ? addr_add(ctx, phy, addr, ifa->ifa_prefixlen)
					      : addr_del(phy, addr, ifa->ifa_prefixlen);
}

/* ---- neighbours and links ---- */

bool lcp_nl_map_neigh(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct lcp_nl_attrs at;
	const struct ndmsg *nd = lcp_nl_parse(nlh, sizeof(*nd), &at);
	uint32_t ip;
	if (!nd)
		return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "neighbour message");
	if (nd->ndm_family == AF_INET6)
		return lcp_nl6_map_neigh(ctx, nlh);
	if (nd->ndm_family != AF_INET)
		return lcp_nl_ignore(LCP_NL_IGN_FAMILY, "neighbour");
	if (!lcp_nl_get_u32(&at, NDA_DST, &ip))
		return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "neighbour without NDA_DST");
	uint32_t phy = lcp_nl_phy_of_ifindex(ctx, (uint32_t)nd->ndm_ifindex);
	if (phy == DEV_INDEX_INVALID)
		return lcp_nl_ignore(LCP_NL_IGN_NOT_TAP, "neighbour");
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
		return lcp_nl_applied();
	}
	const struct nlattr *ll = at.tb[NDA_LLADDR];
	if (!ll || mnl_attr_get_payload_len(ll) != 6)
		return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "neighbour without a MAC");
	char err[128];
	if (ip4_nbr_set(phy, ip, mnl_attr_get_payload(ll), is_static, err, sizeof(err)))
		return lcp_nl_ignore(LCP_NL_IGN_REFUSED, err);
	return lcp_nl_applied();
}

/* The TAP's MTU and MAC as Linux has them: the port follows (lcp.c). */
static void link_mtu_mac(uint32_t phy, const struct lcp_nl_attrs *at)
{
	uint32_t mtu = 0;
	const struct nlattr *ll = at->tb[IFLA_ADDRESS];
	lcp_nl_get_u32(at, IFLA_MTU, &mtu);
	lcp_host_link(phy, mtu, ll && mnl_attr_get_payload_len(ll) == 6 ? mnl_attr_get_payload(ll) : NULL);
}

/* Linux's up/down transitions of a TAP reach its port (`ip link set
 * s-eth0 down`); the first state seen only records (a TAP is made down
 * and brought up after), and a state equal to the port's changes nothing,
 * which ends the echo of the port -> TAP direction (lcp.c). */
bool lcp_nl_map_link(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh)
{
	struct lcp_nl_attrs at;
	const struct ifinfomsg *ifi = lcp_nl_parse(nlh, sizeof(*ifi), &at);
	if (!ifi)
		return lcp_nl_ignore(LCP_NL_IGN_MALFORMED, "link message");
	uint32_t phy = lcp_nl_phy_of_ifindex(ctx, (uint32_t)ifi->ifi_index);
	if (phy == DEV_INDEX_INVALID) {
		if (nlh->nlmsg_type == RTM_DELLINK) /* perhaps a TAP already seen gone: its routes went unannounced */
			lcp_nl_redump_wanted = true;
		return lcp_nl_ignore(LCP_NL_IGN_NOT_TAP, "link");
	}
	if (nlh->nlmsg_type == RTM_DELLINK)
		return lcp_nl_ignore(LCP_NL_IGN_REFUSED, "a TAP deleted in Linux: lcp delete cleans up");
	int8_t up = (ifi->ifi_flags & IFF_UP) != 0, was = link_up[phy];
	link_up[phy] = up;
	if (was == 1 && !up) /* IPv4 drops the routes via a device that goes down (or is deleted) unannounced */
		lcp_nl_redump_wanted = true;
	struct device *d = dev_by_index(phy);
	if (was >= 0 && was != up && d && d->admin_up != (bool)up)
		dev_set_admin_up(d, up);
	link_mtu_mac(phy, &at);
	return lcp_nl_applied();
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
	return n + lcp_nl6_sweep(gen);
}
