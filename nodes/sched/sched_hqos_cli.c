/* Hierarchical QoS commands (nodes/sched/sched_hqos.h, sched/hqos.h):
 *
 *   sched hqos interface NAME [overhead N] [queue-limit N] [max-held N] [codel [target T] [interval I] [ecn]]
 *   sched hqos interface NAME off
 *   sched subscriber NAME interface IF rate R [ceil C] [burst B] [weight W] [overhead N]
 *         match dst PREFIX | src PREFIX | vlan ID | interface NAME
 *   sched subscriber default interface IF [rate R] [ceil C] [burst B] [weight W] [overhead N]
 *   no sched subscriber NAME
 *   show sched subscriber [NAME] [json]
 *
 * The port level is `sched shaper interface IF rate R [burst B]`. A
 * command sets every setting it names and the defaults for the rest
 * (burst 16k, weight 1, overhead 0; ceil = rate; queue-limit 64,
 * max-held 65536, tail drop; CoDel target 5ms interval 100ms). Units as
 * sched_io_cli.c's. Every word is checked before anything changes.
 *
 * sluice> show sched subscriber
 * Interface b: port rate 30mbit burst 16k overhead 24, queue-limit 64, tail drop: 3 subscribers, 12 held
 *   name        rate     ceil  state   backlog  bytes  departed  bytes     drop  codel  marked  match
 *   default     0        -     idle    0        0      0         0         0     0      0       -
 *   a           20mbit   30mbit green  8        12112  ...
 *
 * Part of the sluice_sched_io_cli library the daemon links whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/conf.h"
#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "graph/graph.h"
#include "graph/graph_cli.h"
#include "nodes/sched/sched_hqos.h"

#define SHOW_CHUNK 256 /* subscribers read per barrier */

static int unit(struct cli_session *s, enum conf_type type, const char *what, const char *text, void *v, size_t size)
{
	struct conf_key k = { .name = what, .type = type, .offset = 0, .size = size };
	char err[CONF_MSG_SIZE];
	if (conf_value_parse(&k, text, v, err, sizeof(err)) == 0)
		return 0;
	return cli_fail(s, -EINVAL, "%s %s: %s", what, text, err);
}

static int u32_word(struct cli_session *s, const char *what, const char *text, uint32_t max, uint32_t *v)
{
	char *end;
	unsigned long x = strtoul(text, &end, 10);
	if (!*text || *end || x > max)
		return cli_fail(s, -EINVAL, "%s %s: expected 0..%u", what, text, max);
	*v = (uint32_t)x;
	return 0;
}

static struct device *find_if(struct cli_session *s, const char *name)
{
	struct device *d = dev_by_name(name);
	if (!d)
		cli_printf(s, "error: no interface %s", name);
	return d;
}

/* ---- sched hqos interface ---- */

static int codel_words(struct cli_session *s, int argc, char **argv, int i, struct hqos_port_config *c)
{
	c->codel = true;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "ecn") == 0) {
			c->ecn = true;
			continue;
		}
		if (i + 1 >= argc)
			return cli_fail(s, -EINVAL, "%s: expected a value", argv[i]);
		if (strcmp(argv[i], "target") == 0) {
			if (unit(s, CONF_DURATION, "target", argv[++i], &c->codel_target_ns, 8))
				return -EINVAL;
		} else if (strcmp(argv[i], "interval") == 0) {
			if (unit(s, CONF_DURATION, "interval", argv[++i], &c->codel_interval_ns, 8))
				return -EINVAL;
		} else {
			return cli_fail(s, -EINVAL, "unknown word %s after codel (target, interval, ecn)", argv[i]);
		}
	}
	return 0;
}

