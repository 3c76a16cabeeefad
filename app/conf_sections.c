/* The sections sluice reads, the `unix` table the app owns, the embedded
 * default configuration, and the printer for the effective configuration
 * (`sluice --check`, `show config`).
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/conf.h"
#include "app/conf_private.h"
#include "app/plugin_loader.h"
#include "cli/cli.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_ra.h"
#include "sluice_version.h"

static const struct conf_key unix_keys[] = {
	{ .name = "nodaemon", .type = CONF_FLAG, .flags = CONF_F_NEGATE,
	  CONF_FIELD(struct app_unix_config, daemon), .doc = "stay in the foreground (the default)" },
	{ .name = "daemon", .type = CONF_FLAG, CONF_FIELD(struct app_unix_config, daemon),
	  .doc = "fork into the background" },
	{ .name = "log", .type = CONF_STRING, CONF_FIELD(struct app_unix_config, log),
	  .doc = "also write log lines to this file" },
	{ .name = "pidfile", .type = CONF_STRING, CONF_FIELD(struct app_unix_config, pidfile),
	  .doc = "write the process id here" },
	{ .name = "cli-listen", .type = CONF_ADDR, .def = SLUICE_DEFAULT_CLI_SOCKET,
	  CONF_FIELD(struct app_unix_config, cli_listen), .doc = "CLI socket path, or HOST:PORT for TCP" },
	{ .name = "cli-mode", .type = CONF_MODE, .def = "0600", CONF_FIELD(struct app_unix_config, cli_mode),
	  .doc = "permissions of the CLI unix socket" },
	{ .name = "cli-group", .type = CONF_STRING, CONF_FIELD(struct app_unix_config, cli_group),
	  .doc = "group of the CLI unix socket (default: the process's)" },
	{ .name = "cli-max-sessions", .type = CONF_UINT, .def = "8", .min = 1, .max = 1024,
	  CONF_FIELD(struct app_unix_config, cli_max_sessions), .doc = "concurrent CLI sessions; more are refused" },
	{ .name = "cli-idle-timeout", .type = CONF_DURATION, .def = "5m", .max = 86400000000000ull,
	  CONF_FIELD(struct app_unix_config, cli_idle_timeout_ns),
	  .doc = "close a CLI session silent this long, whole seconds (0s: never)" },
	{ .name = "cli-max-line", .type = CONF_UINT, .def = "4094", .min = CLI_LINE_MIN, .max = CLI_LINE_MAX,
	  CONF_FIELD(struct app_unix_config, cli_max_line), .doc = "longest CLI command line in bytes" },
	{ .name = "cli-password-file", .type = CONF_STRING, CONF_FIELD(struct app_unix_config, cli_password_file),
	  .doc = "USER:PASSWORD or USER:$HASH lines; every CLI session logs in" },
	{ .name = "cli-file-dir", .type = CONF_STRING, CONF_FIELD(struct app_unix_config, cli_file_dir),
	  .doc = "files CLI commands write (trace save, pcap capture) must lie under it" },
	{ .name = "exec", .type = CONF_STRING, CONF_FIELD(struct app_unix_config, exec),
	  .doc = "CLI commands to run once the graph is up" },
	{ 0 },
};

static int refuse(struct conf_check *chk, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int refuse(struct conf_check *chk, const char *key, const char *fmt, ...)
{
	va_list ap;
	chk->key = key;
	va_start(ap, fmt);
	vsnprintf(chk->msg, sizeof(chk->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* What the CLI server would refuse at start is refused here, so that
 * --check finds it and blames the line. */
