/* IPv4 CLI commands, VPP spelling: interface addresses, and the neighbour
 * and interface views (routes and the FIB: ip4_route_cli.c). An IPv6
 * address (a ':' in it) given to `set interface ip address` or `set ip
 * neighbor` goes to nodes/ip6/ip6_cli.h: one command for both families, as
 * in VPP.
 *
 * Every command checks all of its words before it changes anything, so a
 * bad command prints usage and leaves the state as it was. Changes run
 * under the graph barrier (the datapath reads the FIB, the adjacencies and
 * the interface addresses without locks).
 *
 * Built as its own library (sluice_ip4_cli) that the daemon links whole, so
 * that nodes/ does not depend on cli/.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "drivers/device.h"
#include "base/conf.h"
#include "graph/graph_cli.h"
#include "nodes/ip4/ip4.h"
#include "nodes/ip4/ip4_fib.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"
#include "nodes/ip4/ip4_cli_private.h"
#include "nodes/ip6/ip6_cli.h"

/* ---- addresses ---- */

static int address_change(struct cli_session *s, int argc, char **argv, bool add)
{
	const char *name = NULL, *pfx = NULL;
	const struct cli_arg args[] = {
		{ CLI_ARG_WORD, "NAME", &name, 0, 0 },
		{ CLI_ARG_WORD, "PREFIX", &pfx, 0, 0 },
	};
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	struct device *d = dev_by_name(name);
	if (!d)
		return cli_fail(s, -EINVAL, "no interface %s", name);
	if (strchr(pfx, ':'))
		return ip6_cli_address_change(s, d, pfx, add);
	uint32_t addr;
	uint8_t plen;
	if (!parse_prefix(pfx, &addr, &plen, false, NULL))
		return cli_fail(s, -EINVAL, "'%s' is not A.B.C.D/L", pfx);
	char err[128] = "";
	graph_cli_barrier_sync(s);
	rc = add ? ip4_if_addr_add(d->index, addr, plen, err, sizeof(err))
		 : ip4_if_addr_del(d->index, addr, plen, err, sizeof(err));
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc == -EINVAL ? -EINVAL : rc, "%s", err);
	cli_printf(s, "%s: %s %s", d->name, add ? "added" : "deleted", pfx);
	return 0;
}

/*
 * sluice> set interface ip address a 10.1.0.1/24
 * a: added 10.1.0.1/24
 */
static int set_address(struct cli_session *s, int argc, char **argv)
{
	return address_change(s, argc, argv, true);
}

/*
 * sluice> set interface ip address del a 10.1.0.1/24
 * a: deleted 10.1.0.1/24
 */
static int del_address(struct cli_session *s, int argc, char **argv)
{
	return address_change(s, argc, argv, false);
}

/* ---- show ip neighbors ---- */

struct nbr_show {
	struct cli_table *t;
	cJSON *list; /* `json`: rows go here instead of t */
	uint64_t now;
};

static const char *nbr_state(const struct ip4_nbr *n)
{
	if (n->state != IP4_NBR_REACHABLE)
		return "incomplete";
	return (n->flags & IP4_NBR_F_STATIC) ? "static" : "reachable";
}

static void nbr_json(struct nbr_show *ns, const struct ip4_nbr *n)
{
	char a[16], mac[18];
	uint64_t since = n->state == IP4_NBR_REACHABLE ? n->updated_ns : n->created_ns;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "address", ip4_format_addr(a, n->ip));
	cJSON_AddStringToObject(o, "interface", eth_if_name(n->if_index));
	cJSON_AddStringToObject(o, "mac", n->state == IP4_NBR_REACHABLE ? eth_format_mac(mac, n->mac) : "");
	cJSON_AddStringToObject(o, "state", nbr_state(n));
	cJSON_AddNumberToObject(o, "held", n->n_held);
	cJSON_AddNumberToObject(o, "age_ns", (double)(ns->now - since));
	cJSON_AddItemToArray(ns->list, o);
}

