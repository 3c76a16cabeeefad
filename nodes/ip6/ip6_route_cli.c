/* IPv6 routes on the shared commands, VPP spelling (nodes/ip4/ip4_route_cli.c
 * hands a prefix with a ':' over to these), and `show ip6 fib`:
 *
 *   ip route add X:X::X:X/L via X:X::X:X [NAME]   (NAME: the interface,
 *                                                  else the connected one;
 *                                                  required for a link-local
 *                                                  next hop)
 *   ip route del X:X::X:X/L [via X:X::X:X [NAME]]
 *
 * One path per route (no ECMP yet): adding to a routed prefix replaces its
 * path. Every word is checked before anything changes; changes run under
 * the graph barrier. Part of sluice_ip6_cli.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "cli/cli.h"
#include "drivers/device.h"
#include "graph/graph_cli.h"
#include "nodes/ethernet.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_cli.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_route.h"

#define ROUTE6_USAGE "X:X::X:X/L via X:X::X:X [NAME]"

/* "via NH [NAME]" from argv[0..argc): NULL or what is wrong. */
static const char *parse_via(int argc, char **argv, ip6_addr_a2 *nh, uint32_t *if_index)
{
	*if_index = DEV_INDEX_INVALID;
	if (argc < 2 || argc > 3 || strcmp(argv[0], "via"))
		return "expected via X:X::X:X [NAME]";
	if (inet_pton(AF_INET6, argv[1], nh) != 1)
		return "the next hop is not X:X::X:X";
	if (argc == 3) {
		const struct device *d = dev_by_name(argv[2]);
		if (!d)
			return "no such interface";
		*if_index = d->index;
	}
	if (ip6_addr_is_link_local(nh) && *if_index == DEV_INDEX_INVALID)
		return "a link-local next hop needs its interface";
	return NULL;
}

/*
 * sluice> ip route add 2001:db8:9::/48 via 2001:db8:2::2
 * route 2001:db8:9::/48 via 2001:db8:2::2 b
 */
int ip6_cli_route_add(struct cli_session *s, int argc, char **argv)
{
	struct in6_addr prefix, nh;
	uint8_t plen;
	uint32_t if_index;
	if (argc < 1 || !ip6_parse_prefix(argv[0], &prefix, &plen, false))
		return cli_fail(s, -EINVAL, "expected " ROUTE6_USAGE);
	const char *bad = parse_via(argc - 1, argv + 1, &nh, &if_index);
	if (bad)
		return cli_fail(s, -EINVAL, "%s; expected " ROUTE6_USAGE, bad);
	char err[128] = "";
	graph_cli_barrier_sync(s);
	int rc = ip6_route_add(&prefix, plen, &nh, if_index, err, sizeof(err));
	uint32_t adj = 0;
	if (!rc)
		ip6_fib_get(ip6_fib_main, &prefix, plen, &adj);
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s", err);
	cli_printf(s, "route %s via %s %s", argv[0], argv[2], eth_if_name(ip6_adj_get(adj)->if_index));
	return 0;
}

/*
 * sluice> ip route del 2001:db8:9::/48
 * route 2001:db8:9::/48 deleted
 */
int ip6_cli_route_del(struct cli_session *s, int argc, char **argv)
{
	struct in6_addr prefix, nh;
	uint8_t plen;
	uint32_t if_index;
	if (argc < 1 || !ip6_parse_prefix(argv[0], &prefix, &plen, false) ||
	    (argc > 1 && parse_via(argc - 1, argv + 1, &nh, &if_index)))
		return cli_fail(s, -EINVAL, "expected X:X::X:X/L [via X:X::X:X [NAME]]");
	char err[128] = "";
	graph_cli_barrier_sync(s);
	int rc = ip6_route_del(&prefix, plen, err, sizeof(err));
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s", err);
	cli_printf(s, "route %s deleted", argv[0]);
	return 0;
}

/* ---- show ip6 fib ---- */

struct fib6_show {
	struct cli_table *t;
	cJSON *list;
};

