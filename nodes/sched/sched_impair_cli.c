/* Impairment commands (sched/impair.h, netem's words; docs/scheduling.md):
 *
 *   sched impair interface NAME [delay D [jitter J [CORR]] [distribution
 *       uniform|normal|pareto|paretonormal]] [loss random P [CORR] | loss
 *       gemodel p [r [1-h [1-k]]]] [duplicate P [CORR]] [reorder P [CORR]
 *       [gap N]] [corrupt P [CORR]] [rate R [packet-overhead N]] [seed N]
 *   sched impair interface NAME off
 *   sched impair class NAME interface NAME ...|off   (that class's packets,
 *       before the shaper's class queues: netem under an HTB class)
 *   sched impair subscriber NAME ...|off   (that subscriber's packets, as
 *       they enter the hierarchy, before its queues: the same place)
 *   show sched impair [json]
 *
 * Each command replaces the interface's whole impairment, as `tc qdisc
 * replace ... netem` does; packets already held keep their times. Every
 * word is checked before anything changes.
 *
 * sluice> show sched impair
 * Interface b (if 1): delay 50ms jitter 10ms distribution normal loss random 1% seed 7
 *   held 4061, enqueued 81230, released 76356, delayed 80418
 *   lost: random 813, gemodel 0; over max-held 0
 *   duplicated 0 (no buffer 0), reordered 0, corrupted 0 (no buffer 0)
 *   release lateness: <1us 70001, <2us 5102, <4us 1201, <8us 40, <16us 12
 *
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/graph_cli.h"
#include "nodes/sched/sched_hqos.h"
#include "nodes/sched/sched_io.h"

static const char *const late_names[SCHED_IMPAIR_LATE_BUCKETS] = {
	"<1us",  "<2us",  "<4us",	 "<8us",   "<16us",  "<32us",  "<64us", "<128us",
	"<256us", "<512us", "<1.02ms", "<2.05ms", "<4.1ms", "<8.2ms", "<16.4ms", ">=16.4ms",
};

/* Parse the netem words (or off) into c: 0, or the failure printed. */
static int impair_words(struct cli_session *s, struct sched_impair_config *c, int n, char **w)
{
	char err[256];
	if (n == 1 && strcmp(w[0], "off") == 0)
		memset(c, 0, sizeof(*c));
	else if (sched_impair_parse(c, n, w, err, sizeof(err)))
		return cli_fail(s, -EINVAL, "%s", err);
	return 0;
}

/* sched impair subscriber NAME ...|off */
static int impair_subscriber(struct cli_session *s, struct graph *g, int argc, char **argv)
{
	struct sched_impair_config c;
	char err[256];
	if (argc < 2)
		return cli_fail(s, -EINVAL, "expected subscriber NAME, then delay, loss, duplicate, reorder, corrupt, "
				"rate, seed ... or off");
	int rc = impair_words(s, &c, argc - 1, argv + 1);
	if (rc)
		return rc;
	rc = sched_hqos_sub_impair(g, argv[0], &c, err, sizeof(err));
	return rc ? cli_fail(s, rc, "%s", err) : 0;
}

static int sched_impair_cmd(struct cli_session *s, int argc, char **argv)
{
	struct graph *g;
	if (!(g = need_graph(s)))
		return -ENODEV;
	if (argc >= 1 && strcmp(argv[0], "subscriber") == 0)
		return impair_subscriber(s, g, argc - 1, argv + 1);
	int cls = -1, at = 0;
	if (argc >= 2 && strcmp(argv[0], "class") == 0) {
		if ((cls = sched_class_find(argv[1])) < 0)
			return cli_fail(s, -EINVAL, "no class %s (sched class NAME ... defines one)", argv[1]);
		at = 2;
	}
	if (argc < at + 3 || strcmp(argv[at], "interface") != 0)
		return cli_fail(s, -EINVAL, "expected interface NAME or class NAME interface NAME, then delay, loss, "
				"duplicate, reorder, corrupt, rate, seed ... or off");
	struct device *d = dev_by_name(argv[at + 1]);
	if (!d)
		return cli_fail(s, -EINVAL, "no interface %s", argv[at + 1]);
	struct sched_impair_config c;
	char err[256];
	int rc = impair_words(s, &c, argc - at - 2, argv + at + 2);
	if (rc)
		return rc;
	rc = cls < 0 ? sched_io_set_impair(g, d->index, &c, err, sizeof(err))
			 : sched_io_set_class_impair(g, d->index, (uint32_t)cls, &c, err, sizeof(err));
	return rc ? cli_fail(s, rc, "%s", err) : 0;
}

