/* IPv4 route commands, VPP spelling: `ip route add|del` with next hops,
 * devices, weights (ECMP) and the route kinds, and `show ip fib`.
 *
 *   ip route add PREFIX PATH [PATH...]
 *     PATH: via A.B.C.D [NAME] [weight N]   a next hop (NAME: the interface,
 *                                           else the connected one)
 *           via NAME [weight N]             a device route: the destination
 *                                           itself is resolved by ARP
 *   ip route add PREFIX blackhole|drop|unreachable|prohibit
 *   ip route del PREFIX [via A.B.C.D [NAME] | via NAME]
 *
 * As VPP's `ip route add`, adding to a prefix the CLI already routes adds
 * the paths (a path already there takes the new weight); a route kind
 * replaces the paths and is replaced by them. `ip route del PREFIX via ...`
 * removes one path (the route goes with its last); without `via`, the whole
 * route. Every word is checked before anything changes; changes run under
 * the graph barrier. startup.conf's `unix { exec FILE }` runs the same
 * commands.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "drivers/device.h"
#include "graph/graph_cli.h"
#include "nodes/ip4/ip4.h"
#include "nodes/ip4/ip4_cli_private.h"
#include "nodes/ip4/ip4_fib.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip6/ip6_cli.h"

#define PATHS_USAGE "PREFIX via A.B.C.D [NAME] [weight N] [via ...] | PREFIX via NAME | PREFIX blackhole|unreachable|prohibit"

/* ---- parsing ---- */

/* A route kind's word, or IP4_ADJ_DROP when w is none. */
static uint8_t kind_word(const char *w)
{
	if (!strcmp(w, "blackhole") || !strcmp(w, "drop"))
		return IP4_ADJ_BLACKHOLE;
	if (!strcmp(w, "unreachable"))
		return IP4_ADJ_UNREACH;
	if (!strcmp(w, "prohibit"))
		return IP4_ADJ_PROHIBIT;
	return IP4_ADJ_DROP;
}

/* One "via A.B.C.D [NAME] [weight N]" or "via NAME [weight N]" from
 * argv[*i] on; *i moves past it. NULL or what is wrong. */
static const char *parse_one_path(int argc, char **argv, int *i, bool weight_ok, struct ip4_route_path *q)
{
	const struct device *d;
	*q = (struct ip4_route_path){ .if_index = DEV_INDEX_INVALID };
	if (strcmp(argv[*i], "via") || ++*i == argc)
		return "expected via A.B.C.D or via NAME";
	if (parse_addr(argv[*i], &q->next_hop)) {
		q->kind = IP4_ADJ_REWRITE;
		if (++*i < argc && strcmp(argv[*i], "via") && strcmp(argv[*i], "weight")) {
			if (!(d = dev_by_name(argv[*i])))
				return "no such interface";
			q->if_index = d->index;
			++*i;
		}
	} else if ((d = dev_by_name(argv[*i]))) {
		q->kind = IP4_ADJ_GLEAN;
		q->if_index = d->index;
		++*i;
	} else {
		return "via what: neither A.B.C.D nor an interface";
	}
	if (*i < argc && !strcmp(argv[*i], "weight")) {
		char *end;
		unsigned long w = *i + 1 < argc ? strtoul(argv[*i + 1], &end, 10) : 0;
		if (!weight_ok || !w || *end || w > 256)
			return "weight is 1..256";
		q->weight = (uint16_t)w;
		*i += 2;
	}
	return NULL;
}

/* The paths of `ip route add PREFIX ...` (argv after the prefix). */
static const char *parse_paths(int argc, char **argv, struct ip4_route_path *p, uint32_t *n)
{
	*n = 0;
	if (argc == 1 && kind_word(argv[0]) != IP4_ADJ_DROP) {
		p[0] = (struct ip4_route_path){ .kind = kind_word(argv[0]) };
		*n = 1;
		return NULL;
	}
	if (argc == 0)
		return "no path";
	for (int i = 0; i < argc; (*n)++) {
		if (*n == IP4_LB_MAX_PATHS)
			return "too many paths";
		const char *bad = parse_one_path(argc, argv, &i, true, &p[*n]);
		if (bad)
			return bad;
	}
	return NULL;
}