static int nbr_row(const struct ip4_nbr *n, void *ctx)
{
	struct nbr_show *ns = ctx;
	if (ns->list) {
		nbr_json(ns, n);
		return 0;
	}
	char a[16], mac[18];
	cli_table_cell(ns->t, "%s", ip4_format_addr(a, n->ip));
	cli_table_cell(ns->t, "%s", eth_if_name(n->if_index));
	cli_table_cell(ns->t, "%s", n->state == IP4_NBR_REACHABLE ? eth_format_mac(mac, n->mac) : "-");
	cli_table_cell(ns->t, "%s", nbr_state(n));
	cli_table_cell(ns->t, "%u", n->n_held);
	uint64_t since = n->state == IP4_NBR_REACHABLE ? n->updated_ns : n->created_ns;
	cli_table_cell(ns->t, "%.1f", (double)(ns->now - since) / 1e9);
	return 0;
}

/*
 * sluice> show ip neighbors
 * Address   Interface  MAC                State      Held  Age (s)
 * 10.1.0.2  a          6e:1c:9a:20:3b:01  reachable     0     12.4
 * 10.2.0.9  b          -                  incomplete    2      0.3
 * 10.2.0.7  b          02:00:00:00:00:07  static        0    600.0
 * sluice> show ip neighbors json
 * {"neighbors": [{"address": "10.2.0.7", "interface": "b", "mac": "02:00:00:00:00:07", "state": "static",
 *   "held": 0, "age_ns": 600000000000}, ...]}
 */
static int show_neighbors(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	static const struct cli_table_col cols[] = {
		{ "Address", false }, { "Interface", false }, { "MAC", false },
		{ "State", false },   { "Held", true },       { "Age (s)", true },
	};
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	struct nbr_show ns = { .t = json ? NULL : cli_table_create(cols, ARRAY_LEN(cols)),
			       .list = json ? cJSON_AddArrayToObject(root, "neighbors") : NULL,
			       .now = ip4_nbr_now() };
	if (!ns.t && !ns.list) {
		cJSON_Delete(root);
		return cli_fail(s, -ENOMEM, "out of memory");
	}
	ip4_nbr_walk(nbr_row, &ns);
	if (json)
		cli_json_print(s, root);
	else
		cli_table_print(s, ns.t);
	return 0;
}

/*
 * sluice> set ip neighbor b 10.2.0.7 02:00:00:00:00:07 static
 * b: 10.2.0.7 is at 02:00:00:00:00:07 (static)
 */
static int set_neighbor(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL, *ip = NULL, *macw = NULL;
	bool is_static = false;
	const struct cli_arg args[] = {
		{ CLI_ARG_WORD, "NAME", &name, 0, 0 },
		{ CLI_ARG_WORD, "ADDR", &ip, 0, 0 },
		{ CLI_ARG_WORD, "MAC", &macw, 0, 0 },
		{ CLI_ARG_FLAG, "static", &is_static, 0, 0 },
	};
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	struct device *d = dev_by_name(name);
	if (!d)
		return cli_fail(s, -EINVAL, "no interface %s", name);
	if (strchr(ip, ':'))
		return ip6_cli_set_neighbor(s, d, ip, macw, is_static);
	uint32_t addr;
	uint8_t mac[6];
	if (!parse_addr(ip, &addr))
		return cli_fail(s, -EINVAL, "'%s' is not A.B.C.D", ip);
	if (conf_mac_parse(macw, mac) || (mac[0] & 1))
		return cli_fail(s, -EINVAL, "'%s' is not a unicast MAC (aa:bb:cc:dd:ee:ff)", macw);
	char err[128] = "";
	graph_cli_barrier_sync(s);
	rc = ip4_nbr_set(d->index, addr, mac, is_static, err, sizeof(err));
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s", err);
	char m[18];
	cli_printf(s, "%s: %s is at %s (%s)", d->name, ip, eth_format_mac(m, mac), is_static ? "static" : "dynamic");
	return 0;
}

/*
 * sluice> clear ip neighbors
 * 3 dynamic neighbour(s) cleared
 */
static int clear_neighbors(struct cli_session *s, int argc, char **argv)
{
	(void)argv;
	if (argc)
		return cli_fail(s, -EINVAL, "no arguments");
	graph_cli_barrier_sync(s);
	uint32_t n = ip4_nbr_clear_dynamic();
	graph_cli_barrier_release(s);
	cli_printf(s, "%u dynamic neighbour(s) cleared", n);
	return 0;
}

/*
 * sluice> set ip neighbor-config age 300
 * reachable neighbours age out after 300 s (re-ARP in the last 3 s)
 */
