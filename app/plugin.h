/* The plugin author's header: what a shared object needs to be loaded by
 * sluice at start (plugins { } in startup.conf, docs/plugins.md).
 *
 * A plugin is a .so that registers what the built-in parts register, with
 * the same macros, from its constructors (they run when sluice dlopen()s
 * it, before the graph is built): nodes (NODE_REGISTER, graph/node.h),
 * features placing a node on an existing arc (NODE_FEATURE_REGISTER),
 * drivers (DEV_DRIVER_REGISTER, drivers/device.h), CLI commands
 * (CLI_COMMAND, cli/cli.h) and startup.conf sections
 * (CONF_SECTION_REGISTER, base/conf.h). It declares itself once:
 *
 *   SLUICE_PLUGIN(.name = "sample", .version = "1.0",
 *                 .description = "counts IPv4 packets per flow", .init = sample_init);
 *
 * The descriptor carries the plugin API version and the sizes of the
 * structs the plugin shares with sluice, as they were when it was built;
 * sluice refuses a plugin whose version or sizes differ from its own.
 */
#ifndef SLUICE_APP_PLUGIN_H
#define SLUICE_APP_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "base/conf.h"
#include "cli/cli.h"
#include "drivers/device.h"
#include "graph/buffer.h"
#include "graph/node.h"

/* Raised whenever a public header changes in a way a built plugin would
 * notice (a struct's layout, a macro's expansion, a function's meaning). */
/* 2: struct node_feature's default_off (features on or off per interface). */
#define SLUICE_PLUGIN_API_VERSION 2

/* The symbol sluice looks the descriptor up by. */
#define SLUICE_PLUGIN_SYMBOL "sluice_plugin"

/* Sizes of the shared structs, as the plugin saw them. */
struct sluice_plugin_abi {
	uint32_t node_reg, node_runtime, buffer, frame, cli_command_reg, conf_key, conf_section, dev_driver;
	uint32_t node_feature;
};

#define SLUICE_PLUGIN_ABI_HERE                                                                 \
	{ .node_reg = sizeof(struct node_reg), .node_runtime = sizeof(struct node_runtime),       \
	  .buffer = sizeof(struct buffer), .frame = sizeof(struct frame),                        \
	  .cli_command_reg = sizeof(struct cli_command_reg), .conf_key = sizeof(struct conf_key),  \
	  .conf_section = sizeof(struct conf_section), .dev_driver = sizeof(struct dev_driver),        \
	  .node_feature = sizeof(struct node_feature) }

/* Called once after the plugin's constructors ran and sluice accepted the
 * descriptor, before startup.conf's sections (a plugin's own included)
 * are read and before the graph is built. Returns 0, or a negative errno
 * with the reason in err: sluice then refuses to start. */
typedef int(sluice_plugin_init_fn_t)(char *err, size_t errlen);

struct sluice_plugin_desc {
	uint32_t api_version;         /* SLUICE_PLUGIN_API_VERSION when built */
	struct sluice_plugin_abi abi; /* SLUICE_PLUGIN_ABI_HERE when built */
	const char *name;             /* required: `show plugins` */
	const char *version;          /* the plugin's own */
	const char *description;      /* one line */
	sluice_plugin_init_fn_t *init; /* optional */
};

/* Define the plugin's descriptor; the arguments are designated
 * initialisers of struct sluice_plugin_desc (.name, .version,
 * .description, .init). */
#define SLUICE_PLUGIN(...)                                                                     \
	__attribute__((visibility("default"))) const struct sluice_plugin_desc sluice_plugin = {  \
		.api_version = SLUICE_PLUGIN_API_VERSION, .abi = SLUICE_PLUGIN_ABI_HERE, __VA_ARGS__ }

#endif
