/* The native NIC drivers' shared key check and port opening (pci_nic.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/util.h"
#include "drivers/pci/pci_nic.h"

int pci_nic_conf_check(void *obj, struct conf_check *chk)
{
	struct pci_nic_conf *c = obj;
	char canon[PCI_ADDR_SIZE];
	if (!c->dev[0] || pci_addr_canon(c->dev, canon)) {
		chk->key = c->dev[0] ? "dev" : NULL;
		snprintf(chk->msg, sizeof(chk->msg), "%s", c->dev[0] ? "expected a PCI address like 0000:03:00.0"
								     : "dev (the PCI address) is required");
		return -EINVAL;
	}
	memcpy(c->dev, canon, sizeof(canon));
	if (c->rx_desc & (c->rx_desc - 1) || c->tx_desc & (c->tx_desc - 1)) {
		chk->key = c->rx_desc & (c->rx_desc - 1) ? "rx-desc" : "tx-desc";
		snprintf(chk->msg, sizeof(chk->msg), "ring sizes must be powers of two");
		return -EINVAL;
	}
	return 0;
}

int pci_nic_conf_apply(const struct pci_nic_conf *c, const char *driver, struct device *dev,
		       char addr[PCI_ADDR_SIZE], char *err, size_t errlen)
{
	dev->n_rx_queues = (uint16_t)c->rx_queues;
	dev->n_tx_queues = (uint16_t)c->tx_queues;
	dev->mtu = (uint16_t)c->mtu;
	if (pci_addr_canon(c->dev, addr)) {
		snprintf(err, errlen, "%s: '%s' is not a PCI address", driver, c->dev);
		return -EINVAL;
	}
	return 0;
}

struct pci_io *pci_nic_open(const char *addr, const char *driver, struct device *dev, char *err, size_t errlen)
{
	if (pci_claimed_by(addr)) {
		snprintf(err, errlen, "%s: %s is already used by %s", driver, addr, pci_claimed_by(addr)->name);
		return NULL;
	}
	char why[512];
	struct pci_io *io = pci_io_open(addr, driver, why, sizeof(why));
	if (!io) {
		snprintf(err, errlen, "%s: %s", driver, why);
		return NULL;
	}
	pci_claim(addr, dev);
	return io;
}

/* ---- MSI-X vectors as eventfds ---- */

static void close_fds(uint32_t n, int *fds)
{
	for (uint32_t i = 0; i < n; i++)
		close(fds[i]);
}

int pci_nic_irq_open(struct pci_io *io, const char *driver, uint32_t first, uint32_t n, int *fds)
{
	int all[PCI_NIC_MAX_VECTORS];
	if (first + n > PCI_NIC_MAX_VECTORS)
		return -EINVAL;
	for (uint32_t v = 0; v < first; v++)
		all[v] = -1; /* not delivered (VFIO_DEVICE_SET_IRQS: fd -1) */
	for (uint32_t i = 0; i < n; i++) {
		fds[i] = all[first + i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (fds[i] < 0) {
			int rc = -errno;
			close_fds(i, fds);
			base_log(driver, "%s: no eventfd for the rx vectors: the queues stay polled", io->addr);
			return rc;
		}
	}
	int rc = pci_irq_set(io, first + n, all);
	if (rc) {
		close_fds(n, fds);
		base_log(driver, "%s: MSI-X vectors not set up (%s): the queues stay polled", io->addr, strerror(-rc));
	}
	return rc;
}

void pci_nic_irq_close(struct pci_io *io, uint32_t n, int *fds)
{
	(void)pci_irq_set(io, 0, NULL);
	close_fds(n, fds);
}

void pci_nic_irq_drain(int fd)
{
	uint64_t v;
	(void)!read(fd, &v, sizeof(v));
}
