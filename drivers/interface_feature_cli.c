/* Features per interface (graph.h, "features per interface"): VPP's
 * `set interface feature`, `show interface features`, their lines in the
 * running configuration, and an interface's bits forgotten when it goes.
 *
 * sluice# set interface feature pg0 sample-flow disable
 * pg0: sample-flow off (ethernet-input -> ip4-input)
 * sluice# show interface features pg0
 * pg0
 *   ethernet-input -> ip4-input
 *     sample-flow  off  (default on)
 *
 * The graph is rewired under the barrier (graph_feature_set); a word that
 * names no interface, no feature or not its arc prints usage and changes
 * nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "drivers/device.h"
#include "drivers/drivers_cli.h"
#include "graph/graph.h"

_Static_assert(DEV_MAX <= GRAPH_FEATURE_IF_MAX, "a feature bit for every interface index");

#define ARC_NAME_SIZE 128

static void arc_name(const struct graph_feature_info *fi, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%s", fi->from, fi->to);
}

static bool feature_on(const struct graph_feature_info *fi, uint32_t if_index)
{
	return fi->on >> if_index & 1;
}

/* The feature records of node (on arc, when given: "FROM:TO"); count. */
static uint32_t find_features(const char *node, const char *arc, uint32_t *idx, uint32_t max)
{
	uint32_t n = 0;
	struct graph_feature_info fi;
	char name[ARC_NAME_SIZE];
	for (uint32_t i = 0; graph_feature_info(i, &fi) == 0; i++) {
		arc_name(&fi, name, sizeof(name));
		if (strcmp(fi.node, node) == 0 && (!arc || strcmp(arc, name) == 0) && n < max)
			idx[n++] = i;
	}
	return n;
}

static void feature_names(char *buf, size_t len)
{
	struct graph_feature_info fi;
	size_t off = 0;
	buf[0] = 0;
	for (uint32_t i = 0; graph_feature_info(i, &fi) == 0 && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", fi.node);
	if (!off)
		snprintf(buf, len, "none");
}

/* set interface feature IF NODE [arc FROM:TO] [disable] */
static int set_interface_feature(struct cli_session *s, int argc, char **argv)
{
	const char *arc = NULL;
	bool disable = false;
	int pos = 2;
	if (argc < 2)
		return cli_fail(s, -EINVAL, "expected an interface and a feature node");
	while (pos < argc) {
		if (strcmp(argv[pos], "disable") == 0 && !disable) {
			disable = true;
			pos++;
		} else if (strcmp(argv[pos], "arc") == 0 && !arc && pos + 1 < argc) {
			arc = argv[pos + 1];
			pos += 2;
		} else {
			return cli_fail(s, -EINVAL, "unexpected '%s'", argv[pos]);
		}
	}
	struct device *d = dev_cli_need(s, argv[0]);
	if (!d)
		return -EINVAL;
	uint32_t idx[GRAPH_FEATURE_IF_MAX];
	uint32_t n = find_features(argv[1], arc, idx, GRAPH_FEATURE_IF_MAX);
	if (!n) {
		char names[256];
		feature_names(names, sizeof(names));
		if (arc && find_features(argv[1], NULL, idx, 1))
			return cli_fail(s, -EINVAL, "feature %s is not on arc %s", argv[1], arc);
		return cli_fail(s, -EINVAL, "no feature %s (features: %s)", argv[1], names);
	}
	for (uint32_t i = 0; i < n; i++) {
		struct graph_feature_info fi;
		int rc = graph_feature_set(cli_graph(s), idx[i], d->index, !disable);
		if (rc)
			return cli_fail(s, rc, "cannot set feature %s: %s", argv[1], strerror(-rc));
		graph_feature_info(idx[i], &fi);
		cli_printf(s, "%s: %s %s (%s -> %s)", d->name, fi.node, feature_on(&fi, d->index) ? "on" : "off",
			   fi.from, fi.to);
	}
	return 0;
}

CLI_COMMAND(set_interface_feature_cmd, "set interface feature", "set interface feature NAME NODE [arc FROM:TO] [disable]",
	    "Turn a feature node on (or off) for one interface's packets (VPP's command)", set_interface_feature)

/* Whether feature i (fi) is the first registered on its arc: each arc is
 * shown once, under its first feature. */
static bool arc_first(uint32_t i, const struct graph_feature_info *fi)
{
	struct graph_feature_info fj;
	for (uint32_t j = 0; j < i; j++)
		if (graph_feature_info(j, &fj) == 0 && strcmp(fj.from, fi->from) == 0 && strcmp(fj.to, fi->to) == 0)
			return false;
	return true;
}

/* Arcs in the order their first feature registered, each with its features. */
static void show_json(struct cli_session *s, const struct device *d)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "interface", d->name);
	cJSON_AddNumberToObject(root, "index", d->index);
	cJSON *arcs = cJSON_AddArrayToObject(root, "arcs");
	struct graph_feature_info fi, fj;
	for (uint32_t i = 0; graph_feature_info(i, &fi) == 0; i++) {
		if (!arc_first(i, &fi))
			continue;
		cJSON *a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "from", fi.from);
		cJSON_AddStringToObject(a, "to", fi.to);
		cJSON *fs = cJSON_AddArrayToObject(a, "features");
		for (uint32_t j = i; graph_feature_info(j, &fj) == 0; j++) {
			if (strcmp(fj.from, fi.from) || strcmp(fj.to, fi.to))
				continue;
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "node", fj.node);
			cJSON_AddBoolToObject(o, "on", feature_on(&fj, d->index));
			cJSON_AddBoolToObject(o, "default_on", fj.default_on);
			cJSON_AddItemToArray(fs, o);
		}
		cJSON_AddItemToArray(arcs, a);
	}
	cli_json_print(s, root);
}

