/* The plugins { } section: the directory and the per-plugin switches. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "app/plugin_loader.h"
#include "sluice_version.h"

static int plugin_entry_check(void *obj, struct conf_check *chk)
{
	const struct plugin_conf_entry *e = obj;
	if (e->enable == e->disable) {
		snprintf(chk->msg, sizeof(chk->msg), "expected one of enable, disable");
		return -EINVAL;
	}
	return 0;
}

static const struct conf_key plugin_entry_keys[] = {
	{ .name = "enable", .type = CONF_FLAG, CONF_FIELD(struct plugin_conf_entry, enable),
	  .doc = "load this plugin" },
	{ .name = "disable", .type = CONF_FLAG, CONF_FIELD(struct plugin_conf_entry, disable),
	  .doc = "do not load this plugin (`plugin default { disable }`: only those enabled)" },
	{ 0 },
};

static const struct conf_block plugin_block = {
	.what = "plugin",
	.keyword = "plugin",
	.keys = plugin_entry_keys,
	.elem_size = sizeof(struct plugin_conf_entry),
	.array_offset = offsetof(struct plugin_conf, plugins),
	.count_offset = offsetof(struct plugin_conf, n),
	.max = PLUGIN_MAX,
	.name_offset = offsetof(struct plugin_conf_entry, name),
	.name_size = sizeof(((struct plugin_conf_entry *)0)->name),
	.check = plugin_entry_check,
};

static const struct conf_key plugins_keys[] = {
	{ .name = "path", .type = CONF_STRING, .def = SLUICE_PLUGIN_DIR, CONF_FIELD(struct plugin_conf, path),
	  .doc = "directory of the plugins (NAME.so), owned by root or sluice's user, not group/other-writable" },
	{ 0 },
};

/* A name that is not NAME.so would never match a file. */
static int plugins_check(void *obj, struct conf_check *chk)
{
	const struct plugin_conf *c = obj;
	for (uint32_t i = 0; i < c->n; i++) {
		const char *n = c->plugins[i].name;
		size_t len = strlen(n);
		if (strcmp(n, "default") != 0 && (len < 4 || strcmp(n + len - 3, ".so") != 0 || strchr(n, '/'))) {
			snprintf(chk->msg, sizeof(chk->msg), "plugin '%s': expected NAME.so (a file of path) or default", n);
			return -EINVAL;
		}
	}
	return 0;
}

const struct conf_section app_plugins_conf_section = {
	.name = "plugins",
	.doc = "shared objects loaded at start: path, plugin NAME.so { enable | disable }",
	.size = sizeof(struct plugin_conf),
	.keys = plugins_keys,
	.block = &plugin_block,
	.check = plugins_check,
};

bool plugin_conf_enabled(const struct plugin_conf *c, const char *name)
{
	bool def = true;
	for (uint32_t i = 0; i < c->n; i++) {
		if (strcmp(c->plugins[i].name, name) == 0)
			return c->plugins[i].enable;
		if (strcmp(c->plugins[i].name, "default") == 0)
			def = c->plugins[i].enable;
	}
	return def;
}