static int sched_hqos_cmd(struct cli_session *s, int argc, char **argv)
{
	struct graph *g;
	if (!(g = need_graph(s)))
		return -ENODEV;
	if (argc < 1)
		return cli_fail(s, -EINVAL, "expected NAME [overhead N] [queue-limit N] [max-held N] [codel ...] or NAME off");
	struct device *d = find_if(s, argv[0]);
	if (!d)
		return -EINVAL;
	if (argc == 2 && strcmp(argv[1], "off") == 0) {
		uint64_t freed;
		if (sched_hqos_off(g, d->index, &freed))
			return cli_fail(s, -ENOENT, "no hierarchy on %s", d->name);
		cli_printf(s, "%llu held packets freed", (unsigned long long)freed);
		return 0;
	}
	struct hqos_port_config c;
	hqos_port_config_default(&c);
	for (int i = 1; i < argc; i += 2) {
		if (strcmp(argv[i], "codel") == 0) {
			if (codel_words(s, argc, argv, i + 1, &c))
				return -EINVAL;
			break;
		}
		if (i + 1 >= argc)
			return cli_fail(s, -EINVAL, "%s: expected a value", argv[i]);
		uint32_t *field = strcmp(argv[i], "overhead") == 0	? &c.overhead
				  : strcmp(argv[i], "queue-limit") == 0 ? &c.queue_limit
				  : strcmp(argv[i], "max-held") == 0	? &c.max_held
									: NULL;
		if (!field)
			return cli_fail(s, -EINVAL, "unknown word %s", argv[i]);
		if (u32_word(s, argv[i], argv[i + 1], UINT32_MAX, field))
			return -EINVAL;
	}
	char err[256];
	int rc = sched_hqos_set_port(g, d->index, &c, err, sizeof(err));
	return rc ? cli_fail(s, rc, "%s", err) : 0;
}

/* ---- sched subscriber ---- */

static int match_words(struct cli_session *s, const char *kind, const char *value, struct hqos_match *m)
{
	memset(m, 0, sizeof(*m));
	if (strcmp(kind, "dst") == 0 || strcmp(kind, "src") == 0) {
		if (hqos_match_prefix(m, kind[0] == 'd', value) == 0)
			return 0;
		return cli_fail(s, -EINVAL, "%s %s: expected an IPv4 or IPv6 prefix without host bits", kind, value);
	}
	if (strcmp(kind, "vlan") == 0) {
		m->kind = HQOS_MATCH_VLAN;
		return u32_word(s, "vlan", value, 4095, &m->value);
	}
	if (strcmp(kind, "interface") == 0) {
		struct device *d = find_if(s, value);
		m->kind = HQOS_MATCH_RX_IF;
		m->value = d ? d->index : 0;
		return d ? 0 : -EINVAL;
	}
	return cli_fail(s, -EINVAL, "match %s: expected dst, src, vlan or interface", kind);
}

/* One "word value" pair of the subscriber's settings (match takes two). */
static int sub_word(struct cli_session *s, int argc, char **argv, int *i, struct hqos_sub_config *c,
		    uint32_t *if_index)
{
	const char *w = argv[*i];
	if (*i + 1 >= argc)
		return cli_fail(s, -EINVAL, "%s: expected a value", w);
	const char *v = argv[++*i];
	if (strcmp(w, "interface") == 0) {
		struct device *d = find_if(s, v);
		*if_index = d ? d->index : UINT32_MAX;
		return d ? 0 : -EINVAL;
	}
	if (strcmp(w, "rate") == 0)
		return unit(s, CONF_RATE, "rate", v, &c->rate_bps, 8);
	if (strcmp(w, "ceil") == 0)
		return unit(s, CONF_RATE, "ceil", v, &c->ceil_bps, 8);
	if (strcmp(w, "burst") == 0)
		return unit(s, CONF_SIZE, "burst", v, &c->burst_bytes, 8);
	if (strcmp(w, "weight") == 0)
		return u32_word(s, "weight", v, HQOS_WEIGHT_MAX, &c->weight);
	if (strcmp(w, "overhead") == 0)
		return u32_word(s, "overhead", v, HQOS_OVERHEAD_MAX, &c->overhead);
	if (strcmp(w, "match") == 0) {
		if (*i + 1 >= argc)
			return cli_fail(s, -EINVAL, "match: expected dst|src PREFIX, vlan ID or interface NAME");
		return match_words(s, v, argv[++*i], &c->match);
	}
	return cli_fail(s, -EINVAL, "unknown word %s", w);
}

