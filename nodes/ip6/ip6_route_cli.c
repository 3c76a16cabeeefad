/* IPv6 routes on the shared commands, VPP spelling (nodes/ip4/ip4_route_cli.c
 * hands a prefix with a ':' over to these), and `show ip6 fib`:
 *
 *   ip route add X:X::X:X/L via X:X::X:X [NAME]   (NAME: the interface,
 *                                                  else the connected one;
 *                                                  required for a link-local
 *                                                  next hop)
 *   ip route del X:X::X:X/L [via X:X::X:X [NAME]]
 *
 *   ip route add X:X::X:X/L via A [NAME] [weight N] via B [NAME] ...  ECMP,
 *                                                  as IPv4's syntax
 *   ip route add X:X::X:X/L via NAME               a device route
 *   ip route add X:X::X:X/L blackhole|unreachable|prohibit
 *                                                  a route that refuses
 *                                                  (ip6-lookup: dropped,
 *                                                  ICMPv6 code 0, code 1),
 *                                                  as IPv4's; it replaces
 *                                                  the CLI's paths
 *
 * As IPv4's, adding to a prefix the CLI routes adds paths; `del` removes
 * the CLI's whole route (a learnt route of the same prefix comes back). Every word is checked before anything changes; changes run under
 * the graph barrier. Part of sluice_ip6_cli.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "drivers/device.h"
#include "graph/graph_cli.h"
#include "nodes/ethernet.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_cli.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_lb.h"
#include "nodes/ip6/ip6_route.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip6/ip6_route_private.h"

#define ROUTE6_USAGE                                                                                        \
	"X:X::X:X/L via X:X::X:X [NAME] [weight N] [via ...] | X:X::X:X/L via NAME | "                        \
	"X:X::X:X/L blackhole|unreachable|prohibit"

/* "blackhole" (or "drop"), "unreachable", "prohibit": the kind of a route
 * that refuses, as IPv4's words; IP6_ADJ_N_KIND for any other word. */
static uint8_t reject_word(const char *w)
{
	if (!strcmp(w, "blackhole") || !strcmp(w, "drop"))
		return IP6_ADJ_BLACKHOLE;
	if (!strcmp(w, "unreachable"))
		return IP6_ADJ_UNREACH;
	return !strcmp(w, "prohibit") ? IP6_ADJ_PROHIBIT : IP6_ADJ_N_KIND;
}

/* One "via X:X::X:X [NAME] [weight N]" or "via NAME [weight N]" from
 * argv[*i] on; *i moves past it. NULL or what is wrong. */
static const char *parse_one_path(int argc, char **argv, int *i, struct ip6_route_path *q)
{
	const struct device *d;
	*q = (struct ip6_route_path){ .kind = IP6_ADJ_REWRITE, .if_index = DEV_INDEX_INVALID };
	if (strcmp(argv[*i], "via") || ++*i == argc)
		return "expected via X:X::X:X or via NAME";
	if (inet_pton(AF_INET6, argv[*i], &q->next_hop) == 1) {
		if (++*i < argc && strcmp(argv[*i], "via") && strcmp(argv[*i], "weight")) {
			if (!(d = dev_by_name(argv[*i])))
				return "no such interface";
			q->if_index = d->index;
			++*i;
		}
		if (ip6_addr_is_link_local(&q->next_hop) && q->if_index == DEV_INDEX_INVALID)
			return "a link-local next hop needs its interface";
	} else if ((d = dev_by_name(argv[*i]))) {
		q->kind = IP6_ADJ_GLEAN;
		q->if_index = d->index;
		++*i;
	} else {
		return "via what: neither X:X::X:X nor an interface";
	}
	if (*i < argc && !strcmp(argv[*i], "weight")) {
		char *end;
		unsigned long w = *i + 1 < argc ? strtoul(argv[*i + 1], &end, 10) : 0;
		if (!w || *end || w > 256)
			return "weight is 1..256";
		q->weight = (uint16_t)w;
		*i += 2;
	}
	return NULL;
}

/* Every path of argv[0..argc) into p; NULL or what is wrong. */
static const char *parse_paths(int argc, char **argv, struct ip6_route_path *p, uint32_t *n)
{
	*n = 0;
	if (argc == 0)
		return "no path";
	for (int i = 0; i < argc; (*n)++) {
		if (*n == IP6_ROUTE_MAX_PATHS)
			return "too many paths";
		const char *bad = parse_one_path(argc, argv, &i, &p[*n]);
		if (bad)
			return bad;
	}
	return NULL;
}

