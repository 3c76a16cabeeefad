/* The PCI commands: `show pci` (the functions a native driver supports, the
 * kernel driver they are bound to, their IOMMU group and the interface using
 * them) and `show nic [NAME]` (a native driver's registers of interest:
 * link, speed, queue heads and tails, drop counters).
 *
 * Built as its own library (sluice_pci_cli) that the daemon links whole, so
 * that drivers/ does not depend on cli/.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "drivers/device.h"
#include "drivers/pci/pci.h"

static cJSON *pci_json(const struct pci_info *infos, int n)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(root, "pci_functions");
	for (int i = 0; i < n; i++) {
		const struct pci_id *id = NULL;
		pci_driver_match(infos[i].vendor, infos[i].device, &id);
		struct device *d = pci_claimed_by(infos[i].addr);
		char ids[16];
		snprintf(ids, sizeof(ids), "%04x:%04x", infos[i].vendor, infos[i].device);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "address", infos[i].addr);
		cJSON_AddStringToObject(o, "id", ids);
		cJSON_AddStringToObject(o, "name", id ? id->name : "");
		cJSON_AddNumberToObject(o, "numa", infos[i].numa_node);
		cJSON_AddStringToObject(o, "kernel_driver", infos[i].kernel_driver);
		cJSON_AddStringToObject(o, "iommu_group", infos[i].iommu_group);
		cJSON_AddStringToObject(o, "interface", d ? d->name : "");
		cJSON_AddItemToArray(list, o);
	}
	return root;
}

/*
 * sluice> show pci
 * Address       ID         Name        NUMA  Kernel driver  IOMMU group  Interface
 * 0000:03:00.0  8086:10fb  82599 SFP+     0  vfio-pci       17           xe0
 * 0000:03:00.1  8086:10fb  82599 SFP+     0  ixgbe          18           -
 * sluice> show pci json
 * {"pci_functions": [{"address": "0000:03:00.0", "id": "8086:10fb", "name": "82599 SFP+", "numa": 0,
 *   "kernel_driver": "vfio-pci", "iommu_group": "17", "interface": "xe0"}]}
 * ("" for an unbound function's kernel driver, a missing group or no interface)
 */
static int show_pci(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	struct pci_info *infos = calloc(PCI_SCAN_MAX, sizeof(*infos));
	if (!infos)
		return cli_fail(s, -ENOMEM, "out of memory");
	int n = pci_scan(infos, PCI_SCAN_MAX);
	if (n < 0) {
		free(infos);
		return cli_fail(s, n, "cannot read %s/bus/pci/devices: %s", pci_sysfs_root(), strerror(-n));
	}
	if (json) {
		cli_json_print(s, pci_json(infos, n));
		free(infos);
		return 0;
	}
	static const struct cli_table_col cols[] = {
		{ "Address", false }, { "ID", false },         { "Name", false },      { "NUMA", true },
		{ "Kernel driver", false }, { "IOMMU group", false }, { "Interface", false },
	};
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	if (!t) {
		free(infos);
		return cli_fail(s, -ENOMEM, "out of memory");
	}
	for (int i = 0; i < n; i++) {
		const struct pci_id *id = NULL;
		pci_driver_match(infos[i].vendor, infos[i].device, &id);
		struct device *d = pci_claimed_by(infos[i].addr);
		cli_table_cell(t, "%s", infos[i].addr);
		cli_table_cell(t, "%04x:%04x", infos[i].vendor, infos[i].device);
		cli_table_cell(t, "%s", id ? id->name : "?");
		cli_table_cell(t, "%d", infos[i].numa_node);
		cli_table_cell(t, "%s", infos[i].kernel_driver[0] ? infos[i].kernel_driver : "-");
		cli_table_cell(t, "%s", infos[i].iommu_group[0] ? infos[i].iommu_group : "-");
		cli_table_cell(t, "%s", d ? d->name : "-");
	}
	cli_table_print(s, t);
	free(infos);
	return 0;
}

/* The driver's register lines, each a string: their layout is the
 * driver's (ixgbe and i40e differ). */
static cJSON *nic_json(struct device *d, const struct pci_driver *pd, char *buf)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", d->name);
	cJSON_AddStringToObject(o, "driver", pd->name);
	cJSON *lines = cJSON_AddArrayToObject(o, "lines");
	if (pd->format_hw(d, buf, 8192) <= 0)
		return o;
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		cJSON_AddItemToArray(lines, cJSON_CreateString(l));
	return o;
}

/*
 * sluice> show nic xe0
 * xe0: ixgbe 0000:03:00.0 8086:10fb, mac 02:00:00:00:00:01
 *   link up 10000 Mb/s, promisc on, max frame 1518, running
 *   rx queue 0: RDH 17 RDT 16 next 17, drops 0
 *   tx queue 0: TDH 40 TDT 40 clean 32
 *   hw: GPRC 1000 GPTC 1000 GORC 68000 GOTC 68000 MPC 0 CRCERRS 0 RLEC 0 ROC 0
 * sluice> show nic json
 * {"nics": [{"name": "xe0", "driver": "ixgbe", "lines": ["xe0: ixgbe 0000:03:00.0 8086:10fb, ...", ...]}]}
 * (interfaces of drivers without NIC registers are left out)
 */
static int show_nic(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	bool json = cli_take_flag(&argc, argv, "json");
	int rc = cli_opt_word_arg(s, argc, argv, "NAME", &name);
	if (rc)
		return rc;
	if (name && !dev_by_name(name))
		return cli_fail(s, -EINVAL, "no interface %s", name);
	char *buf = malloc(8192);
	if (!buf)
		return cli_fail(s, -ENOMEM, "out of memory");
	uint32_t shown = 0;
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *list = json ? cJSON_AddArrayToObject(root, "nics") : NULL;
	struct device *d;
	DEV_FOREACH(d)
	{
		if (name && strcmp(d->name, name))
			continue;
		const struct pci_driver *pd = d->driver ? pci_driver_find(d->driver->name) : NULL;
		if (json) {
			if (pd && pd->format_hw)
				cJSON_AddItemToArray(list, nic_json(d, pd, buf));
			continue;
		}
		if (!pd || !pd->format_hw) {
			if (name)
				cli_printf(s, "%s: driver %s has no NIC registers", d->name,
					   d->driver ? d->driver->name : "?");
			continue;
		}
		int n = pd->format_hw(d, buf, 8192);
		if (n > 0) {
			if (buf[strlen(buf) - 1] == '\n')
				buf[strlen(buf) - 1] = 0;
			cli_printf(s, "%s", buf);
		}
		shown++;
	}
	if (json)
		cli_json_print(s, root);
	else if (!name && !shown)
		cli_printf(s, "no native NIC interfaces");
	free(buf);
	return 0;
}

CLI_COMMAND(show_pci_cmd, "show pci", "show pci [json]", "PCI functions a native driver supports and how they are bound",
	    show_pci)
CLI_COMMAND(show_nic_cmd, "show nic", "show nic [NAME] [json]",
	    "A native NIC's registers: link, queue heads and tails, hardware counters", show_nic)