static int unix_check(void *obj, struct conf_check *chk)
{
	const struct app_unix_config *u = obj;
	char why[CONF_MSG_SIZE];
	if (u->cli_group[0] && !getgrnam(u->cli_group))
		return refuse(chk, "cli-group", "no group '%s' on this system", u->cli_group);
	if (u->cli_idle_timeout_ns % 1000000000ull)
		return refuse(chk, "cli-idle-timeout", "expected whole seconds");
	if (u->cli_password_file[0]) {
		struct cli_auth *a = cli_auth_load(u->cli_password_file, why, sizeof(why));
		if (!a)
			return refuse(chk, "cli-password-file", "%s", why);
		cli_auth_free(a);
	}
	if (cli_listen_is_tcp(u->cli_listen) && !cli_listen_is_loopback(u->cli_listen) && !u->cli_password_file[0])
		return refuse(chk, "cli-listen",
			      "not a loopback address: a CLI reachable from the network needs cli-password-file");
	if (u->cli_file_dir[0]) {
		char real[PATH_MAX];
		struct stat st;
		if (!realpath(u->cli_file_dir, real) || stat(real, &st) < 0)
			return refuse(chk, "cli-file-dir", "%s", strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return refuse(chk, "cli-file-dir", "%s", strerror(ENOTDIR));
	}
	return 0;
}

const struct conf_section app_unix_conf_section = {
	.name = "unix",
	.doc = "the process: daemon, log, pidfile, CLI socket and access, exec",
	.size = sizeof(struct app_unix_config),
	.keys = unix_keys,
	.check = unix_check,
};

/* Interface blocks are parsed by the driver they name (see conf.c); these
 * keys are every interface's, whatever its driver. */
_Static_assert(DEV_RX_BURST_MAX == 256, "rx-burst's default is the whole range's top");
/* rx-mode's names, indexed by enum dev_rx_mode. */
static const char *const interface_rx_modes[] = { "default", "polling", "interrupt", "adaptive", NULL };
_Static_assert(DEV_RX_MODE_DEFAULT == 0 && DEV_RX_MODE_POLLING == 1 && DEV_RX_MODE_INTERRUPT == 2 &&
		       DEV_RX_MODE_ADAPTIVE == 3 && DEV_RX_MODE_N == 4,
	       "interface rx-mode choices follow enum dev_rx_mode");
const struct conf_key app_interface_keys[] = {
	{ .name = "l2-xconnect", .type = CONF_STRING, CONF_FIELD(struct conf_interface, l2_xconnect),
	  .doc = "send everything received out of this interface of the section (one way)" },
	{ .name = "rx-burst", .type = CONF_UINT, .def = "256", .min = 1, .max = DEV_RX_BURST_MAX,
	  CONF_FIELD(struct conf_interface, rx_burst),
	  .doc = "packets the input node takes per poll of each rx queue (testpmd's --burst); 256 is a frame" },
	{ .name = "rx-mode", .type = CONF_ENUM, .def = "default", .choices = interface_rx_modes,
	  CONF_FIELD(struct conf_interface, rx_mode),
	  .doc = "every rx queue's mode (`set interface rx-mode`); default follows cpu { rx-mode }" },
	{ .name = "ip6-address", .type = CONF_STRING, CONF_FIELD(struct conf_interface, ip6_address),
	  .doc = "IPv6 addresses X:X::X:X/L (several: \"A/L B/L\"); IPv6 on, with the EUI-64 link-local address" },
	{ .name = "ip6-ra", .type = CONF_STRING, CONF_FIELD(struct conf_interface, ip6_ra),
	  .doc = "Router Advertisements: on, or \"[interval S] [lifetime S] [prefix X:X::X:X/L [valid S] "
		 "[preferred S]]\" (`ip6 nd interface NAME ra`'s words)" },
	{ .name = "shaper", .type = CONF_STRING, CONF_FIELD(struct conf_interface, shaper),
	  .doc = "egress token bucket: \"rate R [burst B]\" (`sched shaper interface NAME`'s words, burst 16k)" },
	{ .name = "feature-enable", .type = CONF_STRING, CONF_FIELD(struct conf_interface, feature_enable),
	  .doc = "feature nodes turned on for this interface (\"NODE ...\"; `set interface feature NAME NODE`)" },
	{ .name = "feature-disable", .type = CONF_STRING, CONF_FIELD(struct conf_interface, feature_disable),
	  .doc = "feature nodes turned off for this interface (\"NODE ...\"; a plugin's features start on everywhere)" },
	{ 0 },
};

static bool word_in(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = strstr(list, w); p; p = strstr(p + 1, w))
		if ((p == list || p[-1] == ' ' || p[-1] == '\t') && (p[n] == 0 || p[n] == ' ' || p[n] == '\t'))
			return true;
	return false;
}

