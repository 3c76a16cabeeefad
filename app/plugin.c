/* The plugin loader (app/plugin_loader.h): checks a plugin's directory and
 * file the way a loader of code running as root must (who owns them, who
 * may write them), dlopen()s it, checks its descriptor, checks what its
 * constructors registered against what was there, and runs its init. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/conf_private.h"
#include "app/plugin.h"
#include "app/plugin_loader.h"
#include "app/statseg.h"
#include "sluice_version.h"

static struct plugin_info plugins[PLUGIN_MAX];
static uint32_t n_plugins;
static char dir[PLUGIN_PATH_SIZE];
static bool loaded;

static int refuse(char *err, size_t errlen, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	va_list ap;
	size_t off = (size_t)snprintf(err, errlen, "plugin %s: ", path);
	va_start(ap, fmt);
	if (off < errlen)
		vsnprintf(err + off, errlen - off, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Code sluice runs must be writable only by whoever could change sluice
 * itself: root, or the user it runs as. */
static int check_owner(const char *path, bool want_dir, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return refuse(err, errlen, path, "%s", strerror(errno));
	if (want_dir != !!S_ISDIR(st.st_mode))
		return refuse(err, errlen, path, want_dir ? "not a directory" : "not a regular file");
	if (!want_dir && !S_ISREG(st.st_mode))
		return refuse(err, errlen, path, "not a regular file");
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return refuse(err, errlen, path, "owned by uid %u, neither root nor sluice's user (uid %u)",
			      (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return refuse(err, errlen, path, "%s writable by %s (mode %04o): refused",
			      want_dir ? "directory" : "file",
			      (st.st_mode & S_IWGRP) && (st.st_mode & S_IWOTH) ? "group and others"
			      : (st.st_mode & S_IWGRP)                         ? "group"
										: "others",
			      (unsigned)(st.st_mode & 07777));
	return 0;
}

static int only_so(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return n > 3 && strcmp(d->d_name + n - 3, ".so") == 0;
}

/* The descriptor was built against these headers. */
static int check_desc(const struct sluice_plugin_desc *d, const char *path, char *err, size_t errlen)
{
	static const struct sluice_plugin_abi here = SLUICE_PLUGIN_ABI_HERE;
	static const char *const names[] = { "node_reg", "node_runtime", "buffer", "frame", "cli_command_reg",
					     "conf_key", "conf_section", "dev_driver", "node_feature" };
	_Static_assert(sizeof(here) == ARRAY_LEN(names) * sizeof(uint32_t), "one name per size");
	if (d->api_version != SLUICE_PLUGIN_API_VERSION)
		return refuse(err, errlen, path, "built for plugin API version %u, this sluice has version %u",
			      d->api_version, SLUICE_PLUGIN_API_VERSION);
	const uint32_t *a = &d->abi.node_reg, *b = &here.node_reg;
	for (size_t i = 0; i < ARRAY_LEN(names); i++)
		if (a[i] != b[i])
			return refuse(err, errlen, path, "built against other headers: struct %s is %u bytes there, %u here",
				      names[i], a[i], b[i]);
	if (!d->name || !d->name[0])
		return refuse(err, errlen, path, "its descriptor has no name");
	return 0;
}

/* What the plugin's constructors added (entries from the given counts on)
 * must not take a name that exists. */
static int check_registered(uint32_t nodes0, uint32_t drivers0, uint32_t sections0, uint32_t dropped0,
			    uint32_t twice0, uint32_t drv_dropped0, const char *path, char *err, size_t errlen)
{
	const char *cmd = NULL;
	if (dev_driver_dropped() != drv_dropped0)
		return refuse(err, errlen, path, "registers %u driver(s) the driver table (%d entries) has no room for",
			      dev_driver_dropped() - drv_dropped0, DEV_MAX_DRIVERS);
	if (cli_command_twice(&cmd) != twice0)
		return refuse(err, errlen, path, "registers CLI command '%s', which exists already", cmd);
	uint32_t n = node_registry_count();
	for (uint32_t i = nodes0; i < n; i++)
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(node_registry_get(i)->name, node_registry_get(j)->name) == 0)
				return refuse(err, errlen, path, "registers node '%s', which exists already",
					      node_registry_get(i)->name);
	for (uint32_t i = drivers0; i < conf_driver_count(); i++)
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(conf_driver_get(i)->name, conf_driver_get(j)->name) == 0)
				return refuse(err, errlen, path, "registers driver '%s', which exists already",
					      conf_driver_get(i)->name);
	if (conf_section_dropped() != dropped0)
		return refuse(err, errlen, path, "registers a startup.conf section past the %d plugins may add",
			      CONF_MAX_EXTRA_SECTIONS);
	for (uint32_t i = sections0; i < conf_section_count(); i++) {
		const char *name = conf_section_get(i)->sec->name;
		bool dup = app_section_find(name) != NULL;
		for (uint32_t j = 0; j < i && !dup; j++)
			dup = strcmp(conf_section_get(j)->sec->name, name) == 0;
		if (dup)
			return refuse(err, errlen, path, "registers startup.conf section '%s', which exists already", name);
	}
	return 0;
}