static const char *cls_name(int c)
{
	return c < 0 ? NULL : sched_class_table.cls[c].name[0] ? sched_class_table.cls[c].name : "(removed)";
}

/* One impairer: of the interface (c < 0, sub NULL), a class on it, or a
 * subscriber on it (sub). */
static void show_text(struct cli_session *s, const struct device *d, int c, const char *sub,
		      const struct sched_impair_stats *st)
{
	char cfg[512], line[512];
	sched_impair_format(&st->cfg, cfg, sizeof(cfg));
	if (sub)
		cli_printf(s, "Subscriber %s on interface %s (if %u): %s", sub, d->name, d->index, cfg);
	else if (c < 0)
		cli_printf(s, "Interface %s (if %u): %s", d->name, d->index, cfg);
	else
		cli_printf(s, "Class %s on interface %s (if %u): %s", cls_name(c), d->name, d->index, cfg);
	cli_printf(s, "  max-held %u: held %llu, enqueued %llu, released %llu, delayed %llu", st->max_held,
		   (unsigned long long)st->held, (unsigned long long)st->enqueued, (unsigned long long)st->released,
		   (unsigned long long)st->delayed);
	cli_printf(s, "  lost: random %llu, gemodel %llu (Bad entered %llu); over max-held %llu",
		   (unsigned long long)st->lost_random, (unsigned long long)st->lost_gemodel,
		   (unsigned long long)st->ge_bad_entries, (unsigned long long)st->over_max_held);
	cli_printf(s, "  duplicated %llu (no buffer %llu), reordered %llu, corrupted %llu (no buffer %llu)",
		   (unsigned long long)st->duplicated, (unsigned long long)st->duplicate_no_buffer,
		   (unsigned long long)st->reordered, (unsigned long long)st->corrupted,
		   (unsigned long long)st->corrupt_no_buffer);
	size_t n = (size_t)snprintf(line, sizeof(line), "  release lateness:");
	for (uint32_t b = 0; b < SCHED_IMPAIR_LATE_BUCKETS && n < sizeof(line); b++)
		if (st->late[b])
			n += (size_t)snprintf(line + n, sizeof(line) - n, " %s %llu", late_names[b],
					      (unsigned long long)st->late[b]);
	cli_printf(s, "%s", line);
}

static cJSON *show_json(const struct device *d, int c, const char *sub, const struct sched_impair_stats *st)
{
	char cfg[512];
	sched_impair_format(&st->cfg, cfg, sizeof(cfg));
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "interface", d->name);
	if (sub)
		cJSON_AddStringToObject(o, "subscriber", sub);
	else if (c >= 0)
		cJSON_AddStringToObject(o, "class", cls_name(c));
	cJSON_AddNumberToObject(o, "if_index", d->index);
	cJSON_AddStringToObject(o, "impair", cfg);
	cJSON_AddNumberToObject(o, "delay_ns", (double)st->cfg.delay_ns);
	cJSON_AddNumberToObject(o, "jitter_ns", (double)st->cfg.jitter_ns);
	cJSON_AddStringToObject(o, "distribution", sched_impair_dist_names[st->cfg.dist]);
	cJSON_AddNumberToObject(o, "rate_bps", (double)st->cfg.rate_bps);
	cJSON_AddNumberToObject(o, "max_held", st->max_held);
	const struct {
		const char *name;
		uint64_t v;
	} cnt[] = {
		{ "held", st->held },
		{ "enqueued", st->enqueued },
		{ "released", st->released },
		{ "delayed", st->delayed },
		{ "lost_random", st->lost_random },
		{ "lost_gemodel", st->lost_gemodel },
		{ "gemodel_bad_entered", st->ge_bad_entries },
		{ "over_max_held", st->over_max_held },
		{ "duplicated", st->duplicated },
		{ "duplicate_no_buffer", st->duplicate_no_buffer },
		{ "reordered", st->reordered },
		{ "corrupted", st->corrupted },
		{ "corrupt_no_buffer", st->corrupt_no_buffer },
	};
	for (size_t i = 0; i < ARRAY_LEN(cnt); i++)
		cJSON_AddNumberToObject(o, cnt[i].name, (double)cnt[i].v);
	cJSON *late = cJSON_AddArrayToObject(o, "release_lateness");
	for (uint32_t b = 0; b < SCHED_IMPAIR_LATE_BUCKETS; b++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "bucket", late_names[b]);
		cJSON_AddNumberToObject(x, "packets", (double)st->late[b]);
		cJSON_AddItemToArray(late, x);
	}
	return o;
}

