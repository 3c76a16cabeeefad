/* The IPv6 settings of a TAP's Linux side (lcp.h: lcp_host_sysctls), so
 * that Linux never answers or acts a second time on what sluice owns.
 * sluice answers Neighbor Solicitations for its addresses, echo requests
 * and Router Solicitations, and runs DAD for its addresses; lcp-punt sends
 * Linux only what sluice does not answer (docs/lcp.md). What Linux would
 * still do by itself on a TAP, and what is set against it
 * (ip-sysctl.rst, net/ipv6):
 *
 *   forwarding=1        a router's interface: Linux sends no Router
 *                       Solicitations of its own, ignores RAs (with
 *                       accept_ra below 2) and flags its NAs as a router's
 *   accept_ra=0         an RA from another router (punted: an ICMPv6 type
 *                       sluice does not handle) must not give the TAP a
 *                       SLAAC address or a default route, which the netlink
 *                       listener would mirror into sluice
 *   autoconf=0          the same for addresses
 *   accept_redirects=0  a router takes no redirects (RFC 4861 §8.1)
 *   accept_dad=0        sluice runs DAD for the address on the wire; Linux's
 *                       own would only delay the address (tentative for a
 *                       second) that BGP wants to bind to
 *
 * Written in the TAP's namespace: /proc/sys/net is the opener's
 * namespace's, so the thread enters it (setns(2)) and goes back. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "nodes/lcp/lcp.h"

static const struct {
	const char *key, *value;
} settings[] = {
	{ "forwarding", "1" }, { "accept_ra", "0" }, { "autoconf", "0" }, { "accept_redirects", "0" },
	{ "accept_dad", "0" },
};

static int write_one(const char *host_if, const char *key, const char *value)
{
	char path[128];
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/%s", host_if, key);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, value, strlen(value));
	int rc = n < 0 ? -errno : 0;
	close(fd);
	return rc;
}

int lcp_host_sysctls(const char *netns, const char *host_if)
{
	int back = -1, rc = 0;
	if (netns && netns[0]) {
		char path[128];
		snprintf(path, sizeof(path), "/var/run/netns/%s", netns);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		back = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		rc = fd < 0 || back < 0 || setns(fd, CLONE_NEWNET) ? -errno : 0;
		if (fd >= 0)
			close(fd);
	}
	for (size_t i = 0; rc == 0 && i < sizeof(settings) / sizeof(settings[0]); i++)
		rc = write_one(host_if, settings[i].key, settings[i].value);
	if (back >= 0) {
		if (setns(back, CLONE_NEWNET) && rc == 0)
			rc = -errno;
		close(back);
	}
	if (rc)
		base_log("lcp", "%s: IPv6 settings of the TAP: %s (Linux may answer or configure itself there too)",
			 host_if, strerror(-rc));
	return rc;
}