/* "via 10.1.0.2 a weight 3 via 10.2.0.2 b" (or a route kind) into buf. */
static const char *paths_text(char *buf, size_t len, const struct ip4_route_path *p, uint32_t n)
{
	size_t used = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < n && used < len; i++) {
		char a[16];
		if (p[i].kind == IP4_ADJ_REWRITE)
			used += (size_t)snprintf(buf + used, len - used, "%svia %s %s", i ? " " : "",
						 ip4_format_addr(a, p[i].next_hop), eth_if_name(p[i].if_index));
		else if (p[i].kind == IP4_ADJ_GLEAN)
			used += (size_t)snprintf(buf + used, len - used, "%svia %s", i ? " " : "", eth_if_name(p[i].if_index));
		else
			used += (size_t)snprintf(buf + used, len - used, "%s", ip4_adj_kind_name(p[i].kind));
		if (p[i].weight > 1 && used < len)
			used += (size_t)snprintf(buf + used, len - used, " weight %u", p[i].weight);
	}
	return buf;
}

/* ---- ip route add / del ---- */

/*
 * sluice> ip route add 0.0.0.0/0 via 10.2.0.254
 * route 0.0.0.0/0 via 10.2.0.254 b
 * sluice> ip route add 10.9.0.0/16 via 10.1.0.2 a via 10.2.0.2 b weight 3
 * route 10.9.0.0/16 via 10.1.0.2 a via 10.2.0.2 b weight 3
 * sluice> ip route add 10.9.0.0/16 via 10.3.0.2 c
 * route 10.9.0.0/16 via 10.1.0.2 a via 10.2.0.2 b weight 3 via 10.3.0.2 c
 * sluice> ip route add 10.5.0.0/24 via a
 * route 10.5.0.0/24 via a
 * sluice> ip route add 10.66.0.0/16 unreachable
 * route 10.66.0.0/16 unreachable
 */
static int route_add(struct cli_session *s, int argc, char **argv)
{
	struct ip4_route_path p[IP4_LB_MAX_PATHS];
	uint32_t prefix, n;
	uint8_t plen;
	if (argc >= 1 && strchr(argv[0], ':'))
		return ip6_cli_route_add(s, argc, argv);
	if (argc < 2)
		return cli_fail(s, -EINVAL, "expected " PATHS_USAGE);
	if (!parse_prefix(argv[0], &prefix, &plen, false, NULL))
		return cli_fail(s, -EINVAL, "'%s' is not A.B.C.D/L", argv[0]);
	const char *bad = parse_paths(argc - 1, argv + 1, p, &n);
	if (bad)
		return cli_fail(s, -EINVAL, "%s; expected " PATHS_USAGE, bad);
	char err[128] = "", text[512];
	graph_cli_barrier_sync(s);
	int rc = ip4_route_src_path_add(IP4_SRC_CLI, prefix, plen, p, n, err, sizeof(err));
	uint32_t m = rc ? 0 : ip4_route_src_paths(ntohl(prefix & ip4_plen_mask(plen)), plen, p, IP4_LB_MAX_PATHS);
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s", err);
	cli_printf(s, "route %s %s", argv[0], paths_text(text, sizeof(text), p, MIN(m, IP4_LB_MAX_PATHS)));
	return 0;
}

/*
 * sluice> ip route del 10.9.0.0/16 via 10.3.0.2
 * route 10.9.0.0/16: path via 10.3.0.2 deleted
 * sluice> ip route del 192.168.0.0/16
 * route 192.168.0.0/16 deleted
 */