static int fib6_row(const struct ip6_route *r, void *ctx)
{
	struct fib6_show *fs = ctx;
	const struct ip6_adj *a = ip6_adj_get(r->result);
	char p[INET6_ADDRSTRLEN], nh[INET6_ADDRSTRLEN], pfx[INET6_ADDRSTRLEN + 4];
	snprintf(pfx, sizeof(pfx), "%s/%u", ip6_format_addr(p, &r->prefix), r->len);
	bool via = a->kind == IP6_ADJ_REWRITE;
	const char *ifn = a->kind == IP6_ADJ_DROP ? "" : eth_if_name(a->if_index);
	const char *res = !via ? "" : a->rewrite_len ? "resolved" : "unresolved";
	if (fs->list) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "prefix", pfx);
		cJSON_AddNumberToObject(o, "adjacency", r->result);
		cJSON_AddStringToObject(o, "kind", ip6_adj_kind_name(a->kind));
		cJSON_AddStringToObject(o, "next_hop", via ? ip6_format_addr(nh, &a->next_hop) : "");
		cJSON_AddStringToObject(o, "interface", ifn);
		cJSON_AddStringToObject(o, "rewrite", res);
		cJSON_AddItemToArray(fs->list, o);
		return 0;
	}
	cli_table_cell(fs->t, "%s", pfx);
	cli_table_cell(fs->t, "%u", r->result);
	cli_table_cell(fs->t, "%s", ip6_adj_kind_name(a->kind));
	cli_table_cell(fs->t, "%s", via ? ip6_format_addr(nh, &a->next_hop) : "-");
	cli_table_cell(fs->t, "%s", ifn[0] ? ifn : "-");
	cli_table_cell(fs->t, "%s", res[0] ? res : "-");
	return 0;
}

/* The route for the word w: an exact prefix, or an address's longest
 * match (found by lookup, then its length by exact gets). */
static int one_route(const char *w, struct ip6_route *r)
{
	uint8_t plen;
	bool had_plen = strchr(w, '/') != NULL;
	if (!ip6_parse_prefix(w, &r->prefix, &plen, true))
		return -EINVAL;
	if (had_plen) {
		r->len = plen;
		for (uint32_t i = plen; i < 128; i++)
			r->prefix.s6_addr[i / 8] &= (uint8_t)~(0x80u >> (i % 8));
		return ip6_fib_get(ip6_fib_main, &r->prefix, plen, &r->result);
	}
	uint32_t want = ip6_fib_lookup(ip6_fib_main, &r->prefix);
	for (int len = 128; len >= 0; len--) {
		struct in6_addr p = r->prefix;
		for (uint32_t i = (uint32_t)len; i < 128; i++)
			p.s6_addr[i / 8] &= (uint8_t)~(0x80u >> (i % 8));
		uint32_t got;
		if (ip6_fib_get(ip6_fib_main, &p, (uint8_t)len, &got) == 0 && got == want) {
			*r = (struct ip6_route){ .prefix = p, .len = (uint8_t)len, .result = got };
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * sluice> show ip6 fib
 * Prefix               Adjacency  Kind     Next hop       Interface  Rewrite
 * 2001:db8:1::/64              2  glean    -              a          -
 * 2001:db8:1::1/128            1  local    -              a          -
 * 2001:db8:9::/48              5  rewrite  2001:db8:2::2  b          resolved
 * sluice> show ip6 fib 2001:db8:9::1 json
 * {"routes": [{"prefix": "2001:db8:9::/48", "adjacency": 5, "kind": "rewrite",
 *   "next_hop": "2001:db8:2::2", "interface": "b", "rewrite": "resolved"}]}
 */
static int show_fib6(struct cli_session *s, int argc, char **argv)
{
	bool json = cli_take_flag(&argc, argv, "json");
	struct in6_addr probe;
	uint8_t probe_len;
	if (argc > 1 || (argc == 1 && !ip6_parse_prefix(argv[0], &probe, &probe_len, true)))
		return cli_fail(s, -EINVAL, "expected [X:X::X:X | X:X::X:X/L] [json]");
	static const struct cli_table_col cols[] = {
		{ "Prefix", false },	{ "Adjacency", true }, { "Kind", false },
		{ "Next hop", false }, { "Interface", false }, { "Rewrite", false },
	};
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	struct fib6_show fs = { .t = json ? NULL : cli_table_create(cols, ARRAY_LEN(cols)),
				.list = json ? cJSON_AddArrayToObject(root, "routes") : NULL };
	if (!fs.t && !fs.list) {
		cJSON_Delete(root);
		return cli_fail(s, -ENOMEM, "out of memory");
	}
	int rc = 0;
	graph_cli_barrier_sync(s);
	if (ip6_fib_main && argc == 1) {
		struct ip6_route r;
		rc = one_route(argv[0], &r);
		if (!rc)
			fib6_row(&r, &fs);
	} else if (ip6_fib_main) {
		rc = ip6_fib_walk(ip6_fib_main, fib6_row, &fs);
	} else if (argc == 1) {
		rc = -ENOENT;
	}
	graph_cli_barrier_release(s);
	if (rc) {
		cli_table_free(fs.t);
		cJSON_Delete(root);
		return cli_fail(s, rc, rc == -ENOENT ? "no route for %s" : "cannot walk the FIB", argc ? argv[0] : "");
	}
	if (json)
		cli_json_print(s, root);
	else
		cli_table_print(s, fs.t);
	return 0;
}

CLI_COMMAND(show_ip6_fib_cmd, "show ip6 fib", "show ip6 fib [X:X::X:X | X:X::X:X/L] [json]",
	    "IPv6 routes and their adjacencies (an address: its longest match)", show_fib6)
