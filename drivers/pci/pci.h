/* PCI devices for the native drivers: finding them in sysfs, reaching them
 * through vfio-pci, and the small BAR/DMA abstraction the drivers program.
 *
 * A driver sees one `struct pci_io` per PCI function: 32-bit reads and
 * writes of BAR0 registers, DMA mapping of memory it hands to the device,
 * and the translation virtual address -> device (IO virtual) address. On
 * real hardware pci_io_open() gives a vfio-pci backed io (BAR0 mmap, IOMMU
 * mapping with IOVA = VA). A test may install an io provider (a device
 * model) instead; the driver code is the same either way.
 *
 * Sysfs is read below a configurable root (default "/sys") so that tests
 * can point the scan and the binding checks at a fake tree.
 *
 * Thread-safety: control path only (creation, start, stop, CLI), except
 * pci_read32/pci_write32/pci_iova, which a driver calls from its datapath
 * on its own queues.
 */
#ifndef SLUICE_DRIVERS_PCI_H
#define SLUICE_DRIVERS_PCI_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCI_ADDR_SIZE 16     /* "0000:03:00.0" with the NUL */
#define PCI_NAME_SIZE 32
#define PCI_SCAN_MAX 64      /* functions a scan reports */

/* ---- addresses and identities ---- */

/* Parse "DDDD:BB:DD.F" (or "BB:DD.F", domain 0) into the canonical
 * lower-case form with domain. 0 or -EINVAL. */
int pci_addr_canon(const char *text, char out[PCI_ADDR_SIZE]);

struct pci_id {
	uint16_t vendor;
	uint16_t device;
	const char *name; /* "82599 SFP+" */
};

/* A native driver's identity: the device IDs it supports (terminated by
 * vendor 0) and, optionally, a formatter for its registers of interest
 * (`show nic`). Register from a constructor with PCI_DRIVER_REGISTER. */
struct device;
struct pci_driver {
	const char *name;            /* the `driver` value, "ixgbe" */
	const struct pci_id *ids;
	/* Append a register view of dev to buf: snprintf-style return. */
	int (*format_hw)(struct device *dev, char *buf, size_t len);
};
void pci_driver_register(const struct pci_driver *d);
#define PCI_DRIVER_REGISTER(d)                                                                 \
	static void __attribute__((constructor)) pci_driver_register_##d(void)                 \
	{                                                                                      \
		pci_driver_register(&(d));                                                     \
	}

/* The registered native driver called name, or NULL. */
const struct pci_driver *pci_driver_find(const char *name);

/* The driver and id entry supporting vendor:device, or NULL. */
const struct pci_driver *pci_driver_match(uint16_t vendor, uint16_t device, const struct pci_id **id);

/* ---- sysfs ---- */

/* Read sysfs below root instead of "/sys" (NULL restores it). Tests only
 * need this; the daemon keeps the default. */
void pci_sysfs_root_set(const char *root);
const char *pci_sysfs_root(void);

/* One function as sysfs describes it. */
struct pci_info {
	char addr[PCI_ADDR_SIZE];
	uint16_t vendor;
	uint16_t device;
	int numa_node;              /* -1: unknown */
	char kernel_driver[PCI_NAME_SIZE]; /* "" when unbound */
	char iommu_group[PCI_NAME_SIZE];   /* "" without an IOMMU group */
};

/* Describe the function at addr. 0, -ENOENT (no such device: err says so
 * and how to list devices) or -EIO. */
int pci_info_get(const char *addr, struct pci_info *info, char *err, size_t errlen);

/* Every function whose ID a registered driver supports, in address order,
 * at most max; returns how many (or a negative errno). */
int pci_scan(struct pci_info *out, uint32_t max);

/* Check that addr exists, is a device `driver` supports and is bound to
 * vfio-pci with an IOMMU group. 0, or a negative errno with a message for
 * a person in err saying what to do (bind commands included). */
int pci_vfio_check(const char *addr, const char *driver, struct pci_info *info, char *err, size_t errlen);

/* ---- the BAR/DMA abstraction ---- */

