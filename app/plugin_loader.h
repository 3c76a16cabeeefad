/* The plugin loader: the `plugins { }` section and what was loaded from it
 * (show plugins). Plugin authors use app/plugin.h instead.
 *
 *   plugins {
 *     path /usr/lib/x86_64-linux-gnu/sluice/plugins
 *     plugin default { disable }          # only plugins enabled below
 *     plugin sample_plugin.so { enable }
 *   }
 *
 * Every NAME.so in path is loaded unless disabled (VPP's rule); `plugin
 * default { disable }` turns that around. Loading refuses, naming the file
 * and the reason: a directory or file not owned by root or by the user
 * sluice runs as, or writable by group or others; a dlopen() error (an
 * unresolved symbol); no descriptor; another plugin API version or other
 * struct sizes; a node, driver or section name that exists already; a
 * failing init. One refusal stops the start-up (exit 2, like a bad
 * startup.conf): sluice never runs with some of its plugins.
 *
 * Thread-safety: loading is start-up only (main thread, before the graph
 * exists); the table is read-only afterwards.
 */
#ifndef SLUICE_APP_PLUGIN_LOADER_H
#define SLUICE_APP_PLUGIN_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/conf.h"

#define PLUGIN_PATH_SIZE 256
#define PLUGIN_MAX 32 /* plugin blocks in startup.conf, and plugins loaded */

/* One `plugin NAME { enable | disable }` block. */
struct plugin_conf_entry {
	char name[CONF_NAME_SIZE];
	bool enable, disable;
};

/* plugins { ... } */
struct plugin_conf {
	char path[PLUGIN_PATH_SIZE];
	uint32_t n;
	struct plugin_conf_entry plugins[PLUGIN_MAX];
};

extern const struct conf_section app_plugins_conf_section;

/* Whether NAME is enabled: its own block, else `plugin default`, else on. */
bool plugin_conf_enabled(const struct plugin_conf *c, const char *name);

enum plugin_state {
	PLUGIN_STATE_LOADED = 0,
	PLUGIN_STATE_DISABLED, /* in the directory, disabled by the config */
};

struct plugin_info {
	char file[CONF_NAME_SIZE + 8];
	char path[PLUGIN_PATH_SIZE + CONF_NAME_SIZE + 8];
	enum plugin_state state;
	/* From the descriptor; NULL while disabled. */
	const char *name, *version, *description;
	uint32_t api_version;
};

/* Load every enabled plugin of c's directory, in file name order. 0, or
 * -EINVAL (any refusal) with "PATH: reason" in err; then the process must
 * not start (constructors of the refused plugin may have registered). A
 * second call does nothing. */
int plugin_load_all(const struct plugin_conf *c, char *err, size_t errlen);

/* What plugin_load_all found, loaded or not. */
uint32_t plugin_count(void);
const struct plugin_info *plugin_get(uint32_t i);
/* The directory it read ("" before it ran). */
const char *plugin_dir(void);

#endif
