/* The app's CLI command: `show config`, the effective configuration the
 * daemon runs with, printed exactly as `sluice --check` prints it.
 *
 *   sluice# show config
 *   # effective configuration of /etc/sluice/startup.conf
 *   unix {
 *     cli-listen /run/sluice/cli.sock
 *     cli-mode 0600
 *   ...
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "app/app_cli.h"
#include "base/util.h"
#include "cli/cli.h"

/* Set once at start-up before the server starts, read by sessions after. */
static const struct sluice_config *running_config;

void app_cli_set_config(const struct sluice_config *cfg)
{
	running_config = cfg;
}

const struct sluice_config *app_cli_config(void)
{
	return running_config;
}

/* One `key value`, `key` (a flag: true) or `key ""` line into o. A key
 * met again (a list) turns into an array of its values. */
static void config_json_value(cJSON *o, char *line)
{
	char *value = strchr(line, ' ');
	if (value)
		*value++ = 0;
	size_t n = value ? strlen(value) : 0;
	if (n >= 2 && value[0] == '"' && value[n - 1] == '"') {
		value[n - 1] = 0;
		value++;
	}
	cJSON *v = value ? cJSON_CreateString(value) : cJSON_CreateTrue();
	cJSON *old = cJSON_GetObjectItemCaseSensitive(o, line);
	if (!old) {
		cJSON_AddItemToObject(o, line, v);
		return;
	}
	if (!cJSON_IsArray(old)) {
		cJSON *arr = cJSON_CreateArray();
		cJSON_AddItemToArray(arr, cJSON_DetachItemViaPointer(o, old));
		cJSON_AddItemToObject(o, line, arr);
		old = arr;
	}
	cJSON_AddItemToArray(old, v);
}

/* The text sluice_config_format writes (sections `name {` ... `}`, one
 * `key value` a line, a leading `# effective configuration of PATH`) as
 * nested objects: {"config": {"source": PATH, "unix": {"cli-listen": ...}}}.
 * Keys keep startup.conf's spelling and values stay as written ("10kpps",
 * "5m"), so that the JSON reads back as the file does. */
static cJSON *config_json(char *text)
{
	static const char source_tag[] = "# effective configuration of ";
	cJSON *root = cJSON_CreateObject();
	cJSON *stack[16] = { cJSON_AddObjectToObject(root, "config") };
	uint32_t depth = 0;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		l += strspn(l, " \t");
		size_t n = strlen(l);
		if (!strncmp(l, source_tag, sizeof(source_tag) - 1))
			cJSON_AddStringToObject(stack[0], "source", l + sizeof(source_tag) - 1);
		else if (!n || l[0] == '#')
			continue;
		else if (!strcmp(l, "}"))
			depth -= depth > 0;
		else if (n > 2 && !strcmp(l + n - 2, " {") && depth + 1 < ARRAY_LEN(stack)) {
			l[n - 2] = 0;
			stack[depth + 1] = cJSON_AddObjectToObject(stack[depth], l);
			depth++;
		} else
			config_json_value(stack[depth], l);
	}
	return root;
}

/*
 * sluice> show config json
 * {"config": {"source": "/etc/sluice/startup.conf", "unix": {"nodaemon": true, "log": "",
 *   "cli-listen": "/run/sluice/cli.sock", ...}, "packet-generator": {"pg0": {"rate": "10kpps", ...}}}}
 */
static int show_config(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	if (!running_config)
		return cli_fail(s, -ENOENT, "no configuration loaded");
	char *text = sluice_config_format(running_config);
	if (!text)
		return cli_fail(s, -ENOMEM, "out of memory");
	if (json) {
		cli_json_print(s, config_json(text));
		free(text);
		return 0;
	}
	size_t n = strlen(text);
	if (n && text[n - 1] == '\n')
		text[n - 1] = 0; /* cli_printf ends the line itself */
	cli_printf(s, "%s", text);
	free(text);
	return 0;
}

CLI_COMMAND(show_config_cmd, "show config", "show config [json]", "the effective startup configuration", show_config)
