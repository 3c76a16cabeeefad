/* VPP's commands for af-packet interfaces:
 *
 *   create host-interface name X [hw-addr MAC]   makes host-X on Linux's X
 *   delete host-interface name X                 deletes host-X
 *
 * host-X is what `create interface host-X driver af-packet host-if X`
 * makes (and what the running configuration writes back, with the MAC as
 * its own `set interface mac address` line): admin down, its rx queue placed
 * on the least loaded thread like any interface made at run time, under
 * one barrier (dev_cli_create). Built into the interface layer's command
 * library (drivers/meson.build), not the driver: drivers/ does not depend
 * on cli/.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "drivers/device.h"
#include "drivers/drivers_cli.h"

#define HOST_PREFIX "host-"

/* `name X` (and, when hw is not NULL, an optional `hw-addr MAC`), in any
 * order. 0 or -EINVAL after telling the session. */
static int host_if_args(struct cli_session *s, int argc, char **argv, const char **name, const char **hw)
{
	*name = NULL;
	for (int i = 0; i < argc; i += 2) {
		const char **dst = !strcmp(argv[i], "name") ? name : hw && !strcmp(argv[i], "hw-addr") ? hw : NULL;
		if (!dst)
			return cli_fail(s, -EINVAL, "unexpected '%s'", argv[i]);
		if (i + 1 == argc)
			return cli_fail(s, -EINVAL, "missing value for '%s'", argv[i]);
		*dst = argv[i + 1];
	}
	if (!*name)
		return cli_fail(s, -EINVAL, "expected name X (the Linux interface)");
	if (strlen(HOST_PREFIX) + strlen(*name) >= DEV_NAME_SIZE)
		return cli_fail(s, -EINVAL, "name %s: host-%s would be longer than %d characters", *name, *name,
				DEV_NAME_SIZE - 1);
	return 0;
}

/*
 * sluice> create host-interface name veth0 hw-addr 02:00:00:00:00:01
 * host-veth0 (index 3) created, admin down
 */
static int create_host_interface(struct cli_session *s, int argc, char **argv)
{
	const char *host = NULL, *hw = NULL;
	int rc = host_if_args(s, argc, argv, &host, &hw);
	if (rc)
		return rc;
	uint8_t mac[6];
	if (hw && (conf_mac_parse(hw, mac) || (mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5])))
		return cli_fail(s, -EINVAL, "hw-addr: expected a unicast MAC aa:bb:cc:dd:ee:ff, found '%s'", hw);
	char name[DEV_NAME_SIZE];
	snprintf(name, sizeof(name), HOST_PREFIX "%s", host);
	const char *words[] = { "host-if", host };
	return dev_cli_create(s, name, "af-packet", words, 2, hw ? mac : NULL) ? 0 : -EINVAL;
}

/*
 * sluice> delete host-interface name veth0
 * host-veth0 deleted
 */
static int delete_host_interface(struct cli_session *s, int argc, char **argv)
{
	const char *host = NULL;
	int rc = host_if_args(s, argc, argv, &host, NULL);
	if (rc)
		return rc;
	char name[DEV_NAME_SIZE];
	snprintf(name, sizeof(name), HOST_PREFIX "%s", host);
	struct device *d = dev_by_name(name);
	if (!d || strcmp(d->driver->name, "af-packet"))
		return cli_fail(s, -EINVAL, "no host-interface %s (no af-packet interface %s)", host, name);
	return dev_cli_delete(s, d);
}

CLI_COMMAND(create_host_interface_cmd, "create host-interface", "create host-interface name X [hw-addr MAC]",
	    "Make af-packet interface host-X on Linux interface X (VPP's command)", create_host_interface)
CLI_COMMAND(delete_host_interface_cmd, "delete host-interface", "delete host-interface name X",
	    "Delete af-packet interface host-X (VPP's command)", delete_host_interface)
