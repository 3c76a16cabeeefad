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
#include "cli/cli.h"

/* Set once at start-up before the server starts, read by sessions after. */
static const struct sluice_config *running_config;

void app_cli_set_config(const struct sluice_config *cfg)
{
	running_config = cfg;
}

static int show_config(struct cli_session *s, int argc, char **argv)
{
	(void)argv;
	if (argc > 0)
		return cli_fail(s, -EINVAL, "show config takes no arguments");
	if (!running_config)
		return cli_fail(s, -ENOENT, "no configuration loaded");
	char *text = sluice_config_format(running_config);
	if (!text)
		return cli_fail(s, -ENOMEM, "out of memory");
	size_t n = strlen(text);
	if (n && text[n - 1] == '\n')
		text[n - 1] = 0; /* cli_printf ends the line itself */
	cli_printf(s, "%s", text);
	free(text);
	return 0;
}

CLI_COMMAND(show_config_cmd, "show config", "show config", "the effective startup configuration", show_config)
