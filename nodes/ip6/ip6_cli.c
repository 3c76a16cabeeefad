/* IPv6 CLI commands, VPP spelling: interface addresses (through the shared
 * `set interface ip address`, ip6_cli.h), `enable ip6 interface`, static
 * neighbours (through `set ip neighbor`), and the interface and neighbour
 * views.
 *
 * Every command checks all of its words before it changes anything, so a
 * bad command prints usage and leaves the state as it was. Changes run
 * under the graph barrier (the datapath reads the interface addresses
 * without locks).
 *
 * Built as its own library (sluice_ip6_cli) that the daemon links whole, so
 * that nodes/ does not depend on cli/.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "base/conf.h"
#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "drivers/device.h"
#include "graph/graph_cli.h"
#include "nodes/ethernet.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_cli.h"
#include "nodes/ip6/ip6_dad.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"

/* ---- addresses ---- */

/*
 * sluice> set interface ip address a 2001:db8:1::1/64
 * a: added 2001:db8:1::1/64
 * sluice> set interface ip address del a 2001:db8:1::1/64
 * a: deleted 2001:db8:1::1/64
 */
int ip6_cli_address_change(struct cli_session *s, const struct device *d, const char *pfx, bool add)
{
	struct in6_addr addr;
	uint8_t plen;
	if (!ip6_parse_prefix(pfx, &addr, &plen, false))
		return cli_fail(s, -EINVAL, "'%s' is not X:X::X:X/L", pfx);
	char err[128] = "";
	graph_cli_barrier_sync(s);
	int rc = add ? ip6_if_addr_add(d->index, &addr, plen, err, sizeof(err))
		     : ip6_if_addr_del(d->index, &addr, plen, err, sizeof(err));
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s", err);
	cli_printf(s, "%s: %s %s", d->name, add ? "added" : "deleted", pfx);
	return 0;
}

/*
 * sluice> enable ip6 interface a
 * a: IPv6 enabled, link-local fe80::ff:fe00:a
 */
static int enable_ip6(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "NAME", &name, 0, 0 } };
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	struct device *d = dev_by_name(name);
	if (!d)
		return cli_fail(s, -EINVAL, "no interface %s", name);
	char err[128] = "", ll[INET6_ADDRSTRLEN];
	graph_cli_barrier_sync(s);
	rc = ip6_if_enable(d->index, err, sizeof(err));
	struct in6_addr a = ip6_interfaces[d->index].link_local;
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s", err);
	cli_printf(s, "%s: IPv6 enabled, link-local %s", d->name, ip6_format_addr(ll, &a));
	return 0;
}

/* ---- neighbours ---- */

/*
 * sluice> set ip neighbor b 2001:db8:2::2 02:00:00:00:00:07 static
 * b: 2001:db8:2::2 is at 02:00:00:00:00:07 (static)
 */
int ip6_cli_set_neighbor(struct cli_session *s, const struct device *d, const char *ip, const char *macw,
			 bool is_static)
{
	struct in6_addr addr;
	uint8_t mac[6];
	if (inet_pton(AF_INET6, ip, &addr) != 1 || ip6_addr_is_multicast(&addr) || ip6_addr_is_unspecified(&addr))
		return cli_fail(s, -EINVAL, "'%s' is not a unicast X:X::X:X", ip);
	if (conf_mac_parse(macw, mac) || (mac[0] & 1))
		return cli_fail(s, -EINVAL, "'%s' is not a unicast MAC (aa:bb:cc:dd:ee:ff)", macw);
	char err[128] = "", m[18];
	graph_cli_barrier_sync(s);
	int rc = ip6_nbr_set(d->index, &addr, mac, is_static, err, sizeof(err));
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s", err);
	cli_printf(s, "%s: %s is at %s (%s)", d->name, ip, eth_format_mac(m, mac), is_static ? "static" : "dynamic");
	return 0;
}

struct nbr_show {
	struct cli_table *t;
	cJSON *list; /* `json`: rows go here instead of t */
	uint64_t now;
};

