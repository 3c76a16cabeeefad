/* PCI: addresses, the native drivers' ID tables, the sysfs scan, the
 * vfio-pci binding check with its instructions, the io provider and DMA
 * memory helpers. vfio itself is in vfio.c.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "drivers/pci/pci.h"
#include "graph/buffer.h"
#include "base/conf.h"
#include "base/util.h"

#define PCI_MAX_DRIVERS 8
#define PCI_MAX_CLAIMS 64

/* ---- addresses ---- */

int pci_addr_canon(const char *text, char out[PCI_ADDR_SIZE])
{
	unsigned dom = 0, bus, dev, fn;
	/* The shape decides the form, and comes first: %x alone takes a sign
	 * or a space ("0000:-1:00.0" read as bus 0xffffffff, a fuzz_conf
	 * finding). */
	if (!text)
		return -EINVAL;
	if (conf_text_shaped(text, "hhhh:hh:hh.h"))
		sscanf(text, "%4x:%2x:%2x.%1x", &dom, &bus, &dev, &fn);
	else if (conf_text_shaped(text, "hh:hh.h")) /* short form, domain 0 */
		sscanf(text, "%2x:%2x.%1x", &bus, &dev, &fn);
	else
		return -EINVAL;
	if (dev > 0x1f || fn > 7)
		return -EINVAL;
	snprintf(out, PCI_ADDR_SIZE, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

/* ---- drivers ---- */

static const struct pci_driver *drivers[PCI_MAX_DRIVERS];
static uint32_t n_drivers;

void pci_driver_register(const struct pci_driver *d)
{
	if (n_drivers < PCI_MAX_DRIVERS)
		drivers[n_drivers++] = d;
}

const struct pci_driver *pci_driver_find(const char *name)
{
	for (uint32_t i = 0; i < n_drivers; i++)
		if (!strcmp(drivers[i]->name, name))
			return drivers[i];
	return NULL;
}

const struct pci_driver *pci_driver_match(uint16_t vendor, uint16_t device, const struct pci_id **id)
{
	for (uint32_t i = 0; i < n_drivers; i++)
		for (const struct pci_id *p = drivers[i]->ids; p->vendor; p++)
			if (p->vendor == vendor && p->device == device) {
				if (id)
					*id = p;
				return drivers[i];
			}
	return NULL;
}

/* ---- sysfs ---- */

static char sysfs_root[256] = "/sys";

void pci_sysfs_root_set(const char *root)
{
	snprintf(sysfs_root, sizeof(sysfs_root), "%s", root ? root : "/sys");
}

const char *pci_sysfs_root(void)
{
	return sysfs_root;
}

/* One line of a sysfs attribute, trailing newline removed. */
static int read_attr(const char *addr, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s", sysfs_root, addr, attr);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char *r = fgets(buf, (int)len, f);
	fclose(f);
	if (!r)
		return -EIO;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* The basename of a symlink's target ("" when there is no link). */
static void link_base(const char *addr, const char *link, char *buf, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s", sysfs_root, addr, link);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	buf[0] = 0;
	if (n <= 0)
		return;
	target[n] = 0;
	const char *slash = strrchr(target, '/');
	const char *base = slash ? slash + 1 : target;
	size_t k = strnlen(base, len - 1);
	memcpy(buf, base, k);
	buf[k] = 0;
}

static int read_hex16(const char *addr, const char *attr, uint16_t *v)
{
	char buf[32];
	int rc = read_attr(addr, attr, buf, sizeof(buf));
	if (rc)
		return rc;
	char *end;
	unsigned long x = strtoul(buf, &end, 16);
	if (end == buf || x > 0xffff)
		return -EIO;
	*v = (uint16_t)x;
	return 0;
}

int pci_info_get(const char *addr, struct pci_info *info, char *err, size_t errlen)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->addr, sizeof(info->addr), "%s", addr);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", sysfs_root, addr);
	if (access(path, F_OK) < 0) {
		snprintf(err, errlen,
			 "PCI device %s not found (no %s); list the network devices with `lspci -D -d 8086:` "
			 "or `sluicectl show pci` and check the dev value",
			 addr, path);
		return -ENOENT;
	}
	if (read_hex16(addr, "vendor", &info->vendor) || read_hex16(addr, "device", &info->device)) {
		snprintf(err, errlen, "PCI device %s: cannot read its vendor/device IDs under %s", addr, path);
		return -EIO;
	}
	char buf[32];
	info->numa_node = read_attr(addr, "numa_node", buf, sizeof(buf)) ? -1 : atoi(buf);
	link_base(addr, "driver", info->kernel_driver, sizeof(info->kernel_driver));
	link_base(addr, "iommu_group", info->iommu_group, sizeof(info->iommu_group));
	return 0;
}

static int addr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pci_info *)a)->addr, ((const struct pci_info *)b)->addr);
}

int pci_scan(struct pci_info *out, uint32_t max)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/bus/pci/devices", sysfs_root);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	uint32_t n = 0;
	struct dirent *e;
	char canon[PCI_ADDR_SIZE], err[256];
	while ((e = readdir(d)) != NULL && n < max) {
		if (pci_addr_canon(e->d_name, canon) || strcmp(canon, e->d_name))
			continue;
		struct pci_info info;
		if (pci_info_get(e->d_name, &info, err, sizeof(err)))
			continue;
		if (pci_driver_match(info.vendor, info.device, NULL))
			out[n++] = info;
	}
	closedir(d);
	qsort(out, n, sizeof(*out), addr_cmp);
	return (int)n;
}