/* The text is the JSON's content, one arc heading per arc. */
static void show_text(struct cli_session *s, const struct device *d)
{
	struct graph_feature_info fi, fj;
	cli_printf(s, "%s", d->name);
	if (!graph_feature_count()) {
		cli_printf(s, "  no features");
		return;
	}
	for (uint32_t i = 0; graph_feature_info(i, &fi) == 0; i++) {
		if (!arc_first(i, &fi))
			continue;
		cli_printf(s, "  %s -> %s", fi.from, fi.to);
		for (uint32_t j = i; graph_feature_info(j, &fj) == 0; j++)
			if (strcmp(fj.from, fi.from) == 0 && strcmp(fj.to, fi.to) == 0)
				cli_printf(s, "    %-24s %-3s  (default %s)", fj.node,
					   feature_on(&fj, d->index) ? "on" : "off", fj.default_on ? "on" : "off");
	}
}

static int show_interface_features(struct cli_session *s, int argc, char **argv)
{
	bool json = cli_take_flag(&argc, argv, "json");
	if (argc != 1)
		return cli_fail(s, -EINVAL, "expected one interface name");
	struct device *d = dev_cli_need(s, argv[0]);
	if (!d)
		return -EINVAL;
	if (json)
		show_json(s, d);
	else
		show_text(s, d);
	return 0;
}

CLI_COMMAND(show_interface_features_cmd, "show interface features", "show interface features NAME [json]",
	    "Every arc's features and whether each is on for the interface", show_interface_features)

/* `set interface feature` lines for what differs from the default; after
 * the interfaces' settings, before their addresses. */
static void write_features(struct cli_runcfg *rc, struct cli_session *s)
{
	(void)s;
	struct device *d;
	struct graph_feature_info fi;
	char key[DEV_NAME_SIZE + 64 + ARC_NAME_SIZE], arc[ARC_NAME_SIZE];
	DEV_FOREACH(d)
	{
		if (d->mode == DEV_MODE_LCP) /* linux-cp's: it follows its port */
			continue;
		for (uint32_t i = 0; graph_feature_info(i, &fi) == 0; i++) {
			bool on = feature_on(&fi, d->index);
			arc_name(&fi, arc, sizeof(arc));
			snprintf(key, sizeof(key), "if %s feature %s %s", d->name, fi.node, arc);
			cli_runcfg_attr(rc, key, on == fi.default_on, "set interface feature %s %s%s", d->name, fi.node,
					on ? "" : " disable");
		}
	}
}

CLI_RUNCFG_WRITER(interface_features_runcfg, "interface features", CLI_RUNCFG_INTERFACE_SET + 50, write_features)

/* An interface gone: its index's bits back to each feature's default, so
 * that the next interface made at that index starts like any new one. */
static void features_if_deleted(uint32_t if_index)
{
	graph_feature_if_reset(NULL, if_index);
}

static void __attribute__((constructor)) features_delete_hook(void)
{
	dev_on_delete(features_if_deleted);
}
