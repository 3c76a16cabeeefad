/* vfio-pci: one container shared by every device (so each NIC can DMA into
 * every buffer pool), one group per IOMMU group, a device fd per function,
 * BAR0 mapped with mmap, bus mastering set in config space, DMA mapped with
 * IOVA = VA (the ioctl sequence of the kernel's Documentation/driver-api/vfio.rst).
 *
 * DMA mappings live in the container, so a range mapped for one device is
 * mapped for all: they are reference-counted here and unmapped when the
 * last device lets go.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "drivers/pci/pci.h"
#include "base/util.h"

#define VFIO_MAX_GROUPS 16
#define VFIO_MAX_MAPS 64
#define PCI_COMMAND 0x04
#define PCI_COMMAND_MEMORY (1u << 1)
#define PCI_COMMAND_MASTER (1u << 2)

static struct {
	int fd; /* -1: not open */
	bool iommu_set;
	uint32_t n_devices;
	struct {
		char name[PCI_NAME_SIZE];
		int fd;
		uint32_t refs;
	} groups[VFIO_MAX_GROUPS];
	struct {
		uintptr_t va;
		size_t len;
		uint32_t refs;
	} maps[VFIO_MAX_MAPS];
} container = { .fd = -1 };

struct vfio_io {
	struct pci_io io;
	int device_fd;
	int group_slot;
	volatile uint8_t *bar0;
	size_t bar0_size;
};

static uint32_t vfio_read32(struct pci_io *io, uint32_t reg)
{
	struct vfio_io *v = container_of(io, struct vfio_io, io);
	return *(volatile uint32_t *)(v->bar0 + reg);
}

static void vfio_write32(struct pci_io *io, uint32_t reg, uint32_t value)
{
	struct vfio_io *v = container_of(io, struct vfio_io, io);
	*(volatile uint32_t *)(v->bar0 + reg) = value;
}