/* "via 2001:db8:1::2 a via 2001:db8:2::2 b weight 3" into buf. */
static const char *paths_text(char *buf, size_t len, const struct ip6_route_path *p, uint32_t n)
{
	size_t used = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < n && used < len; i++) {
		char a[INET6_ADDRSTRLEN];
		if (ip6_adj_kind_rejects(p[i].kind))
			used += (size_t)snprintf(buf + used, len - used, "%s", ip6_adj_kind_name(p[i].kind));
		else if (p[i].kind == IP6_ADJ_REWRITE)
			used += (size_t)snprintf(buf + used, len - used, "%svia %s %s", i ? " " : "",
						 ip6_format_addr(a, &p[i].next_hop), eth_if_name(p[i].if_index));
		else
			used += (size_t)snprintf(buf + used, len - used, "%svia %s", i ? " " : "", eth_if_name(p[i].if_index));
		if (p[i].weight > 1 && used < len)
			used += (size_t)snprintf(buf + used, len - used, " weight %u", p[i].weight);
	}
	return buf;
}

/*
 * sluice> ip route add 2001:db8:9::/48 via 2001:db8:2::2
 * route 2001:db8:9::/48 via 2001:db8:2::2 b
 * sluice> ip route add 2001:db8:9::/48 via 2001:db8:1::2 a via 2001:db8:2::2 b weight 3
 * route 2001:db8:9::/48 via 2001:db8:2::2 b via 2001:db8:1::2 a weight 3
 * (as IPv4's: adding to a prefix the CLI routes adds the paths, a path
 * already there takes the new weight; several paths: ECMP by flow hash)
 */
int ip6_cli_route_add(struct cli_session *s, int argc, char **argv)
{
	struct in6_addr prefix;
	uint8_t plen;
	struct ip6_route_path p[IP6_ROUTE_MAX_PATHS];
	uint32_t n;
	if (argc < 1 || !ip6_parse_prefix(argv[0], &prefix, &plen, false))
		return cli_fail(s, -EINVAL, "expected " ROUTE6_USAGE);
	uint8_t reject = argc == 2 ? reject_word(argv[1]) : IP6_ADJ_N_KIND;
	const char *bad = NULL;
	if (reject != IP6_ADJ_N_KIND) {
		p[0] = (struct ip6_route_path){ .kind = reject, .if_index = DEV_INDEX_INVALID };
		n = 1;
	} else {
		bad = parse_paths(argc - 1, argv + 1, p, &n);
	}
	if (bad)
		return cli_fail(s, -EINVAL, "%s; expected " ROUTE6_USAGE, bad);
	char err[128] = "", text[512];
	graph_cli_barrier_sync(s);
	int rc = reject != IP6_ADJ_N_KIND ? ip6_route_src_set(IP6_SRC_CLI, &prefix, plen, p, 1, err, sizeof(err))
					  : ip6_route_src_path_add(IP6_SRC_CLI, &prefix, plen, p, n, err, sizeof(err));
	int src = rc ? -1 : ip6_route_src_best(&prefix, plen, p, IP6_ROUTE_MAX_PATHS, &n);
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s", err);
	if (src != IP6_SRC_CLI) /* cannot be: the CLI's route is the best a source has */
		n = 0;
	cli_printf(s, "route %s %s", argv[0], paths_text(text, sizeof(text), p, MIN(n, IP6_ROUTE_MAX_PATHS)));
	return 0;
}

/*
 * sluice> ip route del 2001:db8:9::/48
 * route 2001:db8:9::/48 deleted
 */
