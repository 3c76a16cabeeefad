/* The packet generator's CLI commands: make, start, stop and delete streams
 * at run time, and list them.
 *
 * `packet-generator new` takes the same `key value` words as a stream block
 * of startup.conf's packet-generator section, read through that section's
 * own table, defaults and check (nodes/pg/pg_conf.c), so the two never
 * disagree. `rx-if` also takes an interface name here. As in VPP, a stream
 * made at run time waits for `packet-generator enable`.
 *
 * The pg_stream_* calls take the graph barrier themselves. Built as its own
 * library (sluice_nodes_cli) that the daemon links whole, so that nodes/
 * does not depend on cli/.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "drivers/device.h"
#include "base/conf.h"
#include "base/util.h"
#include "nodes/pg/pg.h"
#include "nodes/pg/pg_private.h"

/* Fill cfg from `key value` words through the section's stream table. The
 * first failure is printed; nothing is added in any case. */
static int parse_stream(struct cli_session *s, const char *name, int argc, char **argv,
			struct pg_stream_config *cfg)
{
	const struct conf_block *blk = pg_conf_section.block;
	char msg[CONF_MSG_SIZE], ifindex[16];
	if (strlen(name) >= PG_NAME_MAX)
		return cli_fail(s, -EINVAL, "stream name longer than %d characters", PG_NAME_MAX - 1);
	memset(cfg, 0, sizeof(*cfg));
	blk->init(cfg);
	if (conf_defaults(blk->keys, cfg, msg, sizeof(msg)))
		return cli_fail(s, -EINVAL, "%s", msg);
	snprintf(cfg->name, sizeof(cfg->name), "%s", name);
	struct conf_check chk = { .keys = blk->keys };
	for (int i = 0; i < argc; i++) {
		const struct conf_key *k = conf_key_find(blk->keys, argv[i]);
		if (!k)
			return cli_fail(s, -EINVAL, "unknown key '%s'", argv[i]);
		const char *value = NULL;
		if (k->type != CONF_FLAG) {
			if (i + 1 == argc)
				return cli_fail(s, -EINVAL, "missing value for '%s'", k->name);
			value = argv[++i];
		}
		if (!strcmp(k->name, "rx-if") && (value[0] < '0' || value[0] > '9')) {
			const struct device *d = dev_by_name(value);
			if (!d)
				return cli_fail(s, -EINVAL, "rx-if: no interface %s", value);
			snprintf(ifindex, sizeof(ifindex), "%u", d->index);
			value = ifindex;
		}
		if (conf_value_parse(k, value, cfg, msg, sizeof(msg)))
			return cli_fail(s, -EINVAL, "%s: %s", k->name, msg);
		chk.set |= 1ull << (k - blk->keys);
	}
	if (blk->check && blk->check(cfg, &chk) < 0)
		return cli_fail(s, -EINVAL, "%s%s%s", chk.key ? chk.key : "", chk.key ? ": " : "", chk.msg);
	cfg->enabled = false;
	return 0;
}

/*
 * sluice> packet-generator new s1 limit 1000 rate 10kpps size 64-128 rx-if nul1
 * stream s1 added (disabled): 64-128 bytes, limit 1000, to ethernet-input
 */
static int pg_new(struct cli_session *s, int argc, char **argv)
{
	static struct pg_stream_config cfg; /* 2 KB of template: not on the session's stack */
	if (argc < 1)
		return cli_fail(s, -EINVAL, "missing NAME");
	int rc = parse_stream(s, argv[0], argc - 1, argv + 1, &cfg);
	if (rc)
		return rc;
	char err[CONF_MSG_SIZE];
	rc = pg_stream_add(&cfg, err, sizeof(err));
	if (rc)
		return cli_fail(s, -EINVAL, "%s", err);
	cli_printf(s, "stream %s added (disabled): %u-%u bytes, limit %llu, to %s", cfg.name, cfg.size_min,
		   cfg.size_max, (unsigned long long)cfg.limit, cfg.next_node);
	return 0;
}