static int sched_subscriber_cmd(struct cli_session *s, int argc, char **argv)
{
	struct graph *g;
	if (!(g = need_graph(s)))
		return -ENODEV;
	struct hqos_sub_config c = { .burst_bytes = 16384, .weight = 1 };
	uint32_t if_index = UINT32_MAX;
	if (argc < 1 || strlen(argv[0]) >= sizeof(c.name))
		return cli_fail(s, -EINVAL, "expected a subscriber name of 1..%d characters", HQOS_NAME_SIZE - 1);
	memcpy(c.name, argv[0], strlen(argv[0]));
	for (int i = 1; i < argc; i++)
		if (sub_word(s, argc, argv, &i, &c, &if_index))
			return -EINVAL;
	if (if_index == UINT32_MAX)
		return cli_fail(s, -EINVAL, "expected interface IF");
	char err[256];
	int rc = sched_hqos_sub_set(g, if_index, &c, err, sizeof(err));
	return rc < 0 ? cli_fail(s, rc, "%s", err) : 0;
}

static int no_sched_subscriber(struct cli_session *s, int argc, char **argv)
{
	struct graph *g;
	if (!(g = need_graph(s)))
		return -ENODEV;
	if (argc != 1)
		return cli_fail(s, -EINVAL, "expected a subscriber name");
	uint64_t freed;
	int rc = sched_hqos_sub_remove(g, argv[0], &freed);
	if (rc == -EINVAL)
		return cli_fail(s, rc, "default cannot be removed (sched hqos interface IF off removes the hierarchy)");
	if (rc)
		return cli_fail(s, rc, "no subscriber %s", argv[0]);
	if (freed)
		cli_printf(s, "%llu held packets freed", (unsigned long long)freed);
	return 0;
}

/* ---- show sched subscriber ---- */

static void match_text(const struct hqos_match *m, char *buf, size_t len)
{
	const struct device *d;
	if (m->kind == HQOS_MATCH_RX_IF && (d = dev_by_index(m->value)) != NULL)
		snprintf(buf, len, "interface %s", d->name);
	else if (m->kind == HQOS_MATCH_NONE)
		snprintf(buf, len, "-");
	else
		hqos_match_format(m, buf, len);
}

static void fmt_rate(uint64_t bps, char *buf, size_t len)
{
	struct conf_key k = { .type = CONF_RATE, .offset = 0, .size = sizeof(uint64_t) };
	if (!bps)
		snprintf(buf, len, "0");
	else
		conf_value_format(&k, &bps, buf, len);
}

