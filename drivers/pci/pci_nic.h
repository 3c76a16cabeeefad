/* What the native NIC drivers (ixgbe, i40e) share above the rings: the
 * startup.conf keys of a PCI port and their check, and opening the port.
 *
 *   xe0 { driver ixgbe  dev 0000:03:00.0  rx-queues 4  rx-desc 1024  mtu 1500 }
 *
 * A driver's key table is PCI_NIC_KEYS with its own limits, its conf struct
 * struct pci_nic_conf, its check pci_nic_conf_check.
 */
#ifndef SLUICE_DRIVERS_PCI_NIC_H
#define SLUICE_DRIVERS_PCI_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/conf.h"
#include "drivers/device.h"
#include "drivers/pci/pci.h"

struct pci_nic_conf {
	char dev[PCI_ADDR_SIZE];
	uint32_t rx_queues;
	uint32_t tx_queues;
	uint32_t rx_desc;
	uint32_t tx_desc;
	uint32_t mtu;
	bool promisc;
};
_Static_assert(sizeof(struct pci_nic_conf) <= CONF_DRIVER_CONF_SIZE, "PCI NIC conf fits");

/* The key table of a PCI NIC driver whose queues per direction are at most
 * max_queues and whose MAC takes frames up to max_frame bytes. */
#define PCI_NIC_KEYS(max_queues, max_frame)                                                              \
	{                                                                                                \
		{ .name = "dev", .type = CONF_STRING, CONF_FIELD(struct pci_nic_conf, dev),               \
		  .doc = "PCI address of the port, bound to vfio-pci (0000:03:00.0)" },                   \
		{ .name = "rx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = (max_queues),      \
		  CONF_FIELD(struct pci_nic_conf, rx_queues), .doc = "rx queues (RSS spreads flows over them)" }, \
		{ .name = "tx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = (max_queues),      \
		  CONF_FIELD(struct pci_nic_conf, tx_queues), .doc = "tx queues" },                       \
		{ .name = "rx-desc", .type = CONF_UINT, .def = "1024", .min = 64, .max = 4096,            \
		  CONF_FIELD(struct pci_nic_conf, rx_desc), .doc = "rx ring size (power of two)" },       \
		{ .name = "tx-desc", .type = CONF_UINT, .def = "1024", .min = 64, .max = 4096,            \
		  CONF_FIELD(struct pci_nic_conf, tx_desc), .doc = "tx ring size (power of two)" },       \
		{ .name = "mtu", .type = CONF_UINT, .def = "1500", .min = 68, .max = (max_frame) - 18,    \
		  CONF_FIELD(struct pci_nic_conf, mtu),                                                   \
		  .doc = "largest IP packet; above the buffer size frames chain" },                       \
		{ .name = "promisc", .type = CONF_BOOL, .def = "on", CONF_FIELD(struct pci_nic_conf, promisc), \
		  .doc = "unicast and multicast promiscuous mode" },                                      \
		{ 0 },                                                                                    \
	}

/* The check of a struct pci_nic_conf (conf_check_fn_t): dev is a PCI
 * address (made canonical), the ring sizes powers of two. */
int pci_nic_conf_check(void *obj, struct conf_check *chk);

/* Fill dev's queue counts and MTU from c, and addr with the canonical
 * address. 0, or -EINVAL with the reason in err ("<driver>: ..."). */
int pci_nic_conf_apply(const struct pci_nic_conf *c, const char *driver, struct device *dev,
		       char addr[PCI_ADDR_SIZE], char *err, size_t errlen);

/* Open the port at addr for dev (driver `driver`) and claim it: refused
 * when another interface has it. The io, or NULL with the reason in err. */
struct pci_io *pci_nic_open(const char *addr, const char *driver, struct device *dev, char *err, size_t errlen);

#define PCI_NIC_MAX_VECTORS 64
/* Rx queues' MSI-X vectors (the queue -> vector mapping is the driver's):
 * an eventfd for each of vectors first..first+n-1 into fds[0..n), vectors
 * below first delivered nowhere, all set up through the io (vfio). 0, or
 * a negative errno with nothing left open (logged: the queues stay
 * polled). */
int pci_nic_irq_open(struct pci_io *io, const char *driver, uint32_t first, uint32_t n, int *fds);
/* Tear the vectors down and close fds[0..n). */
void pci_nic_irq_close(struct pci_io *io, uint32_t n, int *fds);
/* Read away what the eventfd fd counted (nothing: EAGAIN, fine). */
void pci_nic_irq_drain(int fd);

#endif
