/* i40e interrupts: an rx queue in interrupt mode wakes its thread through
 * an MSI-X vector of its own (X710/XL710 datasheet 7.5), which vfio
 * delivers as a write to an eventfd the thread's epoll watches
 * (drivers/device_rx_mode.c).
 *
 * Vector 0 keeps what it had for polled queues: the tx queues' causes on
 * its list, WB_ON_ITR with INTENA 0, so that completed descriptors are
 * written back when its ITR expires (i40e.c, rx_wb_on_itr). Rx queue q's
 * cause goes alone on vector q + 1's list (QINT_RQCTL.MSIX_INDX,
 * PFINT_LNKLSTN), ITR index 0 at I40E_RX_WB_ITR (PFINT_ITRN), and
 * PFINT_DYN_CTLN at WB_ON_ITR with INTENA 0: polled, the queue's
 * write-back is as before and no interrupt is raised, nothing per packet.
 *
 * Arming (i40e_rx_arm, only in the thread's last look before it blocks,
 * graph/sleep.c): read away a stale eventfd count, write DYN_CTLN with
 * INTENA (and CLEARPBA, WB_ON_ITR kept, no ITR update), flush the posted
 * write with a read, look at the ring once more. The NIC masks the vector
 * again when it fires (INTENA cleared): one frame, one interrupt, then the
 * queue is polled until empty and armed again only before the next sleep.
 * A cause event that came while INTENA was 0 fires when INTENA is set: on
 * this NIC a frame between the last poll and the enable is announced
 * either way, and the look after the enable saves the wakeup (and the
 * system calls) when it is already there.
 */
#include "drivers/i40e/i40e_private.h"

void i40e_irq_open(struct i40e_dev *id)
{
	uint32_t n = id->dev.n_rx_queues;
	if (pci_nic_irq_open(id->io, "i40e", 1, n, id->irq_fd) == 0)
		id->n_irq = n;
}

void i40e_irq_close(struct i40e_dev *id)
{
	if (id->n_irq)
		pci_nic_irq_close(id->io, id->n_irq, id->irq_fd);
	id->n_irq = 0;
}

void i40e_irq_lists(struct i40e_dev *id, bool on)
{
	for (uint32_t q = 0; q < id->n_irq; q++) {
		if (!on) {
			wr(id, I40E_PFINT_DYN_CTLN(q), 0);
			wr(id, I40E_PFINT_LNKLSTN(q), I40E_QUEUE_END_OF_LIST);
			continue;
		}
		wr(id, I40E_PFINT_ITRN(0, q), I40E_RX_WB_ITR);
		wr(id, I40E_QINT_RQCTL(q), I40E_QINT_CAUSE_ENA | 0u << I40E_QINT_ITR_INDX_SHIFT |
						   (q + 1) << I40E_QINT_MSIX_INDX_SHIFT |
						   I40E_QUEUE_END_OF_LIST << I40E_QINT_NEXTQ_INDX_SHIFT);
		wr(id, I40E_PFINT_LNKLSTN(q), q | 0u << I40E_PFINT_LNKLST0_FIRSTQ_TYPE_SHIFT);
		wr(id, I40E_PFINT_DYN_CTLN(q), I40E_PFINT_DYN_CTL0_WB_ON_ITR | I40E_PFINT_DYN_CTL0_ITR_NONE);
	}
}

void i40e_irq_enable(struct i40e_dev *id, uint16_t q)
{
	pci_nic_irq_drain(id->irq_fd[q]);
	wr(id, I40E_PFINT_DYN_CTLN(q), I40E_PFINT_DYN_CTL0_INTENA | I40E_PFINT_DYN_CTLN_CLEARPBA |
					       I40E_PFINT_DYN_CTL0_WB_ON_ITR | I40E_PFINT_DYN_CTL0_ITR_NONE);
	(void)rd(id, I40E_GLGEN_RSTAT); /* the enable reached the NIC before the ring is read again */
}

int i40e_rx_fd(struct device *dev, uint16_t q)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	return q < id->n_irq ? id->irq_fd[q] : DEV_RX_FD_NONE;
}

bool i40e_rx_arm(struct device *dev, uint16_t q)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	if (q >= id->n_irq || !id->rxq[q].ring)
		return false;
	i40e_irq_enable(id, q);
	return i40e_rx_pending(id, q);
}