static cJSON *sub_json(const struct hqos_sub_stats *st, const char *ifname)
{
	char m[96];
	match_text(&st->cfg.match, m, sizeof(m));
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", st->cfg.name);
	cJSON_AddStringToObject(o, "interface", ifname);
	cJSON_AddNumberToObject(o, "id", st->id);
	cJSON_AddNumberToObject(o, "rate_bps", (double)st->cfg.rate_bps);
	cJSON_AddNumberToObject(o, "ceil_bps", (double)(st->cfg.ceil_bps ? st->cfg.ceil_bps : st->cfg.rate_bps));
	cJSON_AddNumberToObject(o, "burst_bytes", (double)st->cfg.burst_bytes);
	cJSON_AddNumberToObject(o, "weight", st->cfg.weight);
	cJSON_AddNumberToObject(o, "overhead", st->cfg.overhead);
	cJSON_AddStringToObject(o, "match", m);
	cJSON_AddStringToObject(o, "state", st->state);
	cJSON_AddNumberToObject(o, "backlog_packets", (double)st->backlog_packets);
	cJSON_AddNumberToObject(o, "backlog_bytes", (double)st->backlog_bytes);
	cJSON_AddNumberToObject(o, "tokens_bytes", (double)st->tokens_bytes);
	cJSON_AddNumberToObject(o, "ctokens_bytes", (double)st->ctokens_bytes);
	cJSON_AddNumberToObject(o, "enqueued", (double)st->c.enqueued);
	cJSON_AddNumberToObject(o, "departed_packets", (double)st->c.departed_packets);
	cJSON_AddNumberToObject(o, "departed_bytes", (double)st->c.departed_bytes);
	cJSON_AddNumberToObject(o, "dropped_limit", (double)st->c.dropped_limit);
	cJSON_AddNumberToObject(o, "dropped_codel", (double)st->c.dropped_codel);
	cJSON_AddNumberToObject(o, "marked", (double)st->c.marked);
	/* its impairment (sched impair subscriber; show sched impair has all of it) */
	char w[512] = "off";
	const struct sched_impair_stats *im = &st->impair;
	if (st->has_impair && sched_impair_active(&im->cfg))
		sched_impair_format(&im->cfg, w, sizeof(w));
	cJSON_AddStringToObject(o, "impair", w);
	cJSON_AddNumberToObject(o, "impair_held", (double)im->held);
	cJSON_AddNumberToObject(o, "impair_lost", (double)(im->lost_random + im->lost_gemodel));
	cJSON_AddNumberToObject(o, "impair_over_max_held", (double)im->over_max_held);
	cJSON_AddNumberToObject(o, "impair_duplicated", (double)im->duplicated);
	return o;
}

static void sub_text(struct cli_session *s, const struct hqos_sub_stats *st)
{
	char r[32], c[32], m[96];
	fmt_rate(st->cfg.rate_bps, r, sizeof(r));
	if (st->cfg.ceil_bps)
		fmt_rate(st->cfg.ceil_bps, c, sizeof(c));
	else
		snprintf(c, sizeof(c), st->cfg.rate_bps ? "=rate" : "port");
	match_text(&st->cfg.match, m, sizeof(m));
	cli_printf(s, "  %-16s %9s %9s %3u %-6s %7llu %9llu %10llu %13llu %8llu %8llu %8llu  %s", st->cfg.name, r, c,
		   st->cfg.weight, st->state, (unsigned long long)st->backlog_packets,
		   (unsigned long long)st->backlog_bytes, (unsigned long long)st->c.departed_packets,
		   (unsigned long long)st->c.departed_bytes, (unsigned long long)st->c.dropped_limit,
		   (unsigned long long)st->c.dropped_codel, (unsigned long long)st->c.marked, m);
	if (st->has_impair && sched_impair_active(&st->impair.cfg)) {
		char w[512];
		sched_impair_format(&st->impair.cfg, w, sizeof(w));
		cli_printf(s, "  %-16s impair %s (held %llu, lost %llu)", "", w, (unsigned long long)st->impair.held,
			   (unsigned long long)(st->impair.lost_random + st->impair.lost_gemodel));
	}
}

static cJSON *port_json(const struct hqos_port_stats *p, const struct device *d)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "interface", d->name);
	cJSON_AddNumberToObject(o, "rate_bps", (double)p->rate_bps);
	cJSON_AddNumberToObject(o, "burst_bytes", (double)p->burst_bytes);
	cJSON_AddNumberToObject(o, "tokens_bytes", (double)p->tokens_bytes);
	cJSON_AddNumberToObject(o, "overhead", p->cfg.overhead);
	cJSON_AddNumberToObject(o, "queue_limit", p->cfg.queue_limit);
	cJSON_AddNumberToObject(o, "max_held", p->cfg.max_held);
	cJSON_AddBoolToObject(o, "codel", p->cfg.codel);
	cJSON_AddBoolToObject(o, "ecn", p->cfg.ecn);
	cJSON_AddNumberToObject(o, "codel_target_ns", (double)p->cfg.codel_target_ns);
	cJSON_AddNumberToObject(o, "codel_interval_ns", (double)p->cfg.codel_interval_ns);
	cJSON_AddNumberToObject(o, "n_subscribers", p->subscribers);
	cJSON_AddNumberToObject(o, "held", (double)p->held);
	cJSON_AddNumberToObject(o, "departed_packets", (double)p->c.departed_packets);
	cJSON_AddNumberToObject(o, "departed_bytes", (double)p->c.departed_bytes);
	cJSON_AddNumberToObject(o, "dropped_limit", (double)p->c.dropped_limit);
	cJSON_AddNumberToObject(o, "dropped_codel", (double)p->c.dropped_codel);
	cJSON_AddNumberToObject(o, "marked", (double)p->c.marked);
	return o;
}