/* enable/disable: one stream, or every stream without a name. */
static int pg_set_enabled(struct cli_session *s, int argc, char **argv, bool enable)
{
	const char *name = NULL;
	int rc = cli_opt_word_arg(s, argc, argv, "NAME", &name);
	if (rc)
		return rc;
	const char *what = enable ? "enabled" : "disabled";
	if (name) {
		if (pg_stream_enable(name, enable))
			return cli_fail(s, -EINVAL, "no stream %s", name);
		cli_printf(s, "stream %s %s", name, what);
		return 0;
	}
	uint32_t n = pg_stream_count();
	for (uint32_t i = 0; i < n; i++) {
		struct pg_stream_info info;
		if (pg_stream_info(i, &info) == 0)
			pg_stream_enable(info.name, enable);
	}
	cli_printf(s, "%u stream(s) %s", n, what);
	return 0;
}

/*
 * sluice> packet-generator enable s1
 * stream s1 enabled
 * sluice> packet-generator enable
 * 2 stream(s) enabled
 */
static int pg_enable(struct cli_session *s, int argc, char **argv)
{
	return pg_set_enabled(s, argc, argv, true);
}

/*
 * sluice> packet-generator disable s1
 * stream s1 disabled
 */
static int pg_disable(struct cli_session *s, int argc, char **argv)
{
	return pg_set_enabled(s, argc, argv, false);
}

/*
 * sluice> packet-generator delete s1
 * stream s1 deleted
 */
static int pg_delete(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "NAME", &name, 0, 0 } };
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	if (pg_stream_delete(name))
		return cli_fail(s, -EINVAL, "no stream %s", name);
	cli_printf(s, "stream %s deleted", name);
	return 0;
}

static cJSON *pg_json(void)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(root, "streams");
	for (uint32_t i = 0; i < pg_stream_count(); i++) {
		struct pg_stream_info info;
		if (pg_stream_info(i, &info))
			continue;
		const struct pg_stream_config *c = info.config;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", info.name);
		cJSON_AddBoolToObject(o, "enabled", info.enabled);
		cJSON_AddNumberToObject(o, "sent", (double)info.packets_sent);
		cJSON_AddNumberToObject(o, "packets", (double)info.packets_total);
		cJSON_AddNumberToObject(o, "bytes", (double)info.bytes_total);
		cJSON_AddNumberToObject(o, "limit", (double)c->limit);
		cJSON_AddNumberToObject(o, "rate_pps", (double)c->rate_pps);
		cJSON_AddNumberToObject(o, "size_min_bytes", c->size_min);
		cJSON_AddNumberToObject(o, "size_max_bytes", c->size_max);
		cJSON_AddStringToObject(o, "next_node", c->next_node);
		cJSON_AddNumberToObject(o, "rx_if", c->rx_if);
		cJSON_AddNumberToObject(o, "thread", c->thread_index);
		cJSON_AddItemToArray(list, o);
	}
	return root;
}

/*
 * sluice> show packet-generator
 * Name  Enabled  Sent   Packets  Bytes    Limit  Rate   Size    Next node       rx-if  Thread
 * pg0   yes      81920  81920    5242880  0      10000  64      ethernet-input      0       0
 * s1    no       1000   1000     96000    1000   0      64-128  ethernet-input      2       0
 * sluice> show packet-generator json
 * {"streams": [{"name": "s1", "enabled": false, "sent": 1000, "packets": 1000, "bytes": 96000,
 *   "limit": 1000, "rate_pps": 0, "size_min_bytes": 64, "size_max_bytes": 128,
 *   "next_node": "ethernet-input", "rx_if": 2, "thread": 0}]}
 */
