/* Router Advertisement CLI (ip6_ra.h): `ip6 nd interface NAME ra ...`
 * turns RAs on, changes them or turns them off; `show ip6 nd` shows each
 * interface's RA state. Every word is checked before anything changes;
 * changes run under the graph barrier. Part of sluice_ip6_cli.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "drivers/device.h"
#include "graph/graph_cli.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_ra.h"

/*
 * sluice> ip6 nd interface a ra interval 10s lifetime 1800 prefix 2001:db8:1::/64
 * a: Router Advertisements on (interval 10 s, lifetime 1800 s, 1 prefix(es))
 * sluice> ip6 nd interface a ra off
 * a: Router Advertisements off
 */
static int nd_interface(struct cli_session *s, int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "ra"))
		return cli_fail(s, -EINVAL, "expected NAME ra ...");
	struct device *d = dev_by_name(argv[0]);
	if (!d)
		return cli_fail(s, -EINVAL, "no interface %s", argv[0]);
	struct ip6_ra_config c;
	bool off;
	const char *bad = "";
	if (!ip6_ra_parse(argc - 2, argv + 2, &c, &off, &bad))
		return cli_fail(s, -EINVAL, "bad or misplaced '%s'", bad);
	char err[128] = "";
	int rc = 0;
	graph_cli_barrier_sync(s);
	if (off)
		ip6_ra_disable(d->index);
	else
		rc = ip6_ra_enable(d->index, &c, err, sizeof(err));
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s", err);
	if (off)
		cli_printf(s, "%s: Router Advertisements off", d->name);
	else
		cli_printf(s, "%s: Router Advertisements on (interval %u s, lifetime %u s, %u prefix(es)%s)", d->name,
			   c.interval_s, c.lifetime_s, c.n_prefixes, c.n_prefixes ? "" : ": the addresses'");
	return 0;
}

/* ---- show ip6 nd ---- */

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static cJSON *ra_json(const struct device *d, const struct ip6_ra_if *r, uint64_t now)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "interface", d->name);
	cJSON_AddBoolToObject(o, "ra", r->on);
	cJSON_AddNumberToObject(o, "interval_s", r->cfg.interval_s);
	cJSON_AddNumberToObject(o, "lifetime_s", r->cfg.lifetime_s);
	cJSON_AddBoolToObject(o, "managed", r->cfg.flags & IP6_RA_F_MANAGED);
	cJSON_AddBoolToObject(o, "other", r->cfg.flags & IP6_RA_F_OTHER);
	cJSON *dl = cJSON_AddArrayToObject(o, "rdnss");
	for (uint32_t i = 0; i < r->cfg.n_rdnss; i++) {
		char a[INET6_ADDRSTRLEN];
		cJSON_AddItemToArray(dl, cJSON_CreateString(ip6_format_addr(a, &r->cfg.rdnss[i])));
	}
	cJSON *pl = cJSON_AddArrayToObject(o, "prefixes");
	for (uint32_t i = 0; i < r->cfg.n_prefixes; i++) {
		char a[INET6_ADDRSTRLEN], p[INET6_ADDRSTRLEN + 4];
		snprintf(p, sizeof(p), "%s/%u", ip6_format_addr(a, &r->cfg.prefixes[i].prefix), r->cfg.prefixes[i].plen);
		cJSON *po = cJSON_CreateObject();
		cJSON_AddStringToObject(po, "prefix", p);
		cJSON_AddNumberToObject(po, "valid_s", r->cfg.prefixes[i].valid_s);
		cJSON_AddNumberToObject(po, "preferred_s", r->cfg.prefixes[i].preferred_s);
		cJSON_AddItemToArray(pl, po);
	}
	if (r->last_ns)
		cJSON_AddNumberToObject(o, "last_sent_ago_ns", (double)(now - r->last_ns));
	else
		cJSON_AddNullToObject(o, "last_sent_ago_ns");
	cJSON_AddNumberToObject(o, "next_in_ns", r->on && r->next_ns > now ? (double)(r->next_ns - now) : 0);
	cJSON_AddNumberToObject(o, "sent", (double)r->n_sent);
	cJSON_AddNumberToObject(o, "solicited", (double)r->n_solicited);
	cJSON_AddNumberToObject(o, "rs_received", (double)r->n_rs);
	return o;
}

static void ra_row(struct cli_table *t, const struct device *d, const struct ip6_ra_if *r, uint64_t now)
{
	cli_table_cell(t, "%s", d->name);
	cli_table_cell(t, "%s", r->on ? "on" : "off");
	cli_table_cell(t, "%u", r->cfg.interval_s);
	cli_table_cell(t, "%u", r->cfg.lifetime_s);
	if (r->cfg.n_prefixes) {
		char a[INET6_ADDRSTRLEN];
		cli_table_cell(t, "%s/%u%s", ip6_format_addr(a, &r->cfg.prefixes[0].prefix), r->cfg.prefixes[0].plen,
			       r->cfg.n_prefixes > 1 ? " ..." : "");
	} else {
		cli_table_cell(t, "%s", "(addresses)");
	}
	if (r->last_ns)
		cli_table_cell(t, "%.1f", secs(now - r->last_ns));
	else
		cli_table_cell(t, "%s", "-");
	cli_table_cell(t, "%llu", (unsigned long long)r->n_sent);
	cli_table_cell(t, "%llu", (unsigned long long)r->n_solicited);
	cli_table_cell(t, "%llu", (unsigned long long)r->n_rs);
}