static int route_del(struct cli_session *s, int argc, char **argv)
{
	uint32_t prefix;
	uint8_t plen;
	struct ip4_route_path q = { 0 };
	if (argc >= 1 && strchr(argv[0], ':'))
		return ip6_cli_route_del(s, argc, argv);
	if (argc < 1 || !parse_prefix(argv[0], &prefix, &plen, false, NULL))
		return cli_fail(s, -EINVAL, "expected PREFIX [via A.B.C.D [NAME] | via NAME]");
	int i = 1;
	const char *bad = argc > 1 ? parse_one_path(argc, argv, &i, false, &q) : NULL;
	if (bad || i < argc)
		return cli_fail(s, -EINVAL, "%s; expected PREFIX [via A.B.C.D [NAME] | via NAME]", bad ? bad : "extra words");
	char err[128] = "";
	graph_cli_barrier_sync(s);
	int rc = argc > 1 ? ip4_route_src_path_del(IP4_SRC_CLI, prefix, plen, q.next_hop, q.if_index, err, sizeof(err))
			  : ip4_route_del(prefix, plen, err, sizeof(err));
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s", err);
	if (argc > 1)
		cli_printf(s, "route %s: path %s deleted", argv[0], argv[2]);
	else
		cli_printf(s, "route %s deleted", argv[0]);
	return 0;
}

/* ---- show ip fib ----
 *
 * A table of 500,000 routes must not hold the datapath while it is read
 * and formatted (the walk, the sort and 500,000 cJSON objects took
 * hundreds of milliseconds under the barrier). So: the routes' prefixes
 * are copied one prefix length per barrier hold (ip4_fib_routes_of_len),
 * sorted with the barrier released, then captured SHOW_CHUNK routes per
 * hold (each route looked up again: one deleted meanwhile is left out,
 * one changed shows as it is now) into plain views, which are formatted
 * with the barrier released. A route added or deleted during the command
 * may show or not; every route present throughout shows once. */
#define SHOW_CHUNK 256

struct path_view {
	uint32_t adj_index, weight, next_hop, if_index;
	uint8_t kind, rewrite_len;
	uint8_t rewrite[IP4_ADJ_REWRITE_MAX];
	char ifname[DEV_NAME_SIZE];
};

struct route_view {
	struct ip4_route r;
	char src[32];
	const char *protocol; /* a static string; "" unless learnt from Linux */
	uint32_t n_paths;
	struct path_view p[IP4_LB_MAX_PATHS];
	bool lb;
	uint32_t n_buckets;
	uint32_t buckets[IP4_LB_MAX_BUCKETS];
};

/* Who made the route: "connected" (an address's), "cli", "linux/bgp". */
static const char *route_source(char *buf, size_t n, const struct ip4_route *r, const char **protocol)
{
	struct ip4_route_path p;
	int src = ip4_route_src_best(r->prefix, r->len, &p);
	*protocol = src == IP4_SRC_LINUX ? ip4_route_protocol_name(p.protocol) : "";
	if (src < 0 && ip4_route_is_address(r->prefix, r->len))
		snprintf(buf, n, "connected");
	else if (src < 0)
		snprintf(buf, n, "-");
	else if (src == IP4_SRC_LINUX)
		snprintf(buf, n, "linux/%s", *protocol);
	else
		snprintf(buf, n, "%s", ip4_route_src_name((enum ip4_route_src)src));
	return buf;
}

/* r's paths as (adjacency, weight): its own adjacency, or its load
 * balance's paths. */
static uint32_t route_paths(const struct ip4_route *r, struct ip4_lb_path *lp)
{
	uint32_t n = ip4_lb_paths(ip4_fib_main, r->result, lp, IP4_LB_MAX_PATHS);
	if (n)
		return MIN(n, IP4_LB_MAX_PATHS);
	lp[0] = (struct ip4_lb_path){ r->result, 1 };
	return 1;
}