static int nbr_row(const struct ip6_nbr *n, void *ctx)
{
	struct nbr_show *ns = ctx;
	char a[INET6_ADDRSTRLEN], mac[18];
	bool known = n->state != IP6_NBR_INCOMPLETE;
	double age_ns = (double)(ns->now - n->updated_ns);
	if (ns->list) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "address", ip6_format_addr(a, &n->ip));
		cJSON_AddStringToObject(o, "interface", eth_if_name(n->if_index));
		cJSON_AddStringToObject(o, "mac", known ? eth_format_mac(mac, n->mac) : "");
		cJSON_AddStringToObject(o, "state", ip6_nbr_state_name(n));
		cJSON_AddBoolToObject(o, "router", n->is_router);
		cJSON_AddNumberToObject(o, "age_ns", age_ns);
		cJSON_AddNumberToObject(o, "held", n->n_held);
		cJSON_AddNumberToObject(o, "probes", n->n_probes);
		cJSON_AddItemToArray(ns->list, o);
		return 0;
	}
	cli_table_cell(ns->t, "%s", ip6_format_addr(a, &n->ip));
	cli_table_cell(ns->t, "%s", eth_if_name(n->if_index));
	cli_table_cell(ns->t, "%s", known ? eth_format_mac(mac, n->mac) : "-");
	cli_table_cell(ns->t, "%s", ip6_nbr_state_name(n));
	cli_table_cell(ns->t, "%s", n->is_router ? "yes" : "no");
	cli_table_cell(ns->t, "%.1f", age_ns / 1e9);
	cli_table_cell(ns->t, "%u", n->n_held);
	cli_table_cell(ns->t, "%u", n->n_probes);
	return 0;
}

/*
 * sluice> show ip6 neighbors
 * Address                    Interface  MAC                State       Router  Age (s)  Held  NS
 * fe80::4c3a:1ff:fe22:9b01   a          4e:3a:01:22:9b:01  stale       no         12.4     0   0
 * 2001:db8:2::9              b          -                  incomplete  no          1.2     4   2
 * 2001:db8:2::7              b          02:00:00:00:00:07  static      no        600.0     0   0
 * Age: since the entry's last state change or confirmation; Held: packets
 * waiting for its MAC; NS: solicitations sent in this INCOMPLETE or PROBE.
 * sluice> show ip6 neighbors json
 * {"neighbors": [{"address": "2001:db8:2::7", "interface": "b", "mac": "02:00:00:00:00:07",
 *   "state": "static", "router": false, "age_ns": 600000000000, "held": 0, "probes": 0}, ...]}
 */
static int show_neighbors(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	static const struct cli_table_col cols[] = {
		{ "Address", false }, { "Interface", false }, { "MAC", false },
		{ "State", false },   { "Router", false },    { "Age (s)", true },
		{ "Held", true },     { "NS", true },
	};
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	struct nbr_show ns = { .t = json ? NULL : cli_table_create(cols, ARRAY_LEN(cols)),
			       .list = json ? cJSON_AddArrayToObject(root, "neighbors") : NULL,
			       .now = ip6_nbr_now() };
	if (!ns.t && !ns.list) {
		cJSON_Delete(root);
		return cli_fail(s, -ENOMEM, "out of memory");
	}
	ip6_nbr_walk(nbr_row, &ns);
	if (json)
		cli_json_print(s, root);
	else
		cli_table_print(s, ns.t);
	return 0;
}

/*
 * sluice> set ip6 neighbor-config reachable 30000 retrans 1000 delay 5000
 * ReachableTime 15..45 s (base 30000 ms), RetransTimer 1000 ms, DELAY_FIRST_PROBE_TIME 5000 ms
 *
 * RFC 4861 §6.3.2 lets a router's RA set the base ReachableTime and
 * RetransTimer of its hosts; here they are the router's own. A change
 * applies to the timers armed after it.
 */
static int neighbor_config(struct cli_session *s, int argc, char **argv)
{
	uint32_t reach = UINT32_MAX, retrans = UINT32_MAX, delay = UINT32_MAX;
	const struct cli_arg args[] = {
		{ CLI_ARG_KEY_U32, "reachable", &reach, 100, 3600000 },
		{ CLI_ARG_KEY_U32, "retrans", &retrans, 10, 60000 },
		{ CLI_ARG_KEY_U32, "delay", &delay, 10, 60000 },
	};
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	if (reach == UINT32_MAX && retrans == UINT32_MAX && delay == UINT32_MAX)
		return cli_fail(s, -EINVAL, "expected reachable MS, retrans MS or delay MS");
	graph_cli_barrier_sync(s);
	if (reach != UINT32_MAX)
		ip6_nd_timing.reachable_ns = (uint64_t)reach * 1000000ull;
	if (retrans != UINT32_MAX)
		ip6_nd_timing.retrans_ns = (uint64_t)retrans * 1000000ull;
	if (delay != UINT32_MAX)
		ip6_nd_timing.delay_ns = (uint64_t)delay * 1000000ull;
	struct ip6_nd_timing t = ip6_nd_timing;
	graph_cli_barrier_release(s);
	cli_printf(s, "ReachableTime %.1f..%.1f s (base %llu ms), RetransTimer %llu ms, DELAY_FIRST_PROBE_TIME %llu ms",
		   (double)t.reachable_ns / 2e9, (double)t.reachable_ns * 1.5 / 1e9,
		   (unsigned long long)(t.reachable_ns / 1000000), (unsigned long long)(t.retrans_ns / 1000000),
		   (unsigned long long)(t.delay_ns / 1000000));
	return 0;
}