int ip6_cli_route_del(struct cli_session *s, int argc, char **argv)
{
	struct in6_addr prefix;
	struct ip6_route_path p;
	uint8_t plen;
	int i = 1;
	if (argc < 1 || !ip6_parse_prefix(argv[0], &prefix, &plen, false) ||
	    (argc > 1 && (parse_one_path(argc, argv, &i, &p) || i != argc)))
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

/* Who made the route: "connected" (an address's), "cli", "linux/bgp",
 * "-" (a neighbour's host route); *proto: the protocol's name or "". */
static const char *route_source(char *buf, size_t n, const struct ip6_route *r, const char **proto)
{
	struct ip6_route_path p;
	uint32_t k;
	int src = ip6_route_src_best(&r->prefix, r->len, &p, 1, &k);
	*proto = src == IP6_SRC_LINUX ? ip4_route_protocol_name(p.protocol) : "";
	if (src < 0)
		snprintf(buf, n, "%s", ip6_route_is_address(&r->prefix, r->len) ? "connected" : "-");
	else if (src == IP6_SRC_LINUX)
		snprintf(buf, n, "linux/%s", *proto);
	else
		snprintf(buf, n, "%s", ip6_route_src_name((enum ip6_route_src)src));
	return buf;
}

/* The route's paths: its own adjacency, or its load balance's. */
static uint32_t route_paths(const struct ip6_route *r, struct fib_lb_path *lp)
{
	uint32_t n = ip6_lb_paths(r->result, lp, IP6_LB_MAX_PATHS);
	if (n)
		return MIN(n, IP6_LB_MAX_PATHS);
	lp[0] = (struct fib_lb_path){ r->result, 1 };
	return 1;
}

static cJSON *path_fields(cJSON *o, const struct fib_lb_path *lp)
{
	const struct ip6_adj *a = ip6_adj_get(lp->adj_index);
	char nh[INET6_ADDRSTRLEN];
	bool via = a->kind == IP6_ADJ_REWRITE;
	cJSON_AddNumberToObject(o, "adjacency", lp->adj_index);
	cJSON_AddStringToObject(o, "kind", ip6_adj_kind_name(a->kind));
	cJSON_AddStringToObject(o, "next_hop", via ? ip6_format_addr(nh, &a->next_hop) : "");
	cJSON_AddStringToObject(o, "interface", ip6_adj_kind_rejects(a->kind) ? "" : eth_if_name(a->if_index));
	cJSON_AddStringToObject(o, "rewrite", !via ? "" : a->rewrite_len ? "resolved" : "unresolved");
	cJSON_AddNumberToObject(o, "weight", lp->weight ? lp->weight : 1);
	return o;
}

static cJSON *route_json(const struct ip6_route *r, const char *src, const char *proto, const struct fib_lb_path *lp,
			 uint32_t n)
{
	char p[INET6_ADDRSTRLEN], pfx[INET6_ADDRSTRLEN + 4];
	snprintf(pfx, sizeof(pfx), "%s/%u", ip6_format_addr(p, &r->prefix), r->len);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "prefix", pfx);
	path_fields(o, &lp[0]); /* the first path's fields at the top, as one-path routes read */
	cJSON_AddStringToObject(o, "source", src);
	cJSON_AddStringToObject(o, "protocol", proto);
	cJSON *paths = cJSON_AddArrayToObject(o, "paths");
	for (uint32_t i = 0; i < n; i++)
		cJSON_AddItemToArray(paths, path_fields(cJSON_CreateObject(), &lp[i]));
	const struct ip6_adj *ra = ip6_adj_get(r->result);
	if (ra->kind == IP6_ADJ_LB) {
		const struct ip6_lb *lb = &ip6_lbs[ra->if_index];
		cJSON *l = cJSON_AddObjectToObject(o, "load_balance");
		cJSON_AddNumberToObject(l, "adjacency", r->result);
		cJSON *b = cJSON_AddArrayToObject(l, "buckets");
		for (uint32_t k = 0; k <= lb->mask; k++)
			cJSON_AddItemToArray(b, cJSON_CreateNumber(lb->buckets[k]));
	}
	return o;
}

