/* The app's CLI commands (show config). */
#ifndef SLUICE_APP_APP_CLI_H
#define SLUICE_APP_APP_CLI_H

#include "app/conf.h"

/* The configuration `show config` prints; it must outlive the CLI server. */
void app_cli_set_config(const struct sluice_config *cfg);

/* The configuration app_cli_set_config gave; NULL before (show memory). */
const struct sluice_config *app_cli_config(void);

#endif
