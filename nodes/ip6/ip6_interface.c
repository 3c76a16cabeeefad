/* IPv6 interface addresses (see ip6_interface.h). Control path only:
 * every call runs with the datapath parked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_route.h"

struct ip6_interface ip6_interfaces[DEV_MAX];

bool ip6_if_source_for(uint32_t if_index, const ip6_addr_a2 *peer, ip6_addr_a2 *src)
{
	const struct ip6_interface *ifc = ip6_if(if_index);
	if (!ifc)
		return false;
	bool link_scope = ip6_addr_is_link_local(peer) || (ip6_addr_is_multicast(peer) && ip6_mcast_scope(peer) <= 2);
	if (link_scope || !ifc->n_addrs) {
		*src = ifc->link_local;
		return true;
	}
	for (uint32_t i = 0; i < ifc->n_addrs; i++)
		if (ip6_prefix_match(&ifc->addrs[i].addr, peer, ifc->addrs[i].plen)) {
			*src = ifc->addrs[i].addr;
			return true;
		}
	*src = ifc->addrs[0].addr;
	return true;
}

int ip6_if_enable(uint32_t if_index, char *err, size_t errlen)
{
	const struct device *d = dev_by_index(if_index);
	if (!d) {
		snprintf(err, errlen, "no such interface");
		return -EINVAL;
	}
	struct ip6_interface *ifc = &ip6_interfaces[if_index];
	if (ifc->enabled)
		return 0;
	ip6_link_local_from_mac(&ifc->link_local, d->mac);
	ifc->ll_configured = false;
	ifc->enabled = true;
	return 0;
}

/* The interface (other than if_index) that has addr, or DEV_INDEX_INVALID. */
static uint32_t owner_of(const ip6_addr_a2 *addr, uint32_t if_index)
{
	for (uint32_t i = 0; i < DEV_MAX; i++)
		if (i != if_index && ip6_if_is_local(i, addr))
			return i;
	return DEV_INDEX_INVALID;
}

/* What an interface address may not be (RFC 4291 §2.5.2, §2.5.3, §2.7). */
static bool addr_usable(const ip6_addr_a2 *a)
{
	return !ip6_addr_is_multicast(a) && !ip6_addr_is_unspecified(a) && !ip6_addr_is_loopback(a) &&
	       !ip6_addr_is_v4_embedded(a);
}

int ip6_if_addr_add(uint32_t if_index, const ip6_addr_a2 *addr, uint8_t plen, char *err, size_t errlen)
{
	if (!dev_by_index(if_index) || plen > 128 || plen == 0) {
		snprintf(err, errlen, "bad interface or prefix length");
		return -EINVAL;
	}
	if (!addr_usable(addr)) {
		snprintf(err, errlen, "not a unicast address (multicast, unspecified, loopback or IPv4-embedded)");
		return -EINVAL;
	}
	struct ip6_interface *ifc = &ip6_interfaces[if_index];
	if (ip6_if_is_local(if_index, addr) && !(ip6_addr_is_link_local(addr) && !ifc->ll_configured)) {
		snprintf(err, errlen, "address already on the interface");
		return -EEXIST;
	}
	/* Link-local addresses are per link: the same one may sit on two. */
	if (!ip6_addr_is_link_local(addr) && owner_of(addr, if_index) != DEV_INDEX_INVALID) {
		snprintf(err, errlen, "the address is another interface's");
		return -EEXIST;
	}
	if (!ip6_addr_is_link_local(addr) && ifc->n_addrs == IP6_IF_MAX_ADDRS) {
		snprintf(err, errlen, "at most %u addresses per interface", IP6_IF_MAX_ADDRS);
		return -ENOSPC;
	}
	int rc = ip6_if_enable(if_index, err, errlen);
	if (rc)
		return rc;
	if (ip6_addr_is_link_local(addr)) {
		ifc->link_local = *addr;
		ifc->ll_configured = true;
		return 0;
	}
	/* Routes first: on error the interface is as it was (but enabled). */
	rc = ip6_route_addr_add(if_index, addr, plen, err, errlen);
	if (rc)
		return rc;
	ifc->addrs[ifc->n_addrs++] = (struct ip6_if_addr){ .addr = *addr, .plen = plen };
	return 0;
}

int ip6_if_addr_del(uint32_t if_index, const ip6_addr_a2 *addr, uint8_t plen, char *err, size_t errlen)
{
	const struct device *d = dev_by_index(if_index);
	struct ip6_interface *ifc = d ? &ip6_interfaces[if_index] : NULL;
	if (ifc && ifc->ll_configured && ip6_addr_eq(&ifc->link_local, addr)) {
		ip6_link_local_from_mac(&ifc->link_local, d->mac);
		ifc->ll_configured = false;
		return 0;
	}
	uint32_t i = 0;
	while (ifc && i < ifc->n_addrs && (!ip6_addr_eq(&ifc->addrs[i].addr, addr) || ifc->addrs[i].plen != plen))
		i++;
	if (!ifc || i == ifc->n_addrs) {
		snprintf(err, errlen, "no such address on the interface");
		return -ENOENT;
	}
	/* Another address of this interface on the same prefix keeps its
	 * neighbours. */
	bool shared = false;
	for (uint32_t k = 0; k < ifc->n_addrs; k++)
		if (k != i && ifc->addrs[k].plen == plen && ip6_prefix_match(&ifc->addrs[k].addr, addr, plen))
			shared = true;
	if (!shared)
		ip6_nbr_flush(if_index, addr, plen);
	memmove(&ifc->addrs[i], &ifc->addrs[i + 1], (ifc->n_addrs - i - 1) * sizeof(ifc->addrs[0]));
	ifc->n_addrs--;
	ip6_route_addr_del(if_index, addr, plen);
	return 0;
}

void ip6_if_clear(uint32_t if_index)
{
	if (if_index >= DEV_MAX)
		return;
	ip6_nbr_flush(if_index, NULL, 0);
	struct ip6_interface *ifc = &ip6_interfaces[if_index];
	while (ifc->n_addrs) {
		ifc->n_addrs--;
		ip6_route_addr_del(if_index, &ifc->addrs[ifc->n_addrs].addr, ifc->addrs[ifc->n_addrs].plen);
	}
	memset(ifc, 0, sizeof(*ifc));
}

/* Interface deletion (drivers/device.h) clears its IPv6 state. */
static void __attribute__((constructor)) ip6_if_register_delete_hook(void)
{
	dev_on_delete(ip6_if_clear);
}

bool ip6_parse_prefix(const char *w, ip6_addr_a2 *addr, uint8_t *plen, bool plen_optional)
{
	return ip_parse_prefix(AF_INET6, w, addr, plen, plen_optional, NULL);
}