/* The impaired subscribers of if_index's hierarchy (read under the
 * barrier: its table is the owner's), printed outside it. */
static uint32_t show_subscribers(struct cli_session *s, struct graph *g, uint32_t if_index, const struct device *d,
				 cJSON *arr)
{
	static struct hqos_sub_stats st[HQOS_IMPAIR_MAX];
	uint32_t n = 0, ids[HQOS_IMPAIR_MAX], n_ids = 0;
	graph_barrier_sync(g);
	const struct hqos *hq = sched_io_ifs[if_index].hq;
	/* the impairers (at most 64), in subscriber id order: not a walk
	 * of every subscriber under the barrier */
	for (uint32_t k = 0, id, j; hq && k < hqos_impair_count(hq); k++) {
		hqos_impair_at(hq, k, &id);
		for (j = n_ids++; j && ids[j - 1] > id; j--)
			ids[j] = ids[j - 1];
		ids[j] = id;
	}
	for (uint32_t k = 0; k < n_ids; k++)
		if (hqos_sub_stats(hq, ids[k], &st[n]) == 0)
			n++;
	graph_barrier_release(g);
	for (uint32_t k = 0; k < n; k++) {
		if (arr)
			cJSON_AddItemToArray(arr, show_json(d, -1, st[k].cfg.name, &st[k].impair));
		else
			show_text(s, d, -1, st[k].cfg.name, &st[k].impair);
	}
	return n;
}

static int show_sched_impair(struct cli_session *s, int argc, char **argv)
{
	struct graph *g;
	bool json = false;
	if (!(g = need_graph(s)))
		return -ENODEV;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *arr = json ? cJSON_AddArrayToObject(root, "interfaces") : NULL;
	uint32_t shown = 0;
	for (uint32_t i = 0; i < DEV_MAX; i++) {
		const struct device *d = dev_by_index(i);
		if (!d || !sched_io_ifs[i].e)
			continue;
		for (int c = -1; c < (int)SCHED_MAX_CLASSES; c++) {
			const struct sched_impair *m = c < 0 ? sched_egress_impair(sched_io_ifs[i].e)
							     : sched_egress_class_impair(sched_io_ifs[i].e, (uint32_t)c);
			struct sched_impair_stats st;
			if (!m)
				continue;
			sched_impair_stats(m, &st);
			if (!sched_impair_active(&st.cfg) && !st.enqueued)
				continue;
			if (json)
				cJSON_AddItemToArray(arr, show_json(d, c, NULL, &st));
			else
				show_text(s, d, c, NULL, &st);
			shown++;
		}
		shown += show_subscribers(s, g, i, d, arr);
	}
	if (json)
		cli_json_print(s, root);
	else if (!shown)
		cli_printf(s, "no interface is impaired");
	return 0;
}

CLI_COMMAND(sched_impair_reg, "sched impair",
	    "sched impair interface NAME [delay D [jitter J [CORR]] [distribution uniform|normal|pareto|paretonormal]] "
	    "[loss random P [CORR] | loss gemodel p [r [1-h [1-k]]]] [duplicate P [CORR]] [reorder P [CORR] [gap N]] "
	    "[corrupt P [CORR]] [rate R [packet-overhead N]] [seed N] | sched impair interface NAME off | "
	    "sched impair class NAME interface NAME ... (the same words, for the class's packets, before the shaper) | "
	    "sched impair subscriber NAME ...|off (a subscriber's packets, as they enter the hierarchy)",
	    "Network impairment on an interface's egress (or a class on it), with tc-netem's semantics",
	    sched_impair_cmd)

CLI_COMMAND(show_sched_impair_reg, "show sched impair",
	    "show sched impair [json]",
	    "Impairment per interface, class and subscriber: configuration, losses, duplicates, reorders, release lateness",
	    show_sched_impair)