static int vfio_dma_map(struct pci_io *io, void *va, size_t len)
{
	(void)io;
	int free_slot = -1;
	for (int i = 0; i < VFIO_MAX_MAPS; i++) {
		if (container.maps[i].refs && container.maps[i].va == (uintptr_t)va && container.maps[i].len == len) {
			container.maps[i].refs++;
			return 0;
		}
		if (!container.maps[i].refs && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return -ENOSPC;
	struct vfio_iommu_type1_dma_map m = {
		.argsz = sizeof(m),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)va,
		.iova = (uintptr_t)va, /* IOVA = VA */
		.size = len,
	};
	if (ioctl(container.fd, VFIO_IOMMU_MAP_DMA, &m) < 0)
		return -errno;
	container.maps[free_slot].va = (uintptr_t)va;
	container.maps[free_slot].len = len;
	container.maps[free_slot].refs = 1;
	return 0;
}

static void vfio_dma_unmap(struct pci_io *io, void *va, size_t len)
{
	(void)io;
	for (int i = 0; i < VFIO_MAX_MAPS; i++) {
		if (!container.maps[i].refs || container.maps[i].va != (uintptr_t)va || container.maps[i].len != len)
			continue;
		if (--container.maps[i].refs == 0) {
			struct vfio_iommu_type1_dma_unmap u = {
				.argsz = sizeof(u), .iova = (uintptr_t)va, .size = len,
			};
			if (ioctl(container.fd, VFIO_IOMMU_UNMAP_DMA, &u) < 0)
				base_log("vfio", "unmap of %zu bytes failed: %s", len, strerror(errno));
		}
		return;
	}
}

static void group_put(int slot)
{
	if (slot < 0 || --container.groups[slot].refs)
		return;
	close(container.groups[slot].fd);
	container.groups[slot].name[0] = 0;
}

static void container_put(void)
{
	if (container.n_devices || container.fd < 0)
		return;
	close(container.fd);
	container.fd = -1;
	container.iommu_set = false;
}

static void vfio_close(struct pci_io *io)
{
	struct vfio_io *v = container_of(io, struct vfio_io, io);
	if (v->bar0)
		munmap((void *)v->bar0, v->bar0_size);
	if (v->device_fd >= 0)
		close(v->device_fd);
	group_put(v->group_slot);
	container.n_devices--;
	container_put();
	free(v);
}

/* MSI-X vectors as eventfds (the kernel's Documentation/driver-api/vfio.rst,
 * VFIO_DEVICE_SET_IRQS): the kernel's handler for vector i writes fds[i];
 * n 0 tears the vectors down. */
static int vfio_irq_set(struct pci_io *io, uint32_t n, const int *fds)
{
	struct vfio_io *v = container_of(io, struct vfio_io, io);
	if (n) {
		struct vfio_irq_info info = { .argsz = sizeof(info), .index = VFIO_PCI_MSIX_IRQ_INDEX };
		if (ioctl(v->device_fd, VFIO_DEVICE_GET_IRQ_INFO, &info) < 0)
			return -errno;
		if (!(info.flags & VFIO_IRQ_INFO_EVENTFD) || info.count < n)
			return -ENOTSUP;
	}
	size_t argsz = sizeof(struct vfio_irq_set) + n * sizeof(int);
	struct vfio_irq_set *set = calloc(1, argsz);
	if (!set)
		return -ENOMEM;
	set->argsz = (uint32_t)argsz;
	set->flags = (n ? VFIO_IRQ_SET_DATA_EVENTFD : VFIO_IRQ_SET_DATA_NONE) | VFIO_IRQ_SET_ACTION_TRIGGER;
	set->index = VFIO_PCI_MSIX_IRQ_INDEX;
	set->start = 0;
	set->count = n;
	if (n)
		memcpy(set->data, fds, n * sizeof(int));
	int rc = ioctl(v->device_fd, VFIO_DEVICE_SET_IRQS, set) < 0 ? -errno : 0;
	free(set);
	return rc;
}

static const struct pci_io_ops vfio_ops = {
	.irq_set = vfio_irq_set,
	.read32 = vfio_read32,
	.write32 = vfio_write32,
	.dma_map = vfio_dma_map,
	.dma_unmap = vfio_dma_unmap,
	.close = vfio_close,
};

static int fail(char *err, size_t errlen, int rc, const char *fmt, const char *what)
{
	snprintf(err, errlen, fmt, what, strerror(-rc));
	return rc;
}

static int container_get(char *err, size_t errlen)
{
	if (container.fd >= 0)
		return 0;
	int fd = open("/dev/vfio/vfio", O_RDWR);
	if (fd < 0)
		return fail(err, errlen, -errno, "cannot open %s: %s (modprobe vfio-pci)", "/dev/vfio/vfio");
	if (ioctl(fd, VFIO_GET_API_VERSION) != VFIO_API_VERSION ||
	    ioctl(fd, VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) != 1) {
		close(fd);
		snprintf(err, errlen, "vfio: unknown API version or no type-1 IOMMU support");
		return -ENOTSUP;
	}
	container.fd = fd;
	return 0;
}

static int group_get(const char *name, char *err, size_t errlen)
{
	int free_slot = -1;
	for (int i = 0; i < VFIO_MAX_GROUPS; i++) {
		if (container.groups[i].name[0] && !strcmp(container.groups[i].name, name)) {
			container.groups[i].refs++;
			return i;
		}
		if (!container.groups[i].name[0] && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0) {
		snprintf(err, errlen, "vfio: too many IOMMU groups");
		return -ENOSPC;
	}
	char path[64];
	snprintf(path, sizeof(path), "/dev/vfio/%s", name);
	int fd = open(path, O_RDWR);
	if (fd < 0)
		return fail(err, errlen, -errno, "cannot open %s: %s (run as root or chown the group node)", path);
	struct vfio_group_status st = { .argsz = sizeof(st) };
	if (ioctl(fd, VFIO_GROUP_GET_STATUS, &st) < 0 || !(st.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		close(fd);
		snprintf(err, errlen,
			 "IOMMU group %s is not viable: bind every device of "
			 "/sys/kernel/iommu_groups/%s/devices to vfio-pci",
			 name, name);
		return -EPERM;
	}
	if (ioctl(fd, VFIO_GROUP_SET_CONTAINER, &container.fd) < 0) {
		int rc = -errno;
		close(fd);
		return fail(err, errlen, rc, "vfio: group %s: cannot join the container: %s", name);
	}
	/* The IOMMU type is set once, after the first group joined. */
	if (!container.iommu_set) {
		if (ioctl(container.fd, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU) < 0) {
			int rc = -errno;
			close(fd);
			return fail(err, errlen, rc, "vfio: %s: cannot set the type-1 IOMMU: %s", "container");
		}
		container.iommu_set = true;
	}
	snprintf(container.groups[free_slot].name, sizeof(container.groups[free_slot].name), "%s", name);
	container.groups[free_slot].fd = fd;
	container.groups[free_slot].refs = 1;
	return free_slot;
}

/* Bus master (and memory space) on in the command register (PCI Local Bus Specification 3.0, 6.2.2: bits 1 and 2). */
static int bus_master(int device_fd)
{
	struct vfio_region_info r = { .argsz = sizeof(r), .index = VFIO_PCI_CONFIG_REGION_INDEX };
	if (ioctl(device_fd, VFIO_DEVICE_GET_REGION_INFO, &r) < 0)
		return -errno;
	uint16_t cmd;
	if (pread(device_fd, &cmd, 2, (off_t)(r.offset + PCI_COMMAND)) != 2)
		return -EIO;
	cmd |= PCI_COMMAND_MASTER | PCI_COMMAND_MEMORY;
	if (pwrite(device_fd, &cmd, 2, (off_t)(r.offset + PCI_COMMAND)) != 2)
		return -EIO;
	return 0;
}

struct pci_io *pci_vfio_open(const struct pci_info *info, char *err, size_t errlen)
{
	struct vfio_io *v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	v->io.ops = &vfio_ops;
	v->device_fd = -1;
	v->group_slot = -1;
	snprintf(v->io.addr, sizeof(v->io.addr), "%s", info->addr);
	v->io.vendor = info->vendor;
	v->io.device = info->device;
	v->io.numa_node = info->numa_node;
	container.n_devices++;
	if (container_get(err, errlen) < 0)
		goto fail;
	v->group_slot = group_get(info->iommu_group, err, errlen);
	if (v->group_slot < 0)
		goto fail;
	v->device_fd = ioctl(container.groups[v->group_slot].fd, VFIO_GROUP_GET_DEVICE_FD, info->addr);
	if (v->device_fd < 0) {
		fail(err, errlen, -errno, "vfio: %s: cannot get the device: %s", info->addr);
		goto fail;
	}
	int rc = bus_master(v->device_fd);
	if (rc) {
		fail(err, errlen, rc, "vfio: %s: cannot enable bus mastering: %s", info->addr);
		goto fail;
	}
	struct vfio_region_info r = { .argsz = sizeof(r), .index = VFIO_PCI_BAR0_REGION_INDEX };
	if (ioctl(v->device_fd, VFIO_DEVICE_GET_REGION_INFO, &r) < 0 || !(r.flags & VFIO_REGION_INFO_FLAG_MMAP)) {
		snprintf(err, errlen, "vfio: %s: BAR0 cannot be mapped", info->addr);
		goto fail;
	}
	void *bar = mmap(NULL, r.size, PROT_READ | PROT_WRITE, MAP_SHARED, v->device_fd, (off_t)r.offset);
	if (bar == MAP_FAILED) {
		fail(err, errlen, -errno, "vfio: %s: mmap of BAR0: %s", info->addr);
		goto fail;
	}
	v->bar0 = bar;
	v->bar0_size = r.size;
	return &v->io;
fail:
	vfio_close(&v->io);
	return NULL;
}