static void port_text(struct cli_session *s, const struct hqos_port_stats *p, const struct device *d)
{
	char r[32], target[32], interval[32];
	struct conf_key k = { .type = CONF_DURATION, .offset = 0, .size = sizeof(uint64_t) };
	fmt_rate(p->rate_bps, r, sizeof(r));
	conf_value_format(&k, &p->cfg.codel_target_ns, target, sizeof(target));
	conf_value_format(&k, &p->cfg.codel_interval_ns, interval, sizeof(interval));
	cli_printf(s, "Interface %s: port rate %s burst %llu overhead %u, queue-limit %u max-held %u, %s%s%s%s%s",
		   d->name, p->rate_bps ? r : "unlimited", (unsigned long long)p->burst_bytes, p->cfg.overhead,
		   p->cfg.queue_limit, p->cfg.max_held, p->cfg.codel ? "codel target " : "tail drop",
		   p->cfg.codel ? target : "", p->cfg.codel ? " interval " : "", p->cfg.codel ? interval : "",
		   p->cfg.ecn ? " ecn" : "");
	cli_printf(s, "  %u subscribers, %llu held; departed %llu packets %llu bytes, dropped %llu (limit) %llu (codel), "
		   "marked %llu",
		   p->subscribers, (unsigned long long)p->held, (unsigned long long)p->c.departed_packets,
		   (unsigned long long)p->c.departed_bytes, (unsigned long long)p->c.dropped_limit,
		   (unsigned long long)p->c.dropped_codel, (unsigned long long)p->c.marked);
	cli_printf(s, "  %-16s %9s %9s %3s %-6s %7s %9s %10s %13s %8s %8s %8s  %s", "name", "rate", "ceil", "wt", "state",
		   "backlog", "bytes", "departed", "bytes", "drop", "codel", "marked", "match");
}

/* One interface's subscribers (all, or the one called name), read
 * SHOW_CHUNK at a time under the barrier (the queues and buckets are the
 * owner's), printed outside it. */
static void show_if(struct cli_session *s, struct graph *g, uint32_t if_index, const char *name, cJSON *arr)
{
	static struct hqos_sub_stats st[SHOW_CHUNK];
	const struct device *d = dev_by_index(if_index);
	struct hqos_port_stats ps;
	int next = -1;
	graph_barrier_sync(g);
	const struct hqos *hq = sched_io_ifs[if_index].hq;
	if (hq)
		hqos_port_stats(hq, &ps);
	graph_barrier_release(g);
	if (!hq || !d)
		return;
	cJSON *port = arr ? port_json(&ps, d) : NULL;
	cJSON *subs = port ? cJSON_AddArrayToObject(port, "subscribers") : NULL;
	if (port)
		cJSON_AddItemToArray(arr, port);
	else
		port_text(s, &ps, d);
	do {
		uint32_t n = 0;
		graph_barrier_sync(g);
		hq = sched_io_ifs[if_index].hq;
		if (name && hq) {
			int id = hqos_sub_find(hq, name);
			n = id >= 0 && hqos_sub_stats(hq, (uint32_t)id, &st[0]) == 0;
			next = -1;
		}
		while (!name && hq && n < SHOW_CHUNK && (next = hqos_sub_next(hq, next)) >= 0)
			n += hqos_sub_stats(hq, (uint32_t)next, &st[n]) == 0;
		graph_barrier_release(g);
		for (uint32_t i = 0; i < n; i++) {
			if (subs)
				cJSON_AddItemToArray(subs, sub_json(&st[i], d->name));
			else
				sub_text(s, &st[i]);
		}
	} while (!name && next >= 0);
}

