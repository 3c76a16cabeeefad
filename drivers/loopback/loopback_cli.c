/* VPP's commands for loopback interfaces (drivers/loopback/loopback.c):
 *
 *   create loopback interface [mac M] [instance N]   makes loopN
 *   delete loopback interface intfc loopN
 *   loopback create-interface ..., loopback delete-interface ... (the same)
 *
 * Without an instance the lowest N whose loopN is free (VPP's range,
 * 0..16383); without a MAC one made up as for every interface (02:fe:..,
 * where VPP gives de:ad:00:00:00:N); the interface is
 * what `create interface loopN driver loopback [mac M]` makes (and what the
 * running configuration writes back): admin down, its rx queue on the least
 * loaded thread (dev_cli_create). Built into the interface layer's command
 * library (drivers/meson.build): drivers/ does not depend on cli/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "drivers/device.h"
#include "drivers/drivers_cli.h"

#define LOOP_INSTANCE_MAX 16383 /* VPP's loopback instances are 0..16383 too */

static bool is_loopback(const struct device *d)
{
	return d && !strcmp(d->driver->name, "loopback");
}

/*
 * sluice> create loopback interface
 * loop0 (index 4) created, admin down
 * sluice> create loopback interface mac 02:00:00:00:00:09 instance 7
 * loop7 (index 5) created, admin down
 */
static int create_loopback(struct cli_session *s, int argc, char **argv)
{
	const char *mac = NULL;
	uint32_t inst = UINT32_MAX;
	for (int i = 0; i < argc; i += 2) {
		if (i + 1 == argc)
			return cli_fail(s, -EINVAL, "missing value for '%s'", argv[i]);
		if (!strcmp(argv[i], "mac")) {
			mac = argv[i + 1];
		} else if (!strcmp(argv[i], "instance")) {
			char *end;
			unsigned long v = strtoul(argv[i + 1], &end, 10);
			if (*end || end == argv[i + 1] || argv[i + 1][0] == '-' || v > LOOP_INSTANCE_MAX)
				return cli_fail(s, -EINVAL, "instance %s: expected 0..%u", argv[i + 1], LOOP_INSTANCE_MAX);
			inst = (uint32_t)v;
		} else {
			return cli_fail(s, -EINVAL, "unexpected '%s'", argv[i]);
		}
	}
	char name[DEV_NAME_SIZE];
	if (inst == UINT32_MAX) {
		for (inst = 0; inst <= LOOP_INSTANCE_MAX; inst++) {
			snprintf(name, sizeof(name), "loop%u", inst);
			if (!dev_by_name(name))
				break;
		}
	}
	snprintf(name, sizeof(name), "loop%u", inst);
	if (dev_by_name(name))
		return cli_fail(s, -EEXIST, "instance %u: %s exists", inst, name);
	const char *words[] = { "mac", mac };
	return dev_cli_create(s, name, "loopback", words, mac ? 2 : 0, NULL) ? 0 : -EINVAL;
}

/*
 * sluice> delete loopback interface intfc loop0
 * loop0 deleted
 */
static int delete_loopback(struct cli_session *s, int argc, char **argv)
{
	if (argc != 2 || strcmp(argv[0], "intfc"))
		return cli_fail(s, -EINVAL, "expected intfc loopN");
	struct device *d = dev_by_name(argv[1]);
	if (!is_loopback(d))
		return cli_fail(s, -EINVAL, "no loopback interface %s", argv[1]);
	return dev_cli_delete(s, d);
}

CLI_COMMAND(create_loopback_cmd, "create loopback interface", "create loopback interface [mac M] [instance N]",
	    "Make loopN, whose tx comes back as its rx (VPP's command)", create_loopback)
CLI_COMMAND(delete_loopback_cmd, "delete loopback interface", "delete loopback interface intfc loopN",
	    "Delete a loopback interface (VPP's command)", delete_loopback)
/* VPP's other spelling of the same two commands. */
CLI_ALIAS(loopback_create_alias, "loopback create-interface", "loopback create-interface [mac M] [instance N]",
	  "create loopback interface", NULL)
CLI_ALIAS(loopback_delete_alias, "loopback delete-interface", "loopback delete-interface intfc loopN",
	  "delete loopback interface", NULL)
