/* The i40e admin queue (X710/XL710 datasheet, the admin queue chapter): the ATQ carries our commands to the
 * NIC's firmware, the ARQ brings its events back. Both are rings of 32-byte
 * descriptors in DMA memory; the ATQ has one 4 KB buffer for indirect
 * commands (one command is in flight at a time), the ARQ one 4 KB buffer
 * per entry, all handed to firmware at init.
 *
 * A command is complete when the firmware's head (ATQH) reaches our
 * next_to_use, as DPDK polls it (50 us steps, 250 ms); its retval then says
 * how it went, and an error completion is returned as -EIO with the code
 * kept in aq_last_rc for the caller's message.
 */
#include <errno.h>
#include <string.h>

#include "drivers/i40e/i40e_private.h"
#include "drivers/pci/io_barrier.h"
#include "drivers/pci/pci_clock.h"
#include "graph/node.h"

#define RING_BYTES (I40E_AQ_ENTRIES * sizeof(struct i40e_aq_desc))

const char *i40e_aq_rc_name(uint16_t rc)
{
	switch (rc) {
	case I40E_AQ_RC_OK: return "OK";
	case I40E_AQ_RC_EPERM: return "EPERM";
	case I40E_AQ_RC_ENOENT: return "ENOENT";
	case I40E_AQ_RC_EIO: return "EIO";
	case I40E_AQ_RC_ENOMEM: return "ENOMEM";
	case I40E_AQ_RC_EBUSY: return "EBUSY";
	case I40E_AQ_RC_EEXIST: return "EEXIST";
	case I40E_AQ_RC_EINVAL: return "EINVAL";
	case I40E_AQ_RC_ENOSPC: return "ENOSPC";
	case I40E_AQ_RC_ENOSYS: return "ENOSYS";
	default: return "firmware error";
	}
}

static void arq_post(struct i40e_dev *id, uint32_t i)
{
	volatile struct i40e_aq_desc *d = &id->arq.desc[i];
	uint64_t iova = pci_iova(id->io, id->arq.bufs + (size_t)i * I40E_AQ_BUF_SIZE);
	memset((void *)d, 0, sizeof(*d));
	d->flags = I40E_AQ_FLAG_BUF | I40E_AQ_FLAG_LB; /* 4 KB > 512 bytes */
	d->datalen = I40E_AQ_BUF_SIZE;
	d->params.ext.addr_high = (uint32_t)(iova >> 32);
	d->params.ext.addr_low = (uint32_t)iova;
}

static void ring_regs(struct i40e_dev *id, uint32_t bal, uint32_t bah, uint32_t len, uint32_t h, uint32_t t,
		      const volatile void *ring)
{
	uint64_t iova = pci_iova(id->io, (const void *)ring);
	wr(id, h, 0);
	wr(id, t, 0);
	wr(id, len, I40E_AQ_ENTRIES | I40E_AQLEN_ENABLE);
	wr(id, bal, (uint32_t)iova);
	wr(id, bah, (uint32_t)(iova >> 32));
}

int i40e_aq_init(struct i40e_dev *id)
{
	id->atq.desc = pci_dma_alloc(id->io, RING_BYTES);
	id->arq.desc = pci_dma_alloc(id->io, RING_BYTES);
	id->atq.bufs = pci_dma_alloc(id->io, I40E_AQ_BUF_SIZE);
	id->arq.bufs = pci_dma_alloc(id->io, (size_t)I40E_AQ_ENTRIES * I40E_AQ_BUF_SIZE);
	if (!id->atq.desc || !id->arq.desc || !id->atq.bufs || !id->arq.bufs)
		return -ENOMEM;
	id->atq.next = id->arq.next = 0;
	ring_regs(id, I40E_PF_ATQBAL, I40E_PF_ATQBAH, I40E_PF_ATQLEN, I40E_PF_ATQH, I40E_PF_ATQT, id->atq.desc);
	if (rd(id, I40E_PF_ATQBAL) != (uint32_t)pci_iova(id->io, (const void *)id->atq.desc))
		return -EIO; /* the base did not stick */
	for (uint32_t i = 0; i < I40E_AQ_ENTRIES; i++)
		arq_post(id, i);
	ring_regs(id, I40E_PF_ARQBAL, I40E_PF_ARQBAH, I40E_PF_ARQLEN, I40E_PF_ARQH, I40E_PF_ARQT, id->arq.desc);
	pci_io_wmb();
	wr(id, I40E_PF_ARQT, I40E_AQ_ENTRIES - 1); /* every buffer to firmware */
	id->aq_up = true;
	return 0;
}

