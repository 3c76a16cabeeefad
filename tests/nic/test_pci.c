/* The PCI layer against a fake sysfs tree: address parsing, the scan of
 * supported functions, and the errors a configured ixgbe or i40e port gets
 * when it is absent, not a device of its driver, bound to another driver or
 * to none, or without an IOMMU group; `show pci` over the same tree. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "drivers/device.h"
#include "drivers/pci/pci.h"
#include "graph/buffer.h"
#include "tests/check_run.h"

static char root[64];
static char err[1024];

static void put(const char *addr, const char *attr, const char *value)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s", root, addr, attr);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", value);
	fclose(f);
}

static void link_to(const char *addr, const char *name, const char *target)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s", root, addr, name);
	ck_assert_int_eq(symlink(target, path), 0);
}

/* One function: IDs, NUMA node, and optionally its driver and IOMMU group. */
static void fake(const char *addr, const char *vendor, const char *device, const char *driver, const char *group)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", root, addr);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	put(addr, "vendor", vendor);
	put(addr, "device", device);
	put(addr, "numa_node", "0");
	char target[128];
	if (driver) {
		snprintf(target, sizeof(target), "../../../../bus/pci/drivers/%s", driver);
		link_to(addr, "driver", target);
	}
	if (group) {
		snprintf(target, sizeof(target), "../../../../kernel/iommu_groups/%s", group);
		link_to(addr, "iommu_group", target);
	}
}

static void setup(void)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 1024;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	snprintf(root, sizeof(root), "/tmp/sluice-sysfs-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/bus/pci/devices", root);
	ck_assert_int_eq(system(cmd), 0);
	fake("0000:03:00.0", "0x8086", "0x10fb", "ixgbe", "16");
	fake("0000:03:00.1", "0x8086", "0x10fb", "vfio-pci", "17");
	fake("0000:04:00.0", "0x8086", "0x1557", NULL, "18");
	fake("0000:05:00.0", "0x8086", "0x1234", "e1000e", "19");
	fake("0000:06:00.0", "0x8086", "0x154d", "vfio-pci", NULL);
	fake("0000:07:00.0", "0x8086", "0x1528", "vfio-pci", "20"); /* X540: not claimed */
	fake("0000:00:1f.2", "0x8086", "0xa102", "ahci", "3");
	fake("0000:81:00.0", "0x8086", "0x1583", "i40e", "40");
	fake("0000:81:00.1", "0x8086", "0x1572", NULL, "41");
	fake("0000:82:00.0", "0x8086", "0x37d0", "vfio-pci", NULL);
	pci_sysfs_root_set(root);
}

static void teardown(void)
{
	dev_delete_all();
	pci_sysfs_root_set(NULL);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
	buffer_thread_unregister();
	buffer_main_free();
}