/* Each word of an interface's feature-enable and feature-disable names a
 * registered feature node (graph.h), none in both; with an interface
 * index, set its bits (before the graph is built: wired at build). */
int app_interface_features(const struct conf_interface *ifc, uint32_t if_index, char *why, size_t len)
{
	const char *lists[2] = { ifc->feature_enable, ifc->feature_disable };
	const char *keys[2] = { "feature-enable", "feature-disable" };
	for (int l = 0; l < 2; l++) {
		char words[CONF_FEATURES_SIZE], *save = NULL;
		snprintf(words, sizeof(words), "%s", lists[l]);
		for (char *w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
			struct graph_feature_info fi;
			uint32_t found = 0;
			for (uint32_t i = 0; graph_feature_info(i, &fi) == 0; i++) {
				if (strcmp(fi.node, w) != 0)
					continue;
				found++;
				if (if_index != DEV_INDEX_INVALID)
					graph_feature_set(NULL, i, if_index, l == 0);
			}
			if (!found) {
				snprintf(why, len, "%s %s: not a feature node (registered features: %u)", keys[l], w,
					 graph_feature_count());
				return -EINVAL;
			}
			if (l == 1 && word_in(ifc->feature_enable, w)) {
				snprintf(why, len, "feature-disable %s: also in feature-enable", w);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int app_ip6_addresses(const struct conf_interface *ifc, uint32_t if_index, char *why, size_t len)
{
	char words[CONF_IP6_ADDRESS_SIZE], *save = NULL;
	snprintf(words, sizeof(words), "%s", ifc->ip6_address);
	for (char *w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		struct in6_addr a;
		uint8_t plen;
		char err[128];
		if (!ip6_parse_prefix(w, &a, &plen, false)) {
			snprintf(why, len, "ip6-address %s: expected X:X::X:X/L", w);
			return -EINVAL;
		}
		if (if_index != DEV_INDEX_INVALID && ip6_if_addr_add(if_index, &a, plen, err, sizeof(err))) {
			snprintf(why, len, "ip6-address %s: %s", w, err);
			return -EINVAL;
		}
	}
	return 0;
}

int app_ip6_ra(const struct conf_interface *ifc, uint32_t if_index, char *why, size_t len)
{
	char words[CONF_IP6_ADDRESS_SIZE], *save = NULL, *argv[32];
	int argc = 0;
	snprintf(words, sizeof(words), "%s", ifc->ip6_ra);
	for (char *w = strtok_r(words, " \t", &save); w && argc < 32; w = strtok_r(NULL, " \t", &save))
		argv[argc++] = w;
	if (!argc)
		return 0;
	struct ip6_ra_config c;
	bool off;
	const char *bad = "";
	char err[128];
	if (!ip6_ra_parse(argc, argv, &c, &off, &bad)) {
		snprintf(why, len, "ip6-ra: bad or misplaced '%s': expected on, off or [interval S] [lifetime S] "
			 "[prefix X:X::X:X/L [valid S] [preferred S]]", bad);
		return -EINVAL;
	}
	int rc = off ? 0
		     : if_index == DEV_INDEX_INVALID ? ip6_ra_config_check(&c, err, sizeof(err))
						     : ip6_ra_enable(if_index, &c, err, sizeof(err));
	if (rc)
		snprintf(why, len, "ip6-ra: %s", err);
	return rc;
}

/* A cross-connect names another interface of the section. */
static int interfaces_check(void *obj, struct conf_check *chk)
{
	const struct conf_interfaces *ifs = obj;
	for (uint32_t i = 0; i < ifs->n; i++) {
		const char *peer = ifs->ifs[i].l2_xconnect;
		uint32_t j = 0;
		char why[CONF_MSG_SIZE];
		uint64_t rate, burst;
		if (app_ip6_addresses(&ifs->ifs[i], DEV_INDEX_INVALID, why, sizeof(why)) ||
		    app_interface_features(&ifs->ifs[i], DEV_INDEX_INVALID, why, sizeof(why)) ||
		    app_ip6_ra(&ifs->ifs[i], DEV_INDEX_INVALID, why, sizeof(why)) ||
		    app_shaper_parse(ifs->ifs[i].shaper, &rate, &burst, why, sizeof(why))) {
			snprintf(chk->msg, sizeof(chk->msg), "interface '%s' (line %u): %.200s", ifs->ifs[i].name,
				 ifs->ifs[i].line, why);
			return -EINVAL;
		}
		if (!peer[0])
			continue;
		while (j < ifs->n && strcmp(ifs->ifs[j].name, peer) != 0)
			j++;
		if (j == i || j == ifs->n) {
			snprintf(chk->msg, sizeof(chk->msg), "interface '%s' (line %u): l2-xconnect %s: %s",
				 ifs->ifs[i].name, ifs->ifs[i].line, peer,
				 j == i ? "an interface cannot be cross-connected to itself"
					: "expected another interface of this section");
			return -EINVAL;
		}
	}
	return 0;
}

static const struct conf_section interfaces_section = {
	.name = "interfaces",
	.doc = "one block per interface: NAME { driver X ... }",
	.size = sizeof(struct conf_interfaces),
	.check = interfaces_check,
};

const struct app_section app_sections[] = {
	{ &app_unix_conf_section, offsetof(struct sluice_config, unix_conf), false },
	{ &graph_cpu_conf_section, offsetof(struct sluice_config, cpu), false },
	{ &graph_buffers_conf_section, offsetof(struct sluice_config, buffers), false },
	{ &interfaces_section, offsetof(struct sluice_config, interfaces), true },
	{ &pg_conf_section, offsetof(struct sluice_config, pg), false },
	{ &graph_trace_conf_section, offsetof(struct sluice_config, trace), false },
	{ &graph_elog_conf_section, offsetof(struct sluice_config, elog), false },
	{ &dist_conf_section, offsetof(struct sluice_config, dist), false },
	{ &timer_conf_section, offsetof(struct sluice_config, sched), false },
	{ &app_sched_conf_section, offsetof(struct sluice_config, sched_classes), false },
	{ &statseg_conf_section, offsetof(struct sluice_config, statseg), false },
	{ &lcp_conf_section, offsetof(struct sluice_config, lcp), false },
	{ &ip6_fib_conf_section, offsetof(struct sluice_config, ip6), false },
	{ &app_plugins_conf_section, offsetof(struct sluice_config, plugins), false },
};
const size_t app_n_sections = ARRAY_LEN(app_sections);
_Static_assert(ARRAY_LEN(app_sections) <= APP_MAX_SECTIONS, "raise APP_MAX_SECTIONS");

const struct app_section *app_section_find(const char *name)
{
	for (size_t i = 0; i < app_n_sections; i++)
		if (strcmp(app_sections[i].sec->name, name) == 0)
			return &app_sections[i];
	return NULL;
}

/* What sluice runs without -c, and what startup.conf at the repo root
 * writes out: the whole pipeline on two cores, with no NIC and little CPU.
 * Two generator streams on the main thread enter as frames received on pg0
 * (a null interface, index 0, whose own rx is silent): ef, DSCP 46, and
 * bulk, DSCP 8 (CS1) over 64 source ports. Two classes match them, so
 * sched-ingress classifies every packet and queues it by class; sched-dist
 * hands the flows to the one worker through the distributor; the worker
 * runs ethernet-input, l2-xconnect (pg0 into nul0) and interface-output,
 * and sched-egress shapes nul0 to 2 Mbit/s, ef leaving first. About 2.4
 * Mbit/s are offered, so the shaper's queue (max-held 64) stays full and
 * its overflow is dropped. Paced streams let the main thread sleep
 * between tokens and the worker between handoffs and shaper timers. */
const char app_conf_default_text[] =
	"unix {\n"
	"  cli-listen " SLUICE_DEFAULT_CLI_SOCKET "\n"
	"}\n"
	"cpu {\n"
	"  workers 1\n"
	"}\n"
	"interfaces {\n"
	"  pg0 { driver null  l2-xconnect nul0 }\n"
	"  nul0 { driver null  shaper \"rate 2mbit burst 16k\" }\n"
	"}\n"
	"packet-generator {\n"
	"  ef { rate 100pps  size 200  dscp 46  next-node ethernet-input  rx-if 0 }\n"
	"  bulk { rate 200pps  size 1400  dscp 8  src-port 1024-1087  next-node ethernet-input  rx-if 0 }\n"
	"}\n"
	"distributor {\n"
	"  enable\n"
	"}\n"
	"sched {\n"
	"  max-held 64\n"
	"}\n"
	"sched-classes {\n"
	"  ef { priority 0  match \"dscp 46\" }\n"
	"  bulk { priority 7  match \"dscp 8\" }\n"
	"}\n";

/* ---- printing ---- */

static void print_keys(FILE *f, const struct conf_key *keys, const void *obj, int indent)
{
	char val[4 * CONF_MSG_SIZE + 2 * 2048];
	for (const struct conf_key *k = keys; k && k->name; k++) {
		conf_value_format(k, obj, val, sizeof(val));
		/* Flags print only when set, and an empty custom value means
		 * the key is unused; strings print "" themselves. */
		if (!val[0])
			continue;
		if (k->type == CONF_FLAG)
			fprintf(f, "%*s%s\n", indent, "", val);
		else
			fprintf(f, "%*s%s %s\n", indent, "", k->name, val);
	}
}

/* Every interface's own keys but an empty one (no l2-xconnect: L3), which
 * would print as "". */
static void print_interface_keys(FILE *f, const struct conf_interface *ifc)
{
	for (const struct conf_key *k = app_interface_keys; k->name; k++) {
		char val[CONF_MSG_SIZE];
		conf_value_format(k, ifc, val, sizeof(val));
		if (strcmp(val, "\"\"") != 0)
			fprintf(f, "    %s %s\n", k->name, val);
	}
}

static void print_interfaces(FILE *f, const struct conf_interfaces *ifs)
{
	for (uint32_t i = 0; i < ifs->n; i++) {
		const struct conf_interface *ifc = &ifs->ifs[i];
		fprintf(f, "  %s {\n    driver %s\n", ifc->name, ifc->driver->name);
		print_keys(f, ifc->driver->keys, ifc->driver_conf, 4);
		print_interface_keys(f, ifc);
		fprintf(f, "  }\n");
	}
}

static void print_blocks(FILE *f, const struct conf_block *b, const uint8_t *sect)
{
	uint32_t n;
	memcpy(&n, sect + b->count_offset, sizeof(n));
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *elem = sect + b->array_offset + (size_t)i * b->elem_size;
		char name[CONF_MSG_SIZE];
		struct conf_key nk = { .type = CONF_STRING, .offset = b->name_offset, .size = b->name_size };
		conf_value_format(&nk, elem, name, sizeof(name));
		fprintf(f, "  %s%s%s {\n", b->keyword ? b->keyword : "", b->keyword ? " " : "", name);
		print_keys(f, b->keys, elem, 4);
		fprintf(f, "  }\n");
	}
}

char *sluice_config_format(const struct sluice_config *cfg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fprintf(f, "# effective configuration of %s\n", cfg->file);
	for (size_t i = 0; i < app_n_sections; i++) {
		const struct app_section *as = &app_sections[i];
		const uint8_t *obj = (const uint8_t *)cfg + as->offset;
		fprintf(f, "%s {\n", as->sec->name);
		print_keys(f, as->sec->keys, obj, 2);
		if (as->interfaces)
			print_interfaces(f, (const struct conf_interfaces *)obj);
		else if (as->sec->block)
			print_blocks(f, as->sec->block, obj);
		fprintf(f, "}\n");
	}
	for (uint32_t i = 0; i < conf_section_count(); i++) {
		const struct conf_section_reg *r = conf_section_get(i);
		fprintf(f, "%s {\n", r->sec->name);
		print_keys(f, r->sec->keys, r->obj, 2);
		if (r->sec->block)
			print_blocks(f, r->sec->block, r->obj);
		fprintf(f, "}\n");
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
