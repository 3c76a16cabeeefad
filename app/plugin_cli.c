/* `show plugins [json]`: every NAME.so of the plugin directory, loaded or
 * disabled, with what its descriptor says (VPP's command).
 *
 *   sluice# show plugins
 *   Plugin path is: /usr/lib/x86_64-linux-gnu/sluice/plugins
 *   File              Name    Version  State     Description
 *   sample_plugin.so  sample  1.0      loaded    counts IPv4 packets per flow after ethernet-input
 */
#include <errno.h>
#include <stdlib.h>

#include "app/plugin_loader.h"
#include "cli/cli.h"

static const char *const state_names[] = {
	[PLUGIN_STATE_LOADED] = "loaded",
	[PLUGIN_STATE_DISABLED] = "disabled",
};

static void show_plugins_json(struct cli_session *s)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "path", plugin_dir());
	cJSON *arr = cJSON_AddArrayToObject(root, "plugins");
	for (uint32_t i = 0; i < plugin_count(); i++) {
		const struct plugin_info *p = plugin_get(i);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "file", p->file);
		cJSON_AddStringToObject(o, "path", p->path);
		cJSON_AddStringToObject(o, "state", state_names[p->state]);
		if (p->state == PLUGIN_STATE_LOADED) {
			cJSON_AddStringToObject(o, "name", p->name);
			cJSON_AddStringToObject(o, "version", p->version);
			cJSON_AddStringToObject(o, "description", p->description);
			cJSON_AddNumberToObject(o, "api_version", p->api_version);
		}
		cJSON_AddItemToArray(arr, o);
	}
	cli_json_print(s, root);
}

static int show_plugins(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	if (json) {
		show_plugins_json(s);
		return 0;
	}
	static const struct cli_table_col cols[] = {
		{ "File", false }, { "Name", false }, { "Version", false }, { "State", false }, { "Description", false },
	};
	cli_printf(s, "Plugin path is: %s", plugin_dir()[0] ? plugin_dir() : "(none read)");
	if (!plugin_count()) {
		cli_printf(s, "no plugins");
		return 0;
	}
	struct cli_table *t = cli_table_create(cols, 5);
	if (!t)
		return cli_fail(s, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < plugin_count(); i++) {
		const struct plugin_info *p = plugin_get(i);
		bool on = p->state == PLUGIN_STATE_LOADED;
		cli_table_cell(t, "%s", p->file);
		cli_table_cell(t, "%s", on ? p->name : "-");
		cli_table_cell(t, "%s", on ? p->version : "-");
		cli_table_cell(t, "%s", state_names[p->state]);
		cli_table_cell(t, "%s", on ? p->description : "-");
	}
	cli_table_print(s, t); /* and frees it */
	return 0;
}

CLI_COMMAND(show_plugins_cmd, "show plugins", "show plugins [json]", "plugins found, loaded or disabled", show_plugins)