/* Everything the output shows of r, copied (barrier held). */
static void route_capture(struct route_view *v, const struct ip4_route *r)
{
	struct ip4_lb_path lp[IP4_LB_MAX_PATHS];
	v->r = *r;
	route_source(v->src, sizeof(v->src), r, &v->protocol);
	v->n_paths = route_paths(r, lp);
	for (uint32_t i = 0; i < v->n_paths; i++) {
		const struct ip4_adj *a = ip4_adj_get(ip4_fib_main, lp[i].adj_index);
		struct path_view *p = &v->p[i];
		*p = (struct path_view){ .adj_index = lp[i].adj_index, .weight = lp[i].weight ? lp[i].weight : 1,
					 .next_hop = a->next_hop, .if_index = a->if_index, .kind = a->kind,
					 .rewrite_len = MIN(a->rewrite_len, IP4_ADJ_REWRITE_MAX) };
		memcpy(p->rewrite, a->rewrite, p->rewrite_len);
		snprintf(p->ifname, sizeof(p->ifname), "%s",
			 a->kind <= IP4_ADJ_REWRITE && a->kind != IP4_ADJ_DROP ? eth_if_name(a->if_index) : "-");
	}
	const struct ip4_adj *ra = ip4_adj_get(ip4_fib_main, r->result);
	v->lb = ra->kind == IP4_ADJ_LB;
	v->n_buckets = 0;
	if (v->lb) {
		const struct ip4_lb *lb = ip4_lb_of(ip4_fib_main, ra);
		v->n_buckets = MIN(ra->next_hop + 1, IP4_LB_MAX_BUCKETS);
		memcpy(v->buckets, lb->buckets, v->n_buckets * sizeof(v->buckets[0]));
	}
}

static void path_row(struct cli_table *t, const struct route_view *v, const struct path_view *p)
{
	char a[16], nh[16], mac[18];
	cli_table_cell(t, "%s/%u", ip4_format_addr(a, htonl(v->r.prefix)), v->r.len);
	cli_table_cell(t, "%u", p->adj_index);
	cli_table_cell(t, "%s", ip4_adj_kind_name(p->kind));
	cli_table_cell(t, "%s", p->kind == IP4_ADJ_REWRITE ? ip4_format_addr(nh, htonl(p->next_hop)) : "-");
	cli_table_cell(t, "%s", p->ifname);
	cli_table_cell(t, "%u", p->weight);
	if (p->kind != IP4_ADJ_REWRITE)
		cli_table_cell(t, "-");
	else if (!p->rewrite_len)
		cli_table_cell(t, "unresolved");
	else
		cli_table_cell(t, "%s", eth_format_mac(mac, p->rewrite));
	cli_table_cell(t, "%s", v->src);
}

/* One path's fields, added to o. */
static cJSON *path_fields(cJSON *o, const struct path_view *p)
{
	char nh[16], mac[18];
	cJSON_AddNumberToObject(o, "adjacency", p->adj_index);
	cJSON_AddStringToObject(o, "kind", ip4_adj_kind_name(p->kind));
	cJSON_AddStringToObject(o, "next_hop", p->kind == IP4_ADJ_REWRITE ? ip4_format_addr(nh, htonl(p->next_hop)) : "");
	cJSON_AddStringToObject(o, "interface", strcmp(p->ifname, "-") ? p->ifname : "");
	cJSON_AddStringToObject(o, "rewrite", p->kind == IP4_ADJ_REWRITE && p->rewrite_len ? eth_format_mac(mac, p->rewrite) : "");
	cJSON_AddBoolToObject(o, "resolved", p->kind != IP4_ADJ_REWRITE || p->rewrite_len);
	cJSON_AddNumberToObject(o, "weight", p->weight);
	return o;
}

/* A route as JSON: its first path's fields at the top (one-path routes
 * read as before), every path under "paths", a multipath route's load
 * balance and buckets under "load_balance". */
static cJSON *route_json(const struct route_view *v)
{
	char p[24], a[16];
	snprintf(p, sizeof(p), "%s/%u", ip4_format_addr(a, htonl(v->r.prefix)), v->r.len);
	/* The prefix first, then the first path's fields at the top level (as
	 * before multipath: scripts read them there), then every path. */
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "prefix", p);
	path_fields(o, &v->p[0]);
	cJSON_AddStringToObject(o, "source", v->src);
	cJSON_AddStringToObject(o, "protocol", v->protocol);
	cJSON *paths = cJSON_AddArrayToObject(o, "paths");
	for (uint32_t i = 0; i < v->n_paths; i++)
		cJSON_AddItemToArray(paths, path_fields(cJSON_CreateObject(), &v->p[i]));
	if (v->lb) {
		cJSON *lb = cJSON_AddObjectToObject(o, "load_balance");
		cJSON_AddNumberToObject(lb, "adjacency", v->r.result);
		cJSON *b = cJSON_AddArrayToObject(lb, "buckets");
		for (uint32_t k = 0; k < v->n_buckets; k++)
			cJSON_AddItemToArray(b, cJSON_CreateNumber(v->buckets[k]));
	}
	return o;
}