START_TEST(addresses)
{
	char a[PCI_ADDR_SIZE];
	ck_assert_int_eq(pci_addr_canon("0000:03:00.0", a), 0);
	ck_assert_str_eq(a, "0000:03:00.0");
	ck_assert_int_eq(pci_addr_canon("3b:00.1", a), 0);
	ck_assert_str_eq(a, "0000:3b:00.1");
	ck_assert_int_eq(pci_addr_canon("0000:AF:1F.7", a), 0);
	ck_assert_str_eq(a, "0000:af:1f.7");
	const char *bad[] = { "", "03:00", "0000:03:00", "0000:03:20.0", "0000:03:00.8", "x0000:03:00.0",
			      "0000:03:00.0 ", "00000:03:00.0", "eth0",
			      /* signs and spaces that %x takes (fuzz_conf finding: bus -1) */
			      "0000:-1:00.0", "0000:+1:00.0", "0000: 1:00.0", "-000:01:00.0", "0000:01:-1.0",
			      "-1:00.0", " 3:00.0", "0000:01:00.-" };
	for (size_t i = 0; i < ARRAY_LEN(bad); i++)
		ck_assert_msg(pci_addr_canon(bad[i], a) < 0, "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(scan_lists_supported)
{
	struct pci_info infos[PCI_SCAN_MAX];
	int n = pci_scan(infos, PCI_SCAN_MAX);
	ck_assert_int_eq(n, 7); /* not the X540 at 07:00.0: no driver claims it */
	ck_assert_str_eq(infos[0].addr, "0000:03:00.0");
	ck_assert_str_eq(infos[0].kernel_driver, "ixgbe");
	ck_assert_str_eq(infos[0].iommu_group, "16");
	ck_assert_uint_eq(infos[0].device, 0x10fb);
	ck_assert_str_eq(infos[1].kernel_driver, "vfio-pci");
	ck_assert_str_eq(infos[2].addr, "0000:04:00.0");
	ck_assert_str_eq(infos[2].kernel_driver, "");
	ck_assert_str_eq(infos[3].addr, "0000:06:00.0");
	ck_assert_str_eq(infos[3].iommu_group, "");
	ck_assert_str_eq(infos[4].addr, "0000:81:00.0");
	ck_assert_str_eq(infos[4].kernel_driver, "i40e");
	ck_assert_uint_eq(infos[4].device, 0x1583);
	ck_assert_str_eq(infos[5].kernel_driver, "");
	ck_assert_uint_eq(infos[6].device, 0x37d0);

	char *out = NULL;
	ck_assert_int_eq(cli_exec_line("show pci", &out), 0);
	ck_assert_msg(strstr(out, "0000:03:00.0") && strstr(out, "82599 SFP+") && strstr(out, "82599EN SFP") &&
			      strstr(out, "vfio-pci") && strstr(out, "XL710 QSFP+ A") && strstr(out, "X710 SFP+") &&
			      strstr(out, "X722 SFP") && !strstr(out, "0000:00:1f.2") && !strstr(out, "0000:05:00.0") &&
			      !strstr(out, "0000:07:00.0"),
		      "%s", out);
	free(out);
}
END_TEST

static const char *create_err_for(const char *driver, const char *addr)
{
	const char *w[] = { "dev", addr };
	struct device *d = dev_create("xe0", driver, w, 2, err, sizeof(err));
	ck_assert_ptr_null(d);
	return err;
}

static const char *create_err(const char *addr)
{
	return create_err_for("ixgbe", addr);
}

START_TEST(absent_device)
{
	const char *e = create_err("0000:09:00.0");
	ck_assert_msg(strstr(e, "PCI device 0000:09:00.0 not found") && strstr(e, "show pci"), "%s", e);
}
END_TEST

START_TEST(bound_to_kernel_driver)
{
	const char *e = create_err("0000:03:00.0");
	ck_assert_msg(strstr(e, "bound to ixgbe, not vfio-pci") &&
			      strstr(e, "echo 0000:03:00.0 > /sys/bus/pci/devices/0000:03:00.0/driver/unbind") &&
			      strstr(e, "echo vfio-pci > /sys/bus/pci/devices/0000:03:00.0/driver_override") &&
			      strstr(e, "echo 0000:03:00.0 > /sys/bus/pci/drivers/vfio-pci/bind") &&
			      strstr(e, "dpdk-devbind.py --bind=vfio-pci 0000:03:00.0"),
		      "%s", e);
	/* Short form, same answer. */
	e = create_err("03:00.0");
	ck_assert_msg(strstr(e, "0000:03:00.0") && strstr(e, "not vfio-pci"), "%s", e);
}
END_TEST

START_TEST(unbound_device)
{
	const char *e = create_err("0000:04:00.0");
	ck_assert_msg(strstr(e, "not bound to any driver") && !strstr(e, "unbind") &&
			      strstr(e, "/sys/bus/pci/drivers/vfio-pci/bind"),
		      "%s", e);
}
END_TEST

START_TEST(not_an_ixgbe)
{
	const char *e = create_err("0000:05:00.0");
	ck_assert_msg(strstr(e, "8086:1234") && strstr(e, "does not support"), "%s", e);
}
END_TEST

START_TEST(no_iommu_group)
{
	const char *e = create_err("0000:06:00.0");
	ck_assert_msg(strstr(e, "no IOMMU group") && strstr(e, "intel_iommu=on"), "%s", e);
}
END_TEST

/* Bound right: the check passes and the failure, if any, is vfio's own
 * (this tree has no /dev/vfio behind it). */
START_TEST(bound_to_vfio)
{
	struct pci_info info;
	ck_assert_int_eq(pci_vfio_check("0000:03:00.1", "ixgbe", &info, err, sizeof(err)), 0);
	ck_assert_str_eq(info.iommu_group, "17");
	if (access("/dev/vfio/17", F_OK) != 0) {
		const char *e = create_err("0000:03:00.1");
		ck_assert_msg(strstr(e, "vfio"), "%s", e);
	}
}
END_TEST

/* The same answers for i40e addresses. */
START_TEST(i40e_absent_or_misbound)
{
	const char *e = create_err_for("i40e", "0000:81:00.7");
	ck_assert_msg(strstr(e, "i40e: ") && strstr(e, "PCI device 0000:81:00.7 not found") && strstr(e, "show pci"),
		      "%s", e);
	e = create_err_for("i40e", "0000:81:00.0");
	ck_assert_msg(strstr(e, "bound to i40e, not vfio-pci") &&
			      strstr(e, "echo 0000:81:00.0 > /sys/bus/pci/devices/0000:81:00.0/driver/unbind") &&
			      strstr(e, "echo vfio-pci > /sys/bus/pci/devices/0000:81:00.0/driver_override") &&
			      strstr(e, "echo 0000:81:00.0 > /sys/bus/pci/drivers/vfio-pci/bind") &&
			      strstr(e, "dpdk-devbind.py --bind=vfio-pci 0000:81:00.0"),
		      "%s", e);
	e = create_err_for("i40e", "0000:81:00.1");
	ck_assert_msg(strstr(e, "not bound to any driver") && !strstr(e, "unbind") &&
			      strstr(e, "/sys/bus/pci/drivers/vfio-pci/bind"),
		      "%s", e);
	e = create_err_for("i40e", "0000:82:00.0");
	ck_assert_msg(strstr(e, "no IOMMU group") && strstr(e, "intel_iommu=on"), "%s", e);
	/* An 82599 is not an i40e, nor an XL710 an ixgbe. */
	e = create_err_for("i40e", "0000:03:00.1");
	ck_assert_msg(strstr(e, "8086:10fb") && strstr(e, "does not support"), "%s", e);
	e = create_err_for("ixgbe", "0000:81:00.0");
	ck_assert_msg(strstr(e, "8086:1583") && strstr(e, "does not support"), "%s", e);
	ck_assert_ptr_null(pci_claimed_by("0000:81:00.0"));
}
END_TEST

START_TEST(config_errors)
{
	const char *bad_addr[] = { "dev", "eth0" };
	ck_assert_ptr_null(dev_create("xe0", "ixgbe", bad_addr, 2, err, sizeof(err)));
	ck_assert_msg(strstr(err, "expected a PCI address"), "%s", err);
	ck_assert_ptr_null(dev_create("xe0", "ixgbe", NULL, 0, err, sizeof(err)));
	ck_assert_msg(strstr(err, "dev (the PCI address) is required"), "%s", err);
	const char *bad_ring[] = { "dev", "0000:03:00.0", "rx-desc", "1000" };
	ck_assert_ptr_null(dev_create("xe0", "ixgbe", bad_ring, 4, err, sizeof(err)));
	ck_assert_msg(strstr(err, "powers of two"), "%s", err);
	const char *too_many[] = { "dev", "0000:03:00.0", "rx-queues", "17" };
	ck_assert_ptr_null(dev_create("xe0", "ixgbe", too_many, 4, err, sizeof(err)));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("pci");
	TCase *tc = tcase_create("sysfs");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, addresses);
	tcase_add_test(tc, scan_lists_supported);
	tcase_add_test(tc, absent_device);
	tcase_add_test(tc, bound_to_kernel_driver);
	tcase_add_test(tc, unbound_device);
	tcase_add_test(tc, not_an_ixgbe);
	tcase_add_test(tc, no_iommu_group);
	tcase_add_test(tc, bound_to_vfio);
	tcase_add_test(tc, i40e_absent_or_misbound);
	tcase_add_test(tc, config_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