static int neighbor_config(struct cli_session *s, int argc, char **argv)
{
	uint32_t secs = UINT32_MAX;
	const struct cli_arg args[] = { { CLI_ARG_KEY_U32, "age", &secs, 0, 86400 } };
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	if (secs == UINT32_MAX)
		return cli_fail(s, -EINVAL, "expected age SECONDS (0: never)");
	graph_cli_barrier_sync(s);
	ip4_nbr_reachable_timeout_ns = (uint64_t)secs * 1000000000ull;
	graph_cli_barrier_release(s);
	if (secs)
		cli_printf(s, "reachable neighbours age out after %u s (re-ARP in the last %.0f s)", secs,
			   (double)(IP4_NBR_PROBES * ip4_nbr_request_interval_ns) / 1e9);
	else
		cli_printf(s, "reachable neighbours do not age");
	return 0;
}

/* ---- show ip interface ---- */

static cJSON *ip_interfaces_json(void)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(root, "interfaces");
	struct device *d;
	DEV_FOREACH(d)
	{
		const struct ip4_interface *ifc = &ip4_interfaces[d->index];
		char mac[18], a[16], p[24];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", d->name);
		cJSON_AddNumberToObject(o, "index", d->index);
		cJSON_AddStringToObject(o, "mac", eth_format_mac(mac, d->mac));
		cJSON_AddNumberToObject(o, "mtu", d->mtu);
		cJSON *addrs = cJSON_AddArrayToObject(o, "addresses");
		for (uint32_t i = 0; i < ifc->n_addrs; i++) {
			snprintf(p, sizeof(p), "%s/%u", ip4_format_addr(a, ifc->addrs[i].addr), ifc->addrs[i].plen);
			cJSON_AddItemToArray(addrs, cJSON_CreateString(p));
		}
		cJSON_AddItemToArray(list, o);
	}
	return root;
}

/*
 * sluice> show ip interface
 * Interface  MAC                MTU   Addresses
 * a          02:fe:3a:91:0c:7e  1500  10.1.0.1/24
 * b          02:fe:55:02:e1:9d  1500  10.2.0.1/24 10.2.1.1/24
 * sluice> show ip interface json
 * {"interfaces": [{"name": "b", "index": 1, "mac": "02:fe:55:02:e1:9d", "mtu": 1500,
 *   "addresses": ["10.2.0.1/24", "10.2.1.1/24"]}, ...]}
 */
static int show_ip_interface(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	if (json) {
		cli_json_print(s, ip_interfaces_json());
		return 0;
	}
	static const struct cli_table_col cols[] = {
		{ "Interface", false }, { "MAC", false }, { "MTU", true }, { "Addresses", false },
	};
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	if (!t)
		return cli_fail(s, -ENOMEM, "out of memory");
	struct device *d;
	DEV_FOREACH(d)
	{
		char mac[18], list[IP4_IF_MAX_ADDRS * 20] = "";
		size_t used = 0;
		const struct ip4_interface *ifc = &ip4_interfaces[d->index];
		for (uint32_t i = 0; i < ifc->n_addrs; i++) {
			char a[16];
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s/%u", i ? " " : "",
						 ip4_format_addr(a, ifc->addrs[i].addr), ifc->addrs[i].plen);
		}
		cli_table_cell(t, "%s", d->name);
		cli_table_cell(t, "%s", eth_format_mac(mac, d->mac));
		cli_table_cell(t, "%u", d->mtu);
		cli_table_cell(t, "%s", ifc->n_addrs ? list : "-");
	}
	cli_table_print(s, t);
	return 0;
}

/* ---- registration ---- */

CLI_COMMAND(set_address_cmd, "set interface ip address", "set interface ip address NAME A.B.C.D/L|X:X::X:X/L",
	    "Add an IPv4 address (with its local /32 and connected routes) or an IPv6 one", set_address)
CLI_COMMAND(del_address_cmd, "set interface ip address del", "set interface ip address del NAME A.B.C.D/L|X:X::X:X/L",
	    "Remove an IPv4 or IPv6 address, its routes and its neighbours", del_address)
CLI_COMMAND(show_neighbors_cmd, "show ip neighbors", "show ip neighbors [json]", "The ARP neighbour table", show_neighbors)
CLI_COMMAND(set_neighbor_cmd, "set ip neighbor", "set ip neighbor NAME A.B.C.D|X:X::X:X MAC [static]",
	    "Add or replace a neighbour (static: never ages, ARP does not change it)", set_neighbor)