struct fib_show {
	struct cli_table *t;
	cJSON *list; /* `json`: rows go here instead of t */
};

static void route_out(struct fib_show *fs, const struct route_view *v)
{
	if (fs->list) {
		cJSON_AddItemToArray(fs->list, route_json(v));
		return;
	}
	for (uint32_t i = 0; i < v->n_paths; i++)
		path_row(fs->t, v, &v->p[i]);
}

/* `show ip fib P` of a multipath route: its buckets, by path number. */
static void print_buckets(struct cli_session *s, const struct route_view *v)
{
	uint32_t count[IP4_LB_MAX_PATHS] = { 0 };
	char map[IP4_LB_MAX_BUCKETS * 3 + 1];
	size_t used = 0;
	if (!v->lb)
		return;
	for (uint32_t k = 0; k < v->n_buckets; k++)
		for (uint32_t i = 0; i < v->n_paths; i++)
			if (v->buckets[k] == v->p[i].adj_index) {
				count[i]++;
				used += (size_t)snprintf(map + used, sizeof(map) - used, "%s%u", k ? " " : "", i + 1);
			}
	cli_printf(s, "load-balance adjacency %u: %u buckets (flow hash & %u):", v->r.result, v->n_buckets,
		   v->n_buckets - 1);
	for (uint32_t i = 0; i < v->n_paths; i++)
		cli_printf(s, "  path %u: adjacency %u, weight %u, %u buckets", i + 1, v->p[i].adj_index, v->p[i].weight,
			   count[i]);
	cli_printf(s, "  buckets: %s", map);
}

static int route_cmp(const void *a, const void *b)
{
	const struct ip4_route *x = a, *y = b;
	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
	return (int)x->len - (int)y->len;
}

/* Every route's (prefix, len), one prefix length per barrier hold, sorted
 * with the barrier released. *v (free it) and *n; 0 or -ENOMEM. */
static int fib_prefixes(struct cli_session *s, struct ip4_route **v, uint32_t *n)
{
	uint32_t cap = 0;
	*v = NULL;
	*n = 0;
	for (uint8_t l = 0; l <= 32; l++) {
		graph_cli_barrier_sync(s);
		uint32_t k = ip4_fib_routes_of_len(ip4_fib_main, l, NULL, 0);
		if (*n + k > cap) { /* grown under the barrier: malloc, no page is touched before the copy */
			uint32_t c = MAX(2 * cap, *n + k);
			struct ip4_route *p = realloc(*v, (size_t)c * sizeof(*p));
			if (!p) {
				graph_cli_barrier_release(s);
				free(*v);
				*v = NULL;
				return -ENOMEM;
			}
			*v = p;
			cap = c;
		}
		if (k) /* *v may still be NULL: no offset on it (UB, UBSan) */
			*n += ip4_fib_routes_of_len(ip4_fib_main, l, *v + *n, k);
		graph_cli_barrier_release(s);
	}
	if (*n) /* *v may be NULL: qsort takes no NULL even for 0 (UBSan) */
		qsort(*v, *n, sizeof(**v), route_cmp);
	return 0;
}