void i40e_aq_shutdown(struct i40e_dev *id)
{
	if (id->aq_up) {
		struct i40e_aq_desc d = { .opcode = I40E_AQC_QUEUE_SHUTDOWN };
		d.params.raw[0] = 1; /* driver unloading */
		i40e_aq_cmd(id, &d, NULL, 0, false);
		wr(id, I40E_PF_ATQLEN, 0);
		wr(id, I40E_PF_ARQLEN, 0);
		wr(id, I40E_PF_ATQBAL, 0);
		wr(id, I40E_PF_ATQBAH, 0);
		wr(id, I40E_PF_ARQBAL, 0);
		wr(id, I40E_PF_ARQBAH, 0);
		id->aq_up = false;
	}
	pci_dma_free(id->io, (void *)id->atq.desc, RING_BYTES);
	pci_dma_free(id->io, (void *)id->arq.desc, RING_BYTES);
	pci_dma_free(id->io, id->atq.bufs, I40E_AQ_BUF_SIZE);
	pci_dma_free(id->io, id->arq.bufs, (size_t)I40E_AQ_ENTRIES * I40E_AQ_BUF_SIZE);
	memset(&id->atq, 0, sizeof(id->atq));
	memset(&id->arq, 0, sizeof(id->arq));
}

int i40e_aq_cmd(struct i40e_dev *id, struct i40e_aq_desc *desc, void *buf, uint16_t len, bool to_fw)
{
	if (!id->aq_up || len > I40E_AQ_BUF_SIZE || (len && !buf))
		return -EINVAL;
	uint32_t slot = id->atq.next;
	volatile struct i40e_aq_desc *d = &id->atq.desc[slot];
	struct i40e_aq_desc cmd = *desc;
	cmd.flags = (uint16_t)(cmd.flags | I40E_AQ_FLAG_SI);
	cmd.retval = 0;
	if (len) {
		uint64_t iova = pci_iova(id->io, id->atq.bufs);
		memset(id->atq.bufs, 0, len);
		if (to_fw)
			memcpy(id->atq.bufs, buf, len);
		cmd.flags = (uint16_t)(cmd.flags | I40E_AQ_FLAG_BUF | (to_fw ? I40E_AQ_FLAG_RD : 0) |
				       (len > 512 ? I40E_AQ_FLAG_LB : 0));
		cmd.datalen = len;
		cmd.params.ext.addr_high = (uint32_t)(iova >> 32);
		cmd.params.ext.addr_low = (uint32_t)iova;
	}
	memcpy((void *)d, &cmd, sizeof(cmd));
	id->atq.next = (slot + 1) % I40E_AQ_ENTRIES;
	pci_io_wmb();
	wr(id, I40E_PF_ATQT, id->atq.next);

	uint64_t deadline = pci_clock_now_ns() + I40E_AQ_TIMEOUT_US * 1000ull;
	for (;;) {
		bool late = pci_clock_now_ns() >= deadline;
		if ((rd(id, I40E_PF_ATQH) & I40E_AQH_MASK) == id->atq.next)
			break;
		if (late) {
			bool crit = rd(id, I40E_PF_ATQLEN) & I40E_AQLEN_CRIT;
			base_log("i40e", "%s: admin command 0x%04x timed out%s", id->addr, desc->opcode,
				  crit ? " (ATQLEN.CRIT: critical queue error)" : "");
			return -ETIMEDOUT;
		}
		pci_clock_sleep_us(I40E_AQ_POLL_US);
	}
	pci_io_rmb();
	memcpy(desc, (const void *)d, sizeof(*desc));
	if (len && !to_fw)
		memcpy(buf, id->atq.bufs, MIN(len, desc->datalen ? desc->datalen : len));
	if ((desc->flags & I40E_AQ_FLAG_ERR) || (desc->retval & 0xFF)) {
		id->aq_last_rc = desc->retval & 0xFF;
		return -EIO;
	}
	return 0;
}

void i40e_link_from_desc(struct i40e_dev *id, const struct i40e_aq_desc *d)
{
	static const uint32_t mbps[8] = { 0, 100, 1000, 10000, 40000, 20000, 25000, 0 };
	uint8_t speed = d->params.raw[I40E_LINK_SPEED];
	id->link.up = d->params.raw[I40E_LINK_INFO] & 1;
	id->link.full_duplex = id->link.up;
	id->link.speed_mbps = 0;
	for (uint32_t b = 1; b < 7 && id->link.up; b++)
		if (speed & (1u << b))
			id->link.speed_mbps = mbps[b];
}

uint32_t i40e_arq_poll(struct i40e_dev *id)
{
	if (!id->aq_up)
		return 0;
	uint32_t head = rd(id, I40E_PF_ARQH) & I40E_AQH_MASK, n = 0;
	while (id->arq.next != head) {
		uint32_t i = id->arq.next;
		struct i40e_aq_desc ev;
		pci_io_rmb();
		memcpy(&ev, (const void *)&id->arq.desc[i], sizeof(ev));
		if (ev.opcode == I40E_AQC_GET_LINK_STATUS) {
			i40e_link_from_desc(id, &ev);
			id->n_link_events++;
		}
		arq_post(id, i);
		id->arq.next = (i + 1) % I40E_AQ_ENTRIES;
		n++;
	}
	if (n) {
		pci_io_wmb();
		/* The entry before next_to_clean is the last one firmware may fill. */
		wr(id, I40E_PF_ARQT, (id->arq.next + I40E_AQ_ENTRIES - 1) % I40E_AQ_ENTRIES);
	}
	return n;
}