static int show_pg(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	if (json) {
		cli_json_print(s, pg_json());
		return 0;
	}
	static const struct cli_table_col cols[] = {
		{ "Name", false },  { "Enabled", false }, { "Sent", true },	 { "Packets", true },
		{ "Bytes", true },  { "Limit", true },	   { "Rate", true },	 { "Size", false },
		{ "Next node", false }, { "rx-if", true }, { "Thread", true },
	};
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	if (!t)
		return cli_fail(s, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < pg_stream_count(); i++) {
		struct pg_stream_info info;
		if (pg_stream_info(i, &info))
			continue;
		const struct pg_stream_config *c = info.config;
		cli_table_cell(t, "%s", info.name);
		cli_table_cell(t, "%s", info.enabled ? "yes" : "no");
		cli_table_cell(t, "%llu", (unsigned long long)info.packets_sent);
		cli_table_cell(t, "%llu", (unsigned long long)info.packets_total);
		cli_table_cell(t, "%llu", (unsigned long long)info.bytes_total);
		cli_table_cell(t, "%llu", (unsigned long long)c->limit);
		cli_table_cell(t, "%llu", (unsigned long long)c->rate_pps);
		if (c->size_min == c->size_max)
			cli_table_cell(t, "%u", c->size_min);
		else
			cli_table_cell(t, "%u-%u", c->size_min, c->size_max);
		cli_table_cell(t, "%s", c->next_node);
		cli_table_cell(t, "%u", c->rx_if);
		cli_table_cell(t, "%u", c->thread_index);
	}
	cli_table_print(s, t);
	return 0;
}

/* ---- registration ---- */

CLI_COMMAND(pg_new_cmd, "packet-generator new", "packet-generator new NAME [key value...] (startup.conf stream keys)",
	    "Add a stream, disabled until enabled", pg_new)
/* VPP's names; sluice's `enable` and `disable` are their prefixes, so they
 * still work, as abbreviations (docs/vpp-cli.md). */
CLI_COMMAND(pg_enable_cmd, "packet-generator enable-stream", "packet-generator enable-stream [NAME]",
	    "Start a stream (every stream without NAME); the limit counts again", pg_enable)
CLI_COMMAND(pg_disable_cmd, "packet-generator disable-stream", "packet-generator disable-stream [NAME]",
	    "Stop a stream (every stream without NAME)", pg_disable)
CLI_COMMAND(pg_delete_cmd, "packet-generator delete", "packet-generator delete NAME", "Remove a stream", pg_delete)
CLI_COMMAND(show_pg_cmd, "show packet-generator", "show packet-generator [json]", "Streams and their counters", show_pg)

/* ---- running configuration (cli/cli_runcfg.h) ---- */

/* " key value" for each of the stream table's keys (the same table
 * `packet-generator new` reads, so what is written parses back); rx-if by
 * the interface's name, which survives a replay where indices may not. */
static size_t stream_words(char *buf, size_t len, const struct pg_stream_config *cfg)
{
	size_t used = 0;
	for (const struct conf_key *k = pg_conf_section.block->keys; k->name && used < len; k++) {
		char v[CONF_MSG_SIZE];
		if (k->type == CONF_FLAG || conf_value_format(k, cfg, v, sizeof(v)) < 0 || !v[0])
			continue; /* flags: the enabled state is written apart; "": not set */
		const struct device *d = !strcmp(k->name, "rx-if") ? dev_by_index(cfg->rx_if) : NULL;
		const char *q = strpbrk(v, " \t") ? "\"" : "";
		used += (size_t)snprintf(buf + used, len - used, " %s %s%s%s", k->name, q, d ? d->name : v, q);
	}
	return used;
}

static void write_streams(struct cli_runcfg *rc, struct cli_session *s)
{
	(void)s;
	static char words[8192]; /* under the command lock */
	for (uint32_t i = 0; i < pg_main.n_streams; i++) {
		const struct pg_stream *st = pg_main.streams[i];
		if (!st)
			continue;
		const char *name = st->cfg.name;
		char key[PG_NAME_MAX + 16], undo[PG_NAME_MAX + 32];
		if (stream_words(words, sizeof(words), &st->cfg) >= sizeof(words)) {
			cli_runcfg_fail(rc);
			return;
		}
		snprintf(key, sizeof(key), "pg %s", name);
		snprintf(undo, sizeof(undo), "packet-generator delete %s", name);
		cli_runcfg_object(rc, key, undo, "packet-generator new %s%s", name, words);
		bool on = __atomic_load_n(&st->enabled, __ATOMIC_RELAXED);
		snprintf(key, sizeof(key), "pg %s enabled", name);
		cli_runcfg_attr(rc, key, !on, "packet-generator %s %s", on ? "enable" : "disable", name);
	}
}

CLI_RUNCFG_WRITER(pg_runcfg, "packet-generator", CLI_RUNCFG_GENERATOR, write_streams)