/* The whole table: SHOW_CHUNK routes captured per hold, formatted after. */
static int fib_show_all(struct cli_session *s, struct fib_show *fs)
{
	struct ip4_route *v;
	uint32_t n;
	if (fib_prefixes(s, &v, &n))
		return -ENOMEM;
	struct route_view *views = malloc(SHOW_CHUNK * sizeof(*views));
	if (!views) {
		free(v);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i += SHOW_CHUNK) {
		uint32_t m = 0;
		graph_cli_barrier_sync(s);
		for (uint32_t k = i; k < MIN(n, i + SHOW_CHUNK); k++)
			if (ip4_fib_get(ip4_fib_main, v[k].prefix, v[k].len, &v[k].result) == 0)
				route_capture(&views[m++], &v[k]); /* else deleted since: left out */
		graph_cli_barrier_release(s);
		for (uint32_t k = 0; k < m; k++)
			route_out(fs, &views[k]);
	}
	free(views);
	free(v);
	return 0;
}

/* One route (barrier held): prefix/plen exactly when had_plen, else the
 * longest route holding the address (one probe per length, longest first). */
static int fib_one(struct route_view *rv, uint32_t addr, uint8_t plen, bool had_plen)
{
	uint32_t a = ntohl(addr);
	for (int l = had_plen ? plen : 32; l >= (had_plen ? plen : 0); l--) {
		struct ip4_route r = { .prefix = a & (l ? ~0u << (32 - l) : 0), .len = (uint8_t)l };
		if (ip4_fib_get(ip4_fib_main, r.prefix, r.len, &r.result) == 0) {
			route_capture(rv, &r);
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * sluice> show ip fib
 * Prefix       Adjacency  Kind     Next hop  Interface  Weight  Rewrite            Source
 * 10.1.0.0/24          2  glean    -         a               1  -                  connected
 * 10.1.0.1/32          1  local    -         a               1  -                  connected
 * 10.9.0.0/16          5  rewrite  10.1.0.2  a               1  02:aa:00:00:00:01  linux/static
 * 10.9.0.0/16          6  rewrite  10.2.0.2  b               3  02:aa:00:00:00:02  linux/static
 * 10.66.0.0/16         7  unreachable  -     -               1  -                  cli
 * (one row per path: 10.9.0.0/16 is a multipath route. Source: connected
 * (an address's), cli (ip route add), linux/PROTOCOL (learnt from Linux,
 * nodes/lcp); "-" for the neighbours' host routes. The CLI's route wins
 * over Linux's for the same prefix.)
 * sluice> show ip fib 10.9.0.0/16
 * (its rows, then for a multipath route:)
 * load-balance adjacency 8: 16 buckets (flow hash & 15):
 *   path 1: adjacency 5, weight 1, 4 buckets
 *   path 2: adjacency 6, weight 3, 12 buckets
 *   buckets: 1 1 1 1 2 2 2 2 2 2 2 2 2 2 2 2
 * sluice> show ip fib 10.1.0.7
 * (the one longest-prefix route holding the address, same columns)
 * sluice> show ip fib json
 * {"routes": [{"adjacency": 5, "kind": "rewrite", "next_hop": "10.1.0.2", "interface": "a",
 *   "rewrite": "02:aa:00:00:00:01", "resolved": true, "weight": 1, "prefix": "10.9.0.0/16",
 *   "source": "linux/static", "protocol": "static", "paths": [{...}, {...}],
 *   "load_balance": {"adjacency": 8, "buckets": [5, 5, 5, 5, 6, ...]}}, ...]}
 * (the first path's fields at the top; "" where the table says "-"; an
 * empty list when IPv4 is not configured)
 */
static int show_fib(struct cli_session *s, int argc, char **argv)
{
	struct fib_show fs = { 0 };
	bool json = cli_take_flag(&argc, argv, "json");
	if (argc > 1)
		return cli_fail(s, -EINVAL, "one prefix or address at most");
	uint32_t addr = 0;
	uint8_t plen = 32;
	bool had_plen = false;
	if (argc == 1 && !parse_prefix(argv[0], &addr, &plen, true, &had_plen))
		return cli_fail(s, -EINVAL, "'%s' is not A.B.C.D or A.B.C.D/L", argv[0]);
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	fs.list = json ? cJSON_AddArrayToObject(root, "routes") : NULL;
	if (!ip4_fib_main) {
		if (json)
			cli_json_print(s, root);
		else
			cli_printf(s, "no IPv4 configured");
		return 0;
	}
	static const struct cli_table_col cols[] = {
		{ "Prefix", false },	{ "Adjacency", true }, { "Kind", false },    { "Next hop", false },
		{ "Interface", false }, { "Weight", true },    { "Rewrite", false }, { "Source", false },
	};
	fs.t = json ? NULL : cli_table_create(cols, ARRAY_LEN(cols));
	if (!fs.t && !json)
		return cli_fail(s, -ENOMEM, "out of memory");
	struct route_view one;
	int rc;
	if (argc == 1) {
		graph_cli_barrier_sync(s);
		rc = fib_one(&one, addr, plen, had_plen);
		graph_cli_barrier_release(s);
		if (rc == 0)
			route_out(&fs, &one);
	} else {
		rc = fib_show_all(s, &fs);
	}
	if (rc) {
		cli_table_free(fs.t);
		cJSON_Delete(root);
		return cli_fail(s, rc, rc == -ENOENT ? "no route for %s" : "cannot walk the FIB (%s)", argv[0]);
	}
	if (json) {
		cli_json_print(s, root);
		return 0;
	}
	cli_table_print(s, fs.t);
	if (argc == 1)
		print_buckets(s, &one);
	return 0;
}

CLI_COMMAND(route_add_cmd, "ip route add", "ip route add " PATHS_USAGE,
	    "Add a route, or paths to the CLI's route (several via: ECMP by flow hash)", route_add)
CLI_COMMAND(route_del_cmd, "ip route del", "ip route del PREFIX [via A.B.C.D [NAME] | via NAME]",
	    "Remove a static route, or one of its paths", route_del)
CLI_COMMAND(show_fib_cmd, "show ip fib", "show ip fib [PREFIX|ADDR] [json]",
	    "IPv4 routes with their paths (an address: its longest match; a prefix: its buckets too)", show_fib)

/* ---- running configuration (cli/cli_runcfg.h) ---- */

/* The CLI's routes: those whose installed source is the CLI (routes from
 * Linux, the netlink listener's, and an address's own are not
 * configuration). As `show ip fib`: prefixes copied one length per
 * barrier hold, then looked at SHOW_CHUNK per hold, so a full table from
 * a routing daemon does not hold the datapath for the whole walk. */
static void route_item(struct cli_runcfg *rc, const struct ip4_route *r)
{
	struct ip4_route_path p[IP4_LB_MAX_PATHS];
	if (ip4_route_src_best(r->prefix, r->len, p) != IP4_SRC_CLI)
		return;
	uint32_t n = MIN(ip4_route_src_paths(r->prefix, r->len, p, IP4_LB_MAX_PATHS), IP4_LB_MAX_PATHS);
	char a[16], key[48], undo[64], paths[IP4_LB_MAX_PATHS * 64];
	ip4_format_addr(a, htonl(r->prefix));
	snprintf(key, sizeof(key), "ip4 route %s/%u", a, r->len);
	snprintf(undo, sizeof(undo), "ip route del %s/%u", a, r->len);
	cli_runcfg_object(rc, key, undo, "ip route add %s/%u %s", a, r->len, paths_text(paths, sizeof(paths), p, n));
}

static void write_routes(struct cli_runcfg *rc, struct cli_session *s)
{
	struct ip4_route *v;
	uint32_t n;
	if (!ip4_fib_main)
		return;
	if (fib_prefixes(s, &v, &n)) {
		cli_runcfg_fail(rc);
		return;
	}
	for (uint32_t i = 0; i < n; i += SHOW_CHUNK) {
		graph_cli_barrier_sync(s);
		for (uint32_t k = i; k < MIN(n, i + SHOW_CHUNK); k++)
			route_item(rc, &v[k]); /* one deleted since has no source: left out */
		graph_cli_barrier_release(s);
	}
	free(v);
}

CLI_RUNCFG_WRITER(ip4_routes_runcfg, "ip4 routes", CLI_RUNCFG_ROUTES, write_routes)
