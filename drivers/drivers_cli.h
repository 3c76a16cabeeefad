/* What the interface layer's command files (drivers_cli.c, interface_show_cli.c,
 * capture_cli.c) share. */
#ifndef SLUICE_DRIVERS_DRIVERS_CLI_H
#define SLUICE_DRIVERS_DRIVERS_CLI_H

#include <errno.h>

#include "cli/cli.h"
#include "drivers/device.h"

/* The interface called name, or NULL after telling the session so. */
static inline struct device *dev_cli_need(struct cli_session *s, const char *name)
{
	struct device *d = dev_by_name(name);
	if (!d)
		cli_fail(s, -EINVAL, "no interface %s", name);
	return d;
}

/* interface_runcfg_cli.c: `create interface` made d from these words (the
 * running configuration writes them back). */
void dev_runcfg_created(const struct device *d, const char *driver, const char *const *words, uint32_t n);

/* Create interface name with driver's `key value` words as `create
 * interface` does (output files held to cli-file-dir, the words kept for
 * the running configuration, rx queues placed on the least loaded
 * threads), then give it mac when not NULL, all under one barrier; tells
 * the session what was made. The device, or NULL after telling the
 * session why (nothing made). */
struct device *dev_cli_create(struct cli_session *s, const char *name, const char *driver, const char *const *words,
			      uint32_t n, const uint8_t *mac);

/* Delete d under the barrier and tell the session. 0. */
int dev_cli_delete(struct cli_session *s, struct device *d);

#endif