CLI_COMMAND(clear_neighbors_cmd, "clear ip neighbors", "clear ip neighbors",
	    "Forget every dynamic neighbour (static ones stay)", clear_neighbors)
CLI_COMMAND(neighbor_config_cmd, "set ip neighbor-config", "set ip neighbor-config age SECONDS",
	    "How long a learnt neighbour stays reachable without ARP (0: forever)", neighbor_config)
CLI_COMMAND(show_ip_interface_cmd, "show ip interface", "show ip interface [json]", "Interfaces' MACs and IPv4 addresses",
	    show_ip_interface)
/* VPP's names (docs/vpp-cli.md). `show interface address` here is the
 * IPv4 addresses (`show ip6 interface` has the IPv6 ones). VPP takes
 * `address` or `addr` whole; registered both, each is the other's
 * neighbour, so that unique-prefix matching takes neither "a", "ad" nor
 * "add": those still name interfaces, as in VPP. VPP's meaning wins over
 * an interface named "addr", "addre", "addres" or "address". */
CLI_ALIAS(show_interface_address_alias, "show interface address", "show interface address [json]",
	  "show ip interface", NULL)
CLI_ALIAS(show_interface_addr_alias, "show interface addr", "show interface addr [json]", "show ip interface", NULL)
CLI_ALIAS(show_ip4_neighbors_alias, "show ip4 neighbors", "show ip4 neighbors [json]", "show ip neighbors", NULL)

/* ---- running configuration (cli/cli_runcfg.h) ---- */

/* Every interface's IPv4 addresses, primary first (the order they were
 * added in, which replays). Addresses Linux gave a linux-cp port are
 * indistinguishable from the CLI's and are written too (docs/running-config.md). */
static void write_addresses(struct cli_runcfg *rc, struct cli_session *s)
{
	graph_cli_barrier_sync(s); /* the netlink listener changes them under it */
	struct device *d;
	DEV_FOREACH(d)
	{
		if (d->mode == DEV_MODE_LCP)
			continue;
		const struct ip4_interface *ifc = &ip4_interfaces[d->index];
		for (uint32_t i = 0; i < ifc->n_addrs; i++) {
			char a[16], key[DEV_NAME_SIZE + 48], undo[DEV_NAME_SIZE + 80];
			ip4_format_addr(a, ifc->addrs[i].addr);
			snprintf(key, sizeof(key), "ip4 address %s %s/%u", d->name, a, ifc->addrs[i].plen);
			snprintf(undo, sizeof(undo), "set interface ip address del %s %s/%u", d->name, a, ifc->addrs[i].plen);
			cli_runcfg_object(rc, key, undo, "set interface ip address %s %s/%u", d->name, a,
					  ifc->addrs[i].plen);
		}
	}
	graph_cli_barrier_release(s);
}

CLI_RUNCFG_WRITER(ip4_addresses_runcfg, "ip4 addresses", CLI_RUNCFG_ADDRESSES, write_addresses)

/* Static neighbours (dynamic ones are learnt, not configured). No command
 * removes one, so one of startup's that is gone is not written. */
static int nbr_item(const struct ip4_nbr *n, void *ctx)
{
	if (!(n->flags & IP4_NBR_F_STATIC))
		return 0;
	char a[16], m[18], key[DEV_NAME_SIZE + 48];
	ip4_format_addr(a, n->ip);
	snprintf(key, sizeof(key), "ip4 neighbor %s %s", eth_if_name(n->if_index), a);
	cli_runcfg_object(ctx, key, NULL, "set ip neighbor %s %s %s static", eth_if_name(n->if_index), a,
			  eth_format_mac(m, n->mac));
	return 0;
}

static void write_neighbors(struct cli_runcfg *rc, struct cli_session *s)
{
	(void)s;
	uint64_t age_s = ip4_nbr_reachable_timeout_ns / 1000000000ull;
	cli_runcfg_attr(rc, "ip4 neighbor-config", age_s == 300, "set ip neighbor-config age %llu",
			(unsigned long long)age_s);
	ip4_nbr_walk(nbr_item, rc);
}

CLI_RUNCFG_WRITER(ip4_neighbors_runcfg, "ip4 neighbors", CLI_RUNCFG_NEIGHBORS, write_neighbors)