static int fib6_row(const struct ip6_route *r, void *ctx)
{
	struct fib6_show *fs = ctx;
	struct fib_lb_path lp[IP6_LB_MAX_PATHS];
	uint32_t n = route_paths(r, lp);
	char src[32], p[INET6_ADDRSTRLEN], nh[INET6_ADDRSTRLEN];
	const char *proto;
	route_source(src, sizeof(src), r, &proto);
	if (fs->list) {
		cJSON_AddItemToArray(fs->list, route_json(r, src, proto, lp, n));
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) { /* one row per path */
		const struct ip6_adj *a = ip6_adj_get(lp[i].adj_index);
		bool via = a->kind == IP6_ADJ_REWRITE;
		cli_table_cell(fs->t, "%s/%u", ip6_format_addr(p, &r->prefix), r->len);
		cli_table_cell(fs->t, "%u", lp[i].adj_index);
		cli_table_cell(fs->t, "%s", ip6_adj_kind_name(a->kind));
		cli_table_cell(fs->t, "%s", via ? ip6_format_addr(nh, &a->next_hop) : "-");
		cli_table_cell(fs->t, "%s", ip6_adj_kind_rejects(a->kind) ? "-" : eth_if_name(a->if_index));
		cli_table_cell(fs->t, "%u", lp[i].weight ? lp[i].weight : 1);
		cli_table_cell(fs->t, "%s", !via ? "-" : a->rewrite_len ? "resolved" : "unresolved");
		cli_table_cell(fs->t, "%s", src);
	}
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
 * Prefix             Adjacency  Kind     Next hop       Interface  Weight  Rewrite   Source
 * 2001:db8:1::/64            2  glean    -              a               1  -         connected
 * 2001:db8:1::1/128          1  local    -              a               1  -         connected
 * 2001:db8:9::/48            5  rewrite  2001:db8:1::2  a               1  resolved  linux/bgp
 * 2001:db8:9::/48            6  rewrite  2001:db8:2::2  b               1  resolved  linux/bgp
 * (one row per path: 2001:db8:9::/48 is a multipath route. Source:
 * connected (an address's), cli, linux/PROTOCOL (learnt from Linux), "-"
 * for a neighbour's host route. The CLI's route wins over Linux's.)
 * sluice> show ip6 fib 2001:db8:9::1 json
 * {"routes": [{"prefix": "2001:db8:9::/48", "adjacency": 5, "kind": "rewrite",
 *   "next_hop": "2001:db8:1::2", "interface": "a", "rewrite": "resolved", "weight": 1,
 *   "source": "linux/bgp", "protocol": "bgp", "paths": [{...}, {...}],
 *   "load_balance": {"adjacency": 7, "buckets": [5, 6, 5, 6, ...]}}]}
 */
static int show_fib6(struct cli_session *s, int argc, char **argv)
{
	bool json = cli_take_flag(&argc, argv, "json");
	struct in6_addr probe;
	uint8_t probe_len;
	if (argc > 1 || (argc == 1 && !ip6_parse_prefix(argv[0], &probe, &probe_len, true)))
		return cli_fail(s, -EINVAL, "expected [X:X::X:X | X:X::X:X/L] [json]");
	static const struct cli_table_col cols[] = {
		{ "Prefix", false },    { "Adjacency", true }, { "Kind", false },    { "Next hop", false },
		{ "Interface", false }, { "Weight", true },    { "Rewrite", false }, { "Source", false },
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

/* ---- running configuration (cli/cli_runcfg.h) ---- */

/* The CLI's routes (not Linux's, not an address's), sorted by prefix so
 * that the same table writes the same lines whatever the store's order. */
struct route6_line {
	struct in6_addr prefix;
	uint8_t plen;
	char *paths;
};

struct route6_lines {
	struct route6_line *v;
	uint32_t n, cap;
};

static void route6_collect(const struct in6_addr *prefix, uint8_t plen, const struct ip6_route_path *p, uint32_t n,
			   void *arg)
{
	struct route6_lines *l = arg;
	char text[IP6_ROUTE_MAX_PATHS * 80];
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 32;
		struct route6_line *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return; /* the collection is refused below: an item short */
		l->v = v;
		l->cap = cap;
	}
	char *paths = strdup(paths_text(text, sizeof(text), p, MIN(n, IP6_ROUTE_MAX_PATHS)));
	if (paths)
		l->v[l->n++] = (struct route6_line){ *prefix, plen, paths };
}

static int route6_cmp(const void *a, const void *b)
{
	const struct route6_line *x = a, *y = b;
	int c = memcmp(&x->prefix, &y->prefix, sizeof(x->prefix));
	return c ? c : (int)x->plen - (int)y->plen;
}

static void write_routes6(struct cli_runcfg *rc, struct cli_session *s)
{
	struct route6_lines l = { 0 };
	graph_cli_barrier_sync(s);
	uint32_t n = ip6_route_src_each(IP6_SRC_CLI, route6_collect, &l);
	graph_cli_barrier_release(s);
	if (l.n != n)
		cli_runcfg_fail(rc); /* out of memory: not every route could be read */
	if (l.n) /* l.v is NULL without CLI routes: qsort wants a pointer (UBSan) */
		qsort(l.v, l.n, sizeof(*l.v), route6_cmp);
	for (uint32_t i = 0; i < l.n; i++) {
		char a[INET6_ADDRSTRLEN], key[80], undo[96];
		ip6_format_addr(a, &l.v[i].prefix);
		snprintf(key, sizeof(key), "ip6 route %s/%u", a, l.v[i].plen);
		snprintf(undo, sizeof(undo), "ip route del %s/%u", a, l.v[i].plen);
		cli_runcfg_object(rc, key, undo, "ip route add %s/%u %s", a, l.v[i].plen, l.v[i].paths);
		free(l.v[i].paths);
	}
	free(l.v);
}

CLI_RUNCFG_WRITER(ip6_routes_runcfg, "ip6 routes", CLI_RUNCFG_ROUTES, write_routes6)
