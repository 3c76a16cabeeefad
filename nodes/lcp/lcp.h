/* linux-cp: each paired port mirrored into Linux as a TAP (drivers/tap),
 * as VPP's linux-cp plugin does, so that routing daemons running there
 * (FRR, BIRD) talk through sluice's ports. docs/lcp.md.
 *
 * The pair table maps a port (a "phy") to its TAP interface and back. The
 * datapath reads it per packet: lcp-punt sends what the router itself does
 * not answer up the rx port's TAP, lcp-xc sends what Linux writes into a
 * TAP out of its port. Both address families use the same table (the
 * netlink listener, later, looks TAP -> port up in it too).
 *
 * Thread-safety: the tables are written only with the datapath parked
 * (lcp_create and lcp_delete take the graph barrier themselves; the
 * interface hooks run under the caller's); the datapath only reads them.
 */
#ifndef SLUICE_NODES_LCP_H
#define SLUICE_NODES_LCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/device.h"
#include "drivers/tap/tap.h"

struct lcp_tables {
	uint32_t tap_of[DEV_MAX]; /* port index -> its TAP's index, or DEV_INDEX_INVALID */
	uint32_t phy_of[DEV_MAX]; /* TAP index -> its port's index, or DEV_INDEX_INVALID */
};
extern struct lcp_tables lcp_tables;

/* The TAP paired with port phy, or DEV_INDEX_INVALID. Datapath. */
static inline uint32_t lcp_tap_of(uint32_t phy)
{
	return phy < DEV_MAX ? lcp_tables.tap_of[phy] : DEV_INDEX_INVALID;
}

/* The port paired with TAP tap, or DEV_INDEX_INVALID. Datapath. */
static inline uint32_t lcp_phy_of(uint32_t tap)
{
	return tap < DEV_MAX ? lcp_tables.phy_of[tap] : DEV_INDEX_INVALID;
}

/* Make a TAP called host_if in namespace netns (NULL or "": the default,
 * `lcp default netns`, else sluice's own) with the port's MAC and MTU,
 * one tx queue per datapath thread, register it as interface "tapN"
 * (lowest free N), pair it with port and bring it up; the TAP's Linux
 * side is up while the port is. Nothing changes on failure: -ENOENT (no
 * such port), -EINVAL (name too long, a TAP or paired port given),
 * -EEXIST (port already paired, or host_if exists in the namespace),
 * -ENOENT from the driver (no such namespace), with the reason in err. */
int lcp_create(const char *port, const char *host_if, const char *netns, char *err, size_t errlen);

/* Unpair port and delete its TAP (which removes it from Linux).
 * 0 or -ENOENT (no such port, or not paired) with the reason in err. */
int lcp_delete(const char *port, char *err, size_t errlen);

/* Pair two existing interfaces (tests pair a test driver's; lcp_create
 * uses it): tap's mode becomes DEV_MODE_LCP. Caller holds the barrier.
 * 0, -EINVAL (same, or either already paired). */
int lcp_pair(struct device *phy, struct device *tap);

/* Undo lcp_pair (tap back to L3); nothing if phy has no pair. */
void lcp_unpair(uint32_t phy);

/* Linux changed the MTU or MAC (NULL: no MAC in the message) of the TAP
 * paired with port phy (the netlink listener's RTM_NEWLINK): the port
 * follows, through its TAP interface first (whose rings may refuse a
 * larger MTU). What the TAP or the port refuses is put back on the Linux
 * side and logged, so the two never stay apart; values equal to the
 * port's change nothing (which ends the echo of the port -> TAP
 * direction). Barrier held. */
void lcp_host_link(uint32_t phy, uint32_t mtu, const uint8_t *mac);

/* The IPv6 sysctls of host_if in netns ("": sluice's) that keep Linux
 * from answering or configuring itself where sluice is authoritative
 * (forwarding=1, accept_ra=0, autoconf=0, accept_redirects=0,
 * accept_dad=0; lcp_sysctl.c says why each). 0 or a negative errno
 * (logged: the TAP still works). */
int lcp_host_sysctls(const char *netns, const char *host_if);

/* The namespace TAPs go in when lcp create names none ("": sluice's). */
const char *lcp_default_netns(void);
int lcp_set_default_netns(const char *netns, char *err, size_t errlen);

/* Pairs in port order; n gets the count. */
uint32_t lcp_n_pairs(void);

#endif
