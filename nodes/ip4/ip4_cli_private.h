/* Shared by the IPv4 CLI files (ip4_cli.c, ip4_route_cli.c): parsing
 * addresses and prefixes, formatting MACs and interface names. */
#ifndef SLUICE_NODES_IP4_IP4_CLI_PRIVATE_H
#define SLUICE_NODES_IP4_IP4_CLI_PRIVATE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/device.h"
#include "nodes/ip4/ip4.h"

/* "A.B.C.D" -> network order. */
static inline bool parse_addr(const char *w, uint32_t *addr)
{
	return inet_pton(AF_INET, w, addr) == 1;
}

/* "A.B.C.D/L" -> network order and length; plen_optional lets "A.B.C.D"
 * through with *plen 32 and *had_plen false. */
static inline bool parse_prefix(const char *w, uint32_t *addr, uint8_t *plen, bool plen_optional, bool *had_plen)
{
	char buf[32];
	const char *slash = strchr(w, '/');
	if (had_plen)
		*had_plen = slash != NULL;
	if (!slash) {
		*plen = 32;
		return plen_optional && parse_addr(w, addr);
	}
	size_t n = (size_t)(slash - w);
	if (n >= sizeof(buf) || !slash[1])
		return false;
	memcpy(buf, w, n);
	buf[n] = 0;
	char *end;
	unsigned long l = strtoul(slash + 1, &end, 10);
	if (*end || l > 32)
		return false;
	*plen = (uint8_t)l;
	return parse_addr(buf, addr);
}

static inline const char *fmt_mac(char *buf, const uint8_t m[6])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

static inline const char *if_name(uint32_t if_index)
{
	const struct device *d = dev_by_index(if_index);
	return d ? d->name : "-";
}

#endif