static int load_one(struct plugin_info *p, char *err, size_t errlen)
{
	uint32_t nodes0 = node_registry_count(), drivers0 = conf_driver_count();
	uint32_t sections0 = conf_section_count(), dropped0 = conf_section_dropped();
	uint32_t twice0 = cli_command_twice(NULL), drv_dropped0 = dev_driver_dropped();
	uint32_t ctr_refused0 = statseg_counters_refused(NULL);
	int rc = check_owner(p->path, false, err, errlen);
	if (rc)
		return rc;
	/* RTLD_NOW: a symbol sluice does not export fails here, at start, not
	 * on the first packet. RTLD_LOCAL: plugins do not see each other. */
	void *h = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return refuse(err, errlen, p->path, "dlopen: %s", dlerror());
	const struct sluice_plugin_desc *d = dlsym(h, SLUICE_PLUGIN_SYMBOL);
	if (!d)
		return refuse(err, errlen, p->path, "no descriptor (symbol '%s'): not a sluice plugin, or built "
			      "without SLUICE_PLUGIN()", SLUICE_PLUGIN_SYMBOL);
	rc = check_desc(d, p->path, err, errlen);
	if (rc == 0)
		rc = check_registered(nodes0, drivers0, sections0, dropped0, twice0, drv_dropped0, p->path, err, errlen);
	const char *why_ctr;
	if (rc == 0 && statseg_counters_refused(&why_ctr) != ctr_refused0)
		rc = refuse(err, errlen, p->path, "%s", why_ctr);
	if (rc)
		return rc;
	char why[CONF_MSG_SIZE] = "";
	if (d->init && (rc = d->init(why, sizeof(why))) != 0)
		return refuse(err, errlen, p->path, "init failed: %s", why[0] ? why : strerror(-rc));
	/* The handle stays open for the life of the process: its nodes,
	 * commands and sections are in the registries. */
	p->name = d->name;
	p->version = d->version ? d->version : "";
	p->description = d->description ? d->description : "";
	p->api_version = d->api_version;
	p->state = PLUGIN_STATE_LOADED;
	base_log("plugins", "loaded %s (%s %s)", p->path, p->name, p->version);
	return 0;
}

/* Every NAME.so the config enables must be there. */
static int check_named(const struct plugin_conf *c, struct dirent **ents, int n, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < c->n; i++) {
		int j = 0;
		if (strcmp(c->plugins[i].name, "default") == 0)
			continue;
		while (j < n && strcmp(ents[j]->d_name, c->plugins[i].name) != 0)
			j++;
		if (j == n && c->plugins[i].enable)
			return refuse(err, errlen, c->plugins[i].name, "enabled in startup.conf but not in %s", c->path);
	}
	return 0;
}

int plugin_load_all(const struct plugin_conf *c, char *err, size_t errlen)
{
	struct stat st;
	if (loaded)
		return 0;
	loaded = true;
	snprintf(dir, sizeof(dir), "%s", c->path);
	/* The install's own directory may be missing (nothing installed
	 * there) unless a plugin is enabled by name; a directory the config
	 * names must exist. */
	bool named = false;
	for (uint32_t i = 0; i < c->n; i++)
		named |= c->plugins[i].enable && strcmp(c->plugins[i].name, "default") != 0;
	if (strcmp(c->path, SLUICE_PLUGIN_DIR) == 0 && stat(c->path, &st) < 0 && errno == ENOENT && !named)
		return 0;
	int rc = check_owner(c->path, true, err, errlen);
	if (rc)
		return rc;
	struct dirent **ents;
	int n = scandir(c->path, &ents, only_so, alphasort);
	if (n < 0)
		return refuse(err, errlen, c->path, "%s", strerror(errno));
	rc = check_named(c, ents, n, err, errlen);
	for (int i = 0; i < n && rc == 0; i++) {
		struct plugin_info *p = &plugins[n_plugins];
		if (n_plugins == PLUGIN_MAX) {
			rc = refuse(err, errlen, c->path, "more than %d plugins", PLUGIN_MAX);
			break;
		}
		if (strlen(ents[i]->d_name) >= CONF_NAME_SIZE) {
			rc = refuse(err, errlen, ents[i]->d_name, "a name longer than %d characters", CONF_NAME_SIZE - 1);
			break;
		}
		memset(p, 0, sizeof(*p));
		snprintf(p->file, sizeof(p->file), "%.*s", CONF_NAME_SIZE, ents[i]->d_name);
		snprintf(p->path, sizeof(p->path), "%.*s/%.*s", PLUGIN_PATH_SIZE, c->path, CONF_NAME_SIZE, ents[i]->d_name);
		n_plugins++;
		p->state = PLUGIN_STATE_DISABLED;
		if (plugin_conf_enabled(c, p->file))
			rc = load_one(p, err, errlen);
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return rc;
}

uint32_t plugin_count(void)
{
	return n_plugins;
}

const struct plugin_info *plugin_get(uint32_t i)
{
	return i < n_plugins ? &plugins[i] : NULL;
}

const char *plugin_dir(void)
{
	return dir;
}