static int show_sched_subscriber(struct cli_session *s, int argc, char **argv)
{
	struct graph *g;
	bool json = false;
	if (!(g = need_graph(s)))
		return -ENODEV;
	const char *name = NULL;
	if (argc >= 1 && strcmp(argv[0], "json") != 0) {
		name = argv[0];
		argc--;
		argv++;
	}
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	uint32_t only = UINT32_MAX;
	if (name && sched_hqos_sub_find(name, &only) < 0)
		return cli_fail(s, -ENOENT, "no subscriber %s", name);
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *arr = json ? cJSON_AddArrayToObject(root, "interfaces") : NULL;
	uint32_t shown = 0;
	for (uint32_t i = 0; i < DEV_MAX; i++) {
		if (!sched_io_ifs[i].hq || (only != UINT32_MAX && i != only))
			continue;
		show_if(s, g, i, name, arr);
		shown++;
	}
	if (!json && !shown)
		cli_printf(s, "no interface has subscribers");
	if (json)
		cli_json_print(s, root);
	return 0;
}

CLI_COMMAND(sched_hqos_reg, "sched hqos interface",
	    "sched hqos interface NAME [overhead N] [queue-limit N] [max-held N] [codel [target T] [interval I] [ecn]] "
	    "| sched hqos interface NAME off",
	    "The subscriber hierarchy's port settings on an interface (its rate is the interface's shaper)",
	    sched_hqos_cmd)

CLI_COMMAND(sched_subscriber_reg, "sched subscriber",
	    "sched subscriber NAME interface IF rate R [ceil C] [burst B] [weight W] [overhead N] match dst PREFIX|src "
	    "PREFIX|vlan ID|interface NAME",
	    "Define (or redefine) a subscriber: its rate, its ceiling for borrowing, and the packets it takes",
	    sched_subscriber_cmd)

CLI_COMMAND(no_sched_subscriber_reg, "no sched subscriber",
	    "no sched subscriber NAME",
	    "Remove a subscriber (its queued packets are freed)",
	    no_sched_subscriber)

CLI_COMMAND(show_sched_subscriber_reg, "show sched subscriber",
	    "show sched subscriber [NAME] [json]",
	    "The subscriber hierarchy per interface: port, and per subscriber rate, state, backlog, departures, drops, marks",
	    show_sched_subscriber)

/* ---- running configuration (cli/cli_runcfg.h) ---- */

static void duration_word(uint64_t ns, char *buf, size_t len)
{
	struct conf_key k = { .type = CONF_DURATION, .offset = 0, .size = sizeof(uint64_t) };
	conf_value_format(&k, &ns, buf, len);
}

/* " rate R ceil C burst B weight W overhead N": what differs from a new
 * subscriber's defaults (burst 16k, weight 1, ceil = rate). */
static void sub_words(const struct hqos_sub_config *c, char *buf, size_t len)
{
	char r[32];
	size_t n = 0;
	buf[0] = 0;
	if (c->rate_bps) {
		fmt_rate(c->rate_bps, r, sizeof(r));
		n += (size_t)snprintf(buf + n, len - n, " rate %s", r);
	}
	if (c->ceil_bps && c->ceil_bps != c->rate_bps && n < len) {
		fmt_rate(c->ceil_bps, r, sizeof(r));
		n += (size_t)snprintf(buf + n, len - n, " ceil %s", r);
	}
	if (c->burst_bytes != 16384 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " burst %llu", (unsigned long long)c->burst_bytes);
	if (c->weight != 1 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " weight %u", c->weight);
	if (c->overhead && n < len)
		snprintf(buf + n, len - n, " overhead %u", c->overhead);
}