/* ---- show ip6 interface ---- */

/* " (duplicate)" after an address another node advertised (ip6_dad.h). */
static const char *dad_suffix(const struct ip6_interface *ifc, const ip6_addr_a2 *a)
{
	return ip6_dad_state((uint32_t)(ifc - ip6_interfaces), a) == IP6_DAD_DUPLICATE ? " (duplicate)" : "";
}

/* "2001:db8:1::1/64 2001:db8:9::1/48" into buf. */
static const char *addr_list(char *buf, size_t len, const struct ip6_interface *ifc)
{
	size_t used = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < ifc->n_addrs && used < len; i++) {
		char a[INET6_ADDRSTRLEN];
		used += (size_t)snprintf(buf + used, len - used, "%s%s/%u%s", i ? " " : "",
					 ip6_format_addr(a, &ifc->addrs[i].addr), ifc->addrs[i].plen,
					 dad_suffix(ifc, &ifc->addrs[i].addr));
	}
	return buf[0] ? buf : "-";
}

static cJSON *interfaces_json(void)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(root, "interfaces");
	struct device *d;
	DEV_FOREACH(d)
	{
		const struct ip6_interface *ifc = &ip6_interfaces[d->index];
		char mac[18], a[INET6_ADDRSTRLEN], p[INET6_ADDRSTRLEN + 4];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", d->name);
		cJSON_AddNumberToObject(o, "index", d->index);
		cJSON_AddStringToObject(o, "mac", eth_format_mac(mac, d->mac));
		cJSON_AddBoolToObject(o, "enabled", ifc->enabled);
		cJSON_AddStringToObject(o, "link_local", ifc->enabled ? ip6_format_addr(a, &ifc->link_local) : "");
		cJSON *addrs = cJSON_AddArrayToObject(o, "addresses");
		for (uint32_t i = 0; i < ifc->n_addrs; i++) {
			snprintf(p, sizeof(p), "%s/%u", ip6_format_addr(a, &ifc->addrs[i].addr), ifc->addrs[i].plen);
			cJSON_AddItemToArray(addrs, cJSON_CreateString(p));
		}
		cJSON *dup = cJSON_AddArrayToObject(o, "duplicate_addresses");
		for (uint32_t i = 0; i <= ifc->n_addrs && ifc->enabled; i++) {
			const ip6_addr_a2 *x = i ? &ifc->addrs[i - 1].addr : &ifc->link_local;
			if (ip6_dad_state(d->index, x) == IP6_DAD_DUPLICATE)
				cJSON_AddItemToArray(dup, cJSON_CreateString(ip6_format_addr(a, x)));
		}
		cJSON_AddItemToArray(list, o);
	}
	return root;
}

/*
 * sluice> show ip6 interface
 * Interface  MAC                IPv6  Link-local             Addresses
 * a          02:00:00:00:00:0a  on    fe80::ff:fe00:a        2001:db8:1::1/64
 * b          02:00:00:00:00:0b  off   -                      -
 * sluice> show ip6 interface json
 * {"interfaces": [{"name": "a", "index": 0, "mac": "02:00:00:00:00:0a", "enabled": true,
 *   "link_local": "fe80::ff:fe00:a", "addresses": ["2001:db8:1::1/64"]}, ...]}
 */
static int show_interface(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	if (json) {
		cli_json_print(s, interfaces_json());
		return 0;
	}
	static const struct cli_table_col cols[] = {
		{ "Interface", false }, { "MAC", false }, { "IPv6", false }, { "Link-local", false }, { "Addresses", false },
	};
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	if (!t)
		return cli_fail(s, -ENOMEM, "out of memory");
	struct device *d;
	DEV_FOREACH(d)
	{
		const struct ip6_interface *ifc = &ip6_interfaces[d->index];
		char mac[18], ll[INET6_ADDRSTRLEN], list[IP6_IF_MAX_ADDRS * (INET6_ADDRSTRLEN + 5)];
		cli_table_cell(t, "%s", d->name);
		cli_table_cell(t, "%s", eth_format_mac(mac, d->mac));
		cli_table_cell(t, "%s", ifc->enabled ? "on" : "off");
		cli_table_cell(t, "%s%s", ifc->enabled ? ip6_format_addr(ll, &ifc->link_local) : "-",
			       ifc->enabled ? dad_suffix(ifc, &ifc->link_local) : "");
		cli_table_cell(t, "%s", addr_list(list, sizeof(list), ifc));
	}
	cli_table_print(s, t);
	return 0;
}

