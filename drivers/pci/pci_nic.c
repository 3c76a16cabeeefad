/* The native NIC drivers' shared key check and port opening (pci_nic.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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
