/* startup.conf: the one config struct and the parser that fills it.
 *
 * The file is VPP-shaped: sections of `key value` words and nested `{ }`
 * blocks; line breaks carry no meaning; `#` and `//` start comments at the
 * beginning of a word; "quoted strings" take \" and \\. Each section is
 * described by its subsystem's table (base/conf.h); this parser only reads
 * tokens, finds keys and blames positions. An empty file gives the defaults.
 */
#ifndef SLUICE_APP_CONF_H
#define SLUICE_APP_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "app/plugin_loader.h"
#include "app/sched_conf.h"
#include "app/statseg.h"
#include "graph/buffer.h"
#include "base/conf.h"
#include "graph/graph_conf.h"
#include "sched/dist/dist.h"
#include "nodes/ip6/ip6_fib_conf.h"
#include "nodes/lcp/lcp_conf.h"
#include "nodes/pg/pg.h"
#include "sched/timer.h"

#define APP_PATH_SIZE 256
#define APP_MAX_WARNINGS 8

/* unix { ... } keys, for tests and the CLI. */
extern const struct conf_section app_unix_conf_section;

/* unix { ... }: the process itself. */
struct app_unix_config {
	bool daemon;                    /* fork into the background (default: stay) */
	char log[APP_PATH_SIZE];        /* also log to this file ("": stderr only) */
	char pidfile[APP_PATH_SIZE];    /* write the pid here ("": none) */
	char cli_listen[APP_PATH_SIZE]; /* unix socket path or HOST:PORT */
	uint32_t cli_mode;              /* unix socket permissions */
	char cli_group[64];             /* unix socket group ("": the process's) */
	uint32_t cli_max_sessions;      /* concurrent CLI sessions */
	uint64_t cli_idle_timeout_ns;   /* whole seconds; 0: sessions never time out */
	uint32_t cli_max_line;          /* longest command line, bytes */
	char cli_password_file[APP_PATH_SIZE]; /* USER:SECRET lines; "": no login */
	char cli_file_dir[APP_PATH_SIZE]; /* where commands may write files ("": anywhere) */
	char exec[APP_PATH_SIZE];       /* CLI commands run once the graph is up */
};

/* Where a parse went wrong, or a warning came from. */
struct app_conf_msg {
	char file[APP_PATH_SIZE];
	uint32_t line, col;              /* 1-based */
	char msg[2 * CONF_MSG_SIZE];
};

struct sluice_config {
	char file[APP_PATH_SIZE]; /* "(default)" when built in */
	struct app_unix_config unix_conf;
	struct graph_cpu_config cpu;
	struct buffer_config buffers;
	struct conf_interfaces interfaces;
	struct pg_conf pg;
	struct graph_trace_config trace;
	struct graph_elog_config elog;
	struct dist_conf dist;
	struct timer_config sched;
	struct app_sched_conf sched_classes;
	struct statseg_conf statseg;
	struct lcp_conf lcp;
	struct ip6_fib_conf ip6;
	struct plugin_conf plugins;
	uint32_t n_warnings;
	struct app_conf_msg warnings[APP_MAX_WARNINGS];
};

/* The words of an interface block's `ip6-address` (X:X::X:X/L each): with
 * if_index DEV_INDEX_INVALID only checked, else added to that interface
 * (before the datapath runs). 0, or -EINVAL with the word and the reason
 * in why. */
int app_ip6_addresses(const struct conf_interface *ifc, uint32_t if_index, char *why, size_t len);
/* An interface block's feature-enable and feature-disable words: each a
 * registered feature node, none in both; with an interface index (not
 * DEV_INDEX_INVALID), its bits set. 0, or -EINVAL with the reason in why. */
int app_interface_features(const struct conf_interface *ifc, uint32_t if_index, char *why, size_t len);

/* The same for `ip6-ra` (the words of `ip6 nd interface NAME ra`,
 * nodes/ip6/ip6_ra.h): checked, or Router Advertisements turned on. */
int app_ip6_ra(const struct conf_interface *ifc, uint32_t if_index, char *why, size_t len);

/* The configuration sluice runs with when no -c is given. */
extern const char app_conf_default_text[];

/* Parse text (named `file` in messages) into cfg. Returns 0, or -EINVAL
 * with the position and reason in *err and cfg left undefined. */
int sluice_config_parse(struct sluice_config *cfg, const char *file, const char *text,
			struct app_conf_msg *err);

/* Load the plugins (plugin_load_all) between reading the plugins section
 * and the others, so that sections plugins add are known. Set by the
 * daemon; without it (the parser's tests) plugins are not loaded. */
typedef int(app_plugin_loader_fn_t)(const struct plugin_conf *c, char *err, size_t errlen);
void sluice_config_set_plugin_loader(app_plugin_loader_fn_t *fn);

/* Read and parse a file; an unreadable file is an error at 0:0. */
int sluice_config_load(struct sluice_config *cfg, const char *path, struct app_conf_msg *err);

/* "FILE:LINE:COL: error: MESSAGE" (kind "error" or "warning"). */
int app_conf_msg_format(const struct app_conf_msg *m, const char *kind, char *buf, size_t len);

/* The effective configuration in config syntax: every key of every section
 * with its value, which parses back to the same struct. malloc'd; NULL when
 * out of memory. */
char *sluice_config_format(const struct sluice_config *cfg);

#endif