static void write_port(struct cli_runcfg *rc, const struct device *d, const struct hqos_port_stats *ps)
{
	const struct hqos_port_config *c = &ps->cfg;
	char key[DEV_NAME_SIZE + 16], undo[DEV_NAME_SIZE + 40], codel[96] = "", t[32], i[32];
	if (c->codel) {
		duration_word(c->codel_target_ns, t, sizeof(t));
		duration_word(c->codel_interval_ns, i, sizeof(i));
		snprintf(codel, sizeof(codel), " codel target %s interval %s%s", t, i, c->ecn ? " ecn" : "");
	}
	snprintf(key, sizeof(key), "sched hqos %s", d->name);
	snprintf(undo, sizeof(undo), "sched hqos interface %s off", d->name);
	cli_runcfg_object(rc, key, undo, "sched hqos interface %s overhead %u queue-limit %u max-held %u%s", d->name,
			  c->overhead, c->queue_limit, c->max_held, codel);
}

static void write_sub(struct cli_runcfg *rc, const struct device *d, const struct hqos_sub_stats *st)
{
	char words[160], m[96], key[DEV_NAME_SIZE + HQOS_NAME_SIZE + 32], undo[HQOS_NAME_SIZE + 24];
	sub_words(&st->cfg, words, sizeof(words));
	if (st->id == HQOS_DEFAULT_ID) { /* made with the port: its settings only */
		snprintf(key, sizeof(key), "sched subscriber default %s", d->name);
		cli_runcfg_attr(rc, key, !words[0], "sched subscriber default interface %s%s", d->name, words);
		return;
	}
	match_text(&st->cfg.match, m, sizeof(m));
	snprintf(key, sizeof(key), "sched subscriber %s", st->cfg.name);
	snprintf(undo, sizeof(undo), "no sched subscriber %s", st->cfg.name);
	cli_runcfg_object(rc, key, undo, "sched subscriber %s interface %s%s%s%s", st->cfg.name, d->name, words,
			  st->cfg.match.kind == HQOS_MATCH_NONE ? "" : " match ", st->cfg.match.kind == HQOS_MATCH_NONE ? "" : m);
}

/* A subscriber's impairment (after the subscriber: it names it); off is
 * what a new subscriber has. */
static void write_sub_impair(struct cli_runcfg *rc, const struct hqos_sub_stats *st)
{
	char key[HQOS_NAME_SIZE + 32], words[512] = "off";
	bool on = st->has_impair && sched_impair_active(&st->impair.cfg);
	if (on)
		sched_impair_format(&st->impair.cfg, words, sizeof(words));
	snprintf(key, sizeof(key), "sched impair subscriber %s", st->cfg.name);
	cli_runcfg_attr(rc, key, !on, "sched impair subscriber %s %s", st->cfg.name, words);
}

/* Each interface's hierarchy, then its subscribers in id order; read under
 * one barrier hold (a large table holds it for as long as it takes to
 * copy its settings). Written after `sched` (its shaper is the port). */
static void write_hqos(struct cli_runcfg *rc, struct cli_session *s)
{
	struct device *d;
	graph_cli_barrier_sync(s);
	DEV_FOREACH(d)
	{
		const struct hqos *hq = sched_io_ifs[d->index].hq;
		if (!hq)
			continue;
		struct hqos_port_stats ps;
		struct hqos_sub_stats st;
		hqos_port_stats(hq, &ps);
		write_port(rc, d, &ps);
		for (int id = hqos_sub_next(hq, -1); id >= 0; id = hqos_sub_next(hq, id))
			if (hqos_sub_stats(hq, (uint32_t)id, &st) == 0) {
				write_sub(rc, d, &st);
				write_sub_impair(rc, &st);
			}
	}
	graph_cli_barrier_release(s);
}

CLI_RUNCFG_WRITER(sched_hqos_runcfg, "sched subscribers", CLI_RUNCFG_SCHED, write_hqos)
