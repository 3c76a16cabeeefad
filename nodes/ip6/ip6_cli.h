/* The IPv6 halves of the commands both families share, VPP spelling
 * (`set interface ip address [del] NAME X:X::X:X/L`, `set ip neighbor NAME
 * X:X::X:X MAC [static]`): nodes/ip4/ip4_cli.c parses the interface and
 * hands an address with a ':' over to these. Part of sluice_ip6_cli. */
#ifndef SLUICE_NODES_IP6_CLI_H
#define SLUICE_NODES_IP6_CLI_H

#include <stdbool.h>

#include "cli/cli.h"
#include "drivers/device.h"

/* Add (or with add false, remove) the IPv6 prefix word pfx on d. */
int ip6_cli_address_change(struct cli_session *s, const struct device *d, const char *pfx, bool add);

/* ip (an IPv6 address word) on d is at the MAC word macw. */
int ip6_cli_set_neighbor(struct cli_session *s, const struct device *d, const char *ip, const char *macw,
			 bool is_static);

/* `ip route add|del` for a prefix with a ':' (argv[0] is the prefix;
 * ip6_route_cli.c). */
int ip6_cli_route_add(struct cli_session *s, int argc, char **argv);
int ip6_cli_route_del(struct cli_session *s, int argc, char **argv);

#endif