int pci_vfio_check(const char *addr, const char *driver, struct pci_info *info, char *err, size_t errlen)
{
	int rc = pci_info_get(addr, info, err, errlen);
	if (rc)
		return rc;
	const struct pci_id *id;
	const struct pci_driver *d = pci_driver_match(info->vendor, info->device, &id);
	if (!d || strcmp(d->name, driver)) {
		snprintf(err, errlen, "PCI device %s is %04x:%04x, which the %s driver does not support%s%s", addr,
			 info->vendor, info->device, driver, d ? "; it is an " : "", d ? d->name : "");
		if (d)
			snprintf(err + strlen(err), errlen - strlen(err), " device");
		return -ENODEV;
	}
	if (strcmp(info->kernel_driver, "vfio-pci")) {
		char unbind[160] = "";
		if (info->kernel_driver[0])
			snprintf(unbind, sizeof(unbind), "echo %s > /sys/bus/pci/devices/%s/driver/unbind; ", addr,
				 addr);
		snprintf(err, errlen,
			 "PCI device %s (%s) is %s%s, not vfio-pci; bind it with: modprobe vfio-pci; %s"
			 "echo vfio-pci > /sys/bus/pci/devices/%s/driver_override; "
			 "echo %s > /sys/bus/pci/drivers/vfio-pci/bind "
			 "(or: dpdk-devbind.py --bind=vfio-pci %s)",
			 addr, id->name, info->kernel_driver[0] ? "bound to " : "not bound to any driver",
			 info->kernel_driver, unbind, addr, addr, addr);
		return -EBUSY;
	}
	if (!info->iommu_group[0]) {
		snprintf(err, errlen,
			 "PCI device %s is bound to vfio-pci but has no IOMMU group; enable the IOMMU "
			 "(VT-d/AMD-Vi in firmware, intel_iommu=on on the kernel command line)",
			 addr);
		return -ENODEV;
	}
	return 0;
}

/* ---- ios ---- */

static pci_io_open_fn *provider;
static void *provider_ctx;

void pci_io_provider_set(pci_io_open_fn *fn, void *ctx)
{
	provider = fn;
	provider_ctx = ctx;
}

struct pci_io *pci_io_open(const char *addr, const char *driver, char *err, size_t errlen)
{
	char canon[PCI_ADDR_SIZE];
	if (pci_addr_canon(addr, canon)) {
		snprintf(err, errlen, "'%s' is not a PCI address (expected DDDD:BB:DD.F, e.g. 0000:03:00.0)", addr);
		return NULL;
	}
	if (provider)
		return provider(provider_ctx, canon, err, errlen);
	struct pci_info info;
	if (pci_vfio_check(canon, driver, &info, err, errlen))
		return NULL;
	return pci_vfio_open(&info, err, errlen);
}

void pci_io_close(struct pci_io *io)
{
	if (io)
		io->ops->close(io);
}

void *pci_dma_alloc(struct pci_io *io, size_t len)
{
	len = ROUND_UP(len, 4096);
	void *va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (va == MAP_FAILED)
		return NULL;
	if (io->ops->dma_map(io, va, len)) {
		munmap(va, len);
		return NULL;
	}
	return va;
}

void pci_dma_free(struct pci_io *io, void *va, size_t len)
{
	if (!va)
		return;
	len = ROUND_UP(len, 4096);
	io->ops->dma_unmap(io, va, len);
	munmap(va, len);
}

/* Pool p's mapped slice of the reserved range. */
static bool pool_slice(uint32_t p, uint8_t **va, size_t *len)
{
	struct buffer_pool_stats st;
	if (buffer_pool_stats(p, &st))
		return false;
	*va = buffer_main.base + (uint64_t)p * buffer_main.index_span * buffer_main.stride;
	*len = ROUND_UP((size_t)st.n_total * buffer_main.stride, 4096);
	return true;
}

int pci_dma_map_buffers(struct pci_io *io)
{
	if (!buffer_main.base)
		return -EINVAL;
	for (uint32_t p = 0; p < buffer_main.n_pools; p++) {
		uint8_t *va;
		size_t len;
		if (!pool_slice(p, &va, &len))
			continue;
		int rc = io->ops->dma_map(io, va, len);
		if (rc) {
			while (p-- > 0)
				if (pool_slice(p, &va, &len))
					io->ops->dma_unmap(io, va, len);
			return rc;
		}
	}
	return 0;
}

void pci_dma_unmap_buffers(struct pci_io *io)
{
	for (uint32_t p = 0; p < buffer_main.n_pools; p++) {
		uint8_t *va;
		size_t len;
		if (pool_slice(p, &va, &len))
			io->ops->dma_unmap(io, va, len);
	}
}

/* ---- claims ---- */

static struct {
	char addr[PCI_ADDR_SIZE];
	struct device *dev;
} claims[PCI_MAX_CLAIMS];

int pci_claim(const char *addr, struct device *dev)
{
	int free_slot = -1;
	for (int i = 0; i < PCI_MAX_CLAIMS; i++) {
		if (claims[i].dev && !strcmp(claims[i].addr, addr))
			return claims[i].dev == dev ? 0 : -EBUSY;
		if (!claims[i].dev && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return -ENOSPC;
	snprintf(claims[free_slot].addr, sizeof(claims[free_slot].addr), "%s", addr);
	claims[free_slot].dev = dev;
	return 0;
}

void pci_release(const char *addr)
{
	for (int i = 0; i < PCI_MAX_CLAIMS; i++)
		if (claims[i].dev && !strcmp(claims[i].addr, addr))
			claims[i].dev = NULL;
}

struct device *pci_claimed_by(const char *addr)
{
	for (int i = 0; i < PCI_MAX_CLAIMS; i++)
		if (claims[i].dev && !strcmp(claims[i].addr, addr))
			return claims[i].dev;
	return NULL;
}
