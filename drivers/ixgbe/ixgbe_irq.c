/* ixgbe interrupts: an rx queue in interrupt mode wakes its thread through
 * an MSI-X vector (82599 datasheet 7.3), which vfio delivers as a write to
 * an eventfd the thread's epoll watches (drivers/device_rx_mode.c).
 *
 * The causes, as 7.3 prescribes for MSI-X: GPIE.MSIX_MODE with PBA support;
 * rx queue q's IVAR entry names vector q (7.3.4); EIAC auto-clears the cause
 * when the message is sent (7.3.1.4) and EIAM with GPIE.EIAME masks it then
 * (7.3.1.5), so that one frame gives one interrupt and the queue is then
 * polled until empty with no further interrupt; EITR throttles each vector
 * (IXGBE_ITR_US). A queue in polling mode keeps its cause masked: nothing
 * per packet.
 *
 * Arming (ixgbe_rx_arm), only in the thread's last look before it blocks
 * (graph/sleep.c): read away a stale eventfd count, clear a cause left
 * from frames taken while polling (EICR is write-1-to-clear), unmask
 * (EIMS), flush the posted writes with a read, then look at the ring once
 * more. A frame written back before the unmask reached the NIC is seen by
 * that look; one after it raises the vector. Either way no frame sleeps.
 */
#include "drivers/ixgbe/ixgbe_private.h"

void ixgbe_irq_open(struct ixgbe_dev *xd)
{
	uint32_t n = xd->dev.n_rx_queues;
	if (pci_nic_irq_open(xd->io, "ixgbe", 0, n, xd->irq_fd) == 0)
		xd->n_irq = n;
}

void ixgbe_irq_close(struct ixgbe_dev *xd)
{
	if (xd->n_irq)
		pci_nic_irq_close(xd->io, xd->n_irq, xd->irq_fd);
	xd->n_irq = 0;
}

void ixgbe_irq_program(struct ixgbe_dev *xd)
{
	if (!xd->n_irq)
		return;
	uint32_t all = (1u << xd->n_irq) - 1;
	wr(xd, IXGBE_EIMC, 0xFFFFFFFF);
	wr(xd, IXGBE_GPIE, IXGBE_GPIE_MSIX_MODE | IXGBE_GPIE_PBA_SUPPORT | IXGBE_GPIE_EIAME);
	for (uint32_t q = 0; q < xd->n_irq; q++) {
		uint32_t shift = 16 * (q % 2);
		uint32_t v = rd(xd, IXGBE_IVAR(q / 2)) & ~(0xFFu << shift);
		wr(xd, IXGBE_IVAR(q / 2), v | (IXGBE_IVAR_ALLOC_VAL | q) << shift);
		wr(xd, IXGBE_EITR(q), (IXGBE_ITR_US / 2) << 3 & IXGBE_EITR_ITR_MASK);
	}
	wr(xd, IXGBE_EIAC, all);
	wr(xd, IXGBE_EIAM, all);
	wr(xd, IXGBE_EICR, all); /* nothing stale from before the start */
}

void ixgbe_irq_enable(struct ixgbe_dev *xd, uint16_t q)
{
	pci_nic_irq_drain(xd->irq_fd[q]);
	wr(xd, IXGBE_EICR, 1u << q);
	wr(xd, IXGBE_EIMS, 1u << q);
	(void)rd(xd, IXGBE_STATUS); /* the unmask reached the NIC before the ring is read again */
}

int ixgbe_rx_fd(struct device *dev, uint16_t q)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	return q < xd->n_irq ? xd->irq_fd[q] : DEV_RX_FD_NONE;
}

bool ixgbe_rx_arm(struct device *dev, uint16_t q)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	if (q >= xd->n_irq || !xd->rxq[q].ring)
		return false;
	ixgbe_irq_enable(xd, q);
	return ixgbe_rx_pending(xd, q);
}
