/* Shared by the IPv4 CLI files (ip4_cli.c, ip4_route_cli.c): parsing
 * addresses and prefixes (MACs and interface names: nodes/ethernet.h). */
#ifndef SLUICE_NODES_IP4_IP4_CLI_PRIVATE_H
#define SLUICE_NODES_IP4_IP4_CLI_PRIVATE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/device.h"
#include "nodes/ethernet.h"
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
	return ip_parse_prefix(AF_INET, w, addr, plen, plen_optional, had_plen);
}

#endif