/* ---- registration ---- */

CLI_COMMAND(enable_ip6_cmd, "enable ip6 interface", "enable ip6 interface NAME",
	    "Enable IPv6 on an interface with its link-local address only (EUI-64 of its MAC)", enable_ip6)
CLI_COMMAND(show_ip6_neighbors_cmd, "show ip6 neighbors", "show ip6 neighbors [json]",
	    "The IPv6 neighbour table (Neighbor Discovery)", show_neighbors)
CLI_COMMAND(ip6_neighbor_config_cmd, "set ip6 neighbor-config",
	    "set ip6 neighbor-config [reachable MS] [retrans MS] [delay MS]",
	    "Neighbor Unreachability Detection's timings (RFC 4861 §10: 30000, 1000, 5000)", neighbor_config)
CLI_COMMAND(show_ip6_interface_cmd, "show ip6 interface", "show ip6 interface [json]",
	    "Interfaces' IPv6 state: enabled, link-local and other addresses", show_interface)

/* ---- running configuration (cli/cli_runcfg.h) ---- */

static void write_if6(struct cli_runcfg *rc, const struct device *d)
{
	const struct ip6_interface *ifc = &ip6_interfaces[d->index];
	char a[INET6_ADDRSTRLEN], key[DEV_NAME_SIZE + 80], undo[DEV_NAME_SIZE + 96];
	snprintf(key, sizeof(key), "ip6 enable %s", d->name);
	cli_runcfg_attr(rc, key, !ifc->enabled, "enable ip6 interface %s", d->name);
	if (ifc->ll_configured) { /* given, not made from the MAC (which is written anyway) */
		ip6_format_addr(a, &ifc->link_local);
		snprintf(key, sizeof(key), "ip6 link-local %s", d->name);
		snprintf(undo, sizeof(undo), "set interface ip address del %s %s/64", d->name, a);
		cli_runcfg_object(rc, key, undo, "set interface ip address %s %s/64", d->name, a);
	}
	for (uint32_t i = 0; i < ifc->n_addrs; i++) {
		ip6_format_addr(a, &ifc->addrs[i].addr);
		snprintf(key, sizeof(key), "ip6 address %s %s/%u", d->name, a, ifc->addrs[i].plen);
		snprintf(undo, sizeof(undo), "set interface ip address del %s %s/%u", d->name, a, ifc->addrs[i].plen);
		cli_runcfg_object(rc, key, undo, "set interface ip address %s %s/%u", d->name, a, ifc->addrs[i].plen);
	}
}

/* IPv6 on each interface: enabled, a given link-local, the addresses in
 * the order they were added (the first is the primary). As IPv4's, those
 * Linux gave a linux-cp port are written too. */
static void write_addresses6(struct cli_runcfg *rc, struct cli_session *s)
{
	graph_cli_barrier_sync(s);
	struct device *d;
	DEV_FOREACH(d)
	{
		if (d->mode != DEV_MODE_LCP)
			write_if6(rc, d);
	}
	graph_cli_barrier_release(s);
}

CLI_RUNCFG_WRITER(ip6_addresses_runcfg, "ip6 addresses", CLI_RUNCFG_ADDRESSES, write_addresses6)

static int nbr6_item(const struct ip6_nbr *n, void *ctx)
{
	if (!(n->flags & IP6_NBR_F_STATIC))
		return 0;
	char a[INET6_ADDRSTRLEN], m[18], key[DEV_NAME_SIZE + 80];
	ip6_format_addr(a, &n->ip);
	snprintf(key, sizeof(key), "ip6 neighbor %s %s", eth_if_name(n->if_index), a);
	cli_runcfg_object(ctx, key, NULL, "set ip neighbor %s %s %s static", eth_if_name(n->if_index), a,
			  eth_format_mac(m, n->mac));
	return 0;
}

/* Static neighbours and Neighbor Unreachability Detection's timings. */
static void write_neighbors6(struct cli_runcfg *rc, struct cli_session *s)
{
	(void)s;
	const struct ip6_nd_timing *t = &ip6_nd_timing;
	unsigned long long reach = t->reachable_ns / 1000000ull, retrans = t->retrans_ns / 1000000ull,
			   delay = t->delay_ns / 1000000ull;
	cli_runcfg_attr(rc, "ip6 neighbor-config", reach == 30000 && retrans == 1000 && delay == 5000,
			"set ip6 neighbor-config reachable %llu retrans %llu delay %llu", reach, retrans, delay);
	ip6_nbr_walk(nbr6_item, rc);
}

CLI_RUNCFG_WRITER(ip6_neighbors_runcfg, "ip6 neighbors", CLI_RUNCFG_NEIGHBORS, write_neighbors6)