/*
 * sluice> show ip6 nd
 * Interface  RA  Interval (s)  Lifetime (s)  Prefixes     Last sent (s ago)  Sent  Solicited  RS
 * a          on            10          1800  (addresses)                2.4     3          1   1
 * sluice> show ip6 nd json
 * {"interfaces": [{"interface": "a", "ra": true, "interval_s": 10, "lifetime_s": 1800, "managed": false,
 *   "other": false, "rdnss": [], "prefixes": [],
 *   "last_sent_ago_ns": 2400000000, "next_in_ns": 5100000000, "sent": 3, "solicited": 1,
 *   "rs_received": 1}]}
 * Interfaces with IPv6 or RAs on are listed.
 */
static int show_nd(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	static const struct cli_table_col cols[] = {
		{ "Interface", false }, { "RA", false },   { "Interval (s)", true }, { "Lifetime (s)", true },
		{ "Prefixes", false },  { "Last sent (s ago)", true }, { "Sent", true },    { "Solicited", true },
		{ "RS", true },
	};
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *list = json ? cJSON_AddArrayToObject(root, "interfaces") : NULL;
	struct cli_table *t = json ? NULL : cli_table_create(cols, ARRAY_LEN(cols));
	if (!t && !list) {
		cJSON_Delete(root);
		return cli_fail(s, -ENOMEM, "out of memory");
	}
	graph_cli_barrier_sync(s);
	uint64_t now = ip6_nbr_now();
	struct device *d;
	DEV_FOREACH(d)
	{
		struct ip6_ra_if r = ip6_ra_ifs[d->index];
		if (!r.on && !ip6_if(d->index))
			continue;
		if (!r.on && !r.cfg.interval_s)
			ip6_ra_config_default(&r.cfg);
		if (json)
			cJSON_AddItemToArray(list, ra_json(d, &r, now));
		else
			ra_row(t, d, &r, now);
	}
	graph_cli_barrier_release(s);
	if (json)
		cli_json_print(s, root);
	else
		cli_table_print(s, t);
	return 0;
}

CLI_COMMAND(ip6_nd_interface_cmd, "ip6 nd interface",
	    "ip6 nd interface NAME ra [interval SECONDS] [lifetime SECONDS] "
	    "[prefix X:X::X:X/L [valid SECONDS] [preferred SECONDS]]... [managed] [other] [rdnss X:X::X:X]... "
	    "| ip6 nd interface NAME ra off",
	    "Router Advertisements on an interface (RFC 4861 §6): on with these settings, or off", nd_interface)
CLI_COMMAND(show_ip6_nd_cmd, "show ip6 nd", "show ip6 nd [json]",
	    "Router Advertisement state per interface: on/off, interval, last sent, counts", show_nd)

/* ---- running configuration (cli/cli_runcfg.h) ---- */

/* c as `ip6 nd interface NAME ra` words (ip6_ra_parse's), every setting
 * named. */
static void ra_words(const struct ip6_ra_config *c, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	size_t n = (size_t)snprintf(buf, len, "interval %u lifetime %u", c->interval_s, c->lifetime_s);
	for (uint32_t i = 0; i < c->n_prefixes && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " prefix %s/%u valid %u preferred %u",
				      ip6_format_addr(a, &c->prefixes[i].prefix), c->prefixes[i].plen, c->prefixes[i].valid_s,
				      c->prefixes[i].preferred_s);
	if ((c->flags & IP6_RA_F_MANAGED) && n < len)
		n += (size_t)snprintf(buf + n, len - n, " managed");
	if ((c->flags & IP6_RA_F_OTHER) && n < len)
		n += (size_t)snprintf(buf + n, len - n, " other");
	for (uint32_t i = 0; i < c->n_rdnss && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " rdnss %s", ip6_format_addr(a, &c->rdnss[i]));
}

/* Router Advertisements per interface: on with their settings, or off
 * (what a new interface has). After the addresses, whose prefixes RAs
 * advertise by default. */
static void write_ra(struct cli_runcfg *rc, struct cli_session *s)
{
	char key[DEV_NAME_SIZE + 16], words[IP6_RA_MAX_PREFIXES * 96 + IP6_RA_MAX_RDNSS * 56 + 64];
	struct device *d;
	graph_cli_barrier_sync(s);
	DEV_FOREACH(d)
	{
		if (d->mode == DEV_MODE_LCP)
			continue;
		const struct ip6_ra_if *ra = &ip6_ra_ifs[d->index];
		snprintf(key, sizeof(key), "ip6 ra %s", d->name);
		if (!ra->on) {
			cli_runcfg_attr(rc, key, true, "ip6 nd interface %s ra off", d->name);
			continue;
		}
		ra_words(&ra->cfg, words, sizeof(words));
		cli_runcfg_attr(rc, key, false, "ip6 nd interface %s ra %s", d->name, words);
	}
	graph_cli_barrier_release(s);
}

CLI_RUNCFG_WRITER(ip6_ra_runcfg, "ip6 router advertisements", CLI_RUNCFG_ADDRESSES + 1, write_ra)