struct pci_io;
struct pci_io_ops {
	uint32_t (*read32)(struct pci_io *io, uint32_t reg);
	void (*write32)(struct pci_io *io, uint32_t reg, uint32_t value);
	/* Let the device reach [va, va+len) at IOVA va + iova_offset.
	 * 0 or a negative errno. */
	int (*dma_map)(struct pci_io *io, void *va, size_t len);
	void (*dma_unmap)(struct pci_io *io, void *va, size_t len);
	/* Deliver MSI-X vectors 0..n-1 as writes to the eventfds fds[0..n)
	 * (n 0: no vector delivered any more). 0 or a negative errno.
	 * Optional: without it the device has no interrupts. */
	int (*irq_set)(struct pci_io *io, uint32_t n, const int *fds);
	/* Release the io (the device is quiet by then). */
	void (*close)(struct pci_io *io);
};

struct pci_io {
	const struct pci_io_ops *ops;
	int64_t iova_offset; /* IOVA = VA + iova_offset; 0 with vfio (identity) */
	char addr[PCI_ADDR_SIZE];
	uint16_t vendor;
	uint16_t device;
	int numa_node;
};

/* One BAR0 register, exactly one aligned 32-bit access. */
static inline uint32_t pci_read32(struct pci_io *io, uint32_t reg)
{
	return io->ops->read32(io, reg);
}

static inline void pci_write32(struct pci_io *io, uint32_t reg, uint32_t value)
{
	io->ops->write32(io, reg, value);
}

/* MSI-X vectors 0..n-1 as eventfd writes (pci_io_ops.irq_set); -ENOTSUP
 * when the io has no interrupts. */
static inline int pci_irq_set(struct pci_io *io, uint32_t n, const int *fds)
{
	return io->ops->irq_set ? io->ops->irq_set(io, n, fds) : -ENOTSUP;
}

/* The device address of va (which must lie in mapped memory). */
static inline uint64_t pci_iova(const struct pci_io *io, const void *va)
{
	return (uint64_t)(uintptr_t)va + (uint64_t)io->iova_offset;
}

/* A provider of ios in place of vfio-pci: returns an io for addr or NULL
 * with a reason. Installed by tests that run a driver against a model. */
typedef struct pci_io *(pci_io_open_fn)(void *ctx, const char *addr, char *err, size_t errlen);

/* Use fn for every later pci_io_open (NULL: back to vfio-pci). */
void pci_io_provider_set(pci_io_open_fn *fn, void *ctx);

/* Open the function at addr for driver `driver`: through the installed
 * provider, else vfio-pci (checked with pci_vfio_check first, BAR0 mapped,
 * bus mastering on). NULL with a message for a person in err. */
struct pci_io *pci_io_open(const char *addr, const char *driver, char *err, size_t errlen);

void pci_io_close(struct pci_io *io);

/* DMA memory for rings: len bytes (rounded up to pages), zeroed, aligned to
 * 4096, mapped for the device. Returns the address or NULL. */
void *pci_dma_alloc(struct pci_io *io, size_t len);
void pci_dma_free(struct pci_io *io, void *va, size_t len);

/* Map every buffer pool (graph/buffer.h) for the device, so that a buffer's
 * IOVA is pci_iova(io, buffer). 0 or a negative errno. */
int pci_dma_map_buffers(struct pci_io *io);
void pci_dma_unmap_buffers(struct pci_io *io);

/* ---- vfio-pci (vfio.c) ---- */

/* Open addr through vfio-pci: container (shared by all devices), group,
 * device fd, BAR0 mmap, bus mastering. NULL with a reason in err. */
struct pci_io *pci_vfio_open(const struct pci_info *info, char *err, size_t errlen);

/* ---- who uses what (show pci) ---- */

/* Record that dev drives addr, so that no second interface opens it.
 * 0, or -EBUSY (another device has it) / -ENOSPC. */
int pci_claim(const char *addr, struct device *dev);
void pci_release(const char *addr);
/* The device driving addr, or NULL. */
struct device *pci_claimed_by(const char *addr);

#endif
