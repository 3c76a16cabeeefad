/* The ixgbe driver against the 82599 model (tests/models/ixgbe_model.c):
 * bring-up to link up; a 1,000-frame pcap replayed 1,000 times through
 * model rx -> ixgbe-input -> l2-xconnect -> interface-output -> model tx,
 * byte-identical and in order; ring wrap; jumbo frames as chains; rx refill
 * under buffer exhaustion; NIC drops folded into the counters; RSS over 4
 * queues exactly as the RETA and the Toeplitz hash say; tx ring full; and
 * the model catching each class of misprogramming on purpose. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/device.h"
#include "drivers/ixgbe/ixgbe_private.h"
#include "drivers/pci/pci.h"
#include "graph/buffer.h"
#include "graph/graph.h"
#include "base/toeplitz.h"
#include "tests/buffer_check.h"
#include "tests/check_run.h"
#include "tests/models/ixgbe_model.h"
#include "tests/models/nic_model.h"
#include "tests/nic/nic_harness.h"

#define ADDR0 "0000:03:00.0"
#define ADDR1 "0000:03:00.1"

static struct ixgbe_model *m0, *m1;

static int wire_rx(const uint8_t *frame, uint32_t len)
{
	return ixgbe_model_rx(m0, frame, len);
}

static uint32_t wire_rx_room(void)
{
	return ixgbe_model_rx_room(m0, 0);
}

static void wire_tx_hold(bool hold)
{
	ixgbe_model_tx_hold(m1, hold);
}

static uint32_t tick(void)
{
	return ixgbe_model_tick(m0) + ixgbe_model_tick(m1);
}

static struct pci_txq *txq(struct device *d, uint16_t q)
{
	return &container_of(d, struct ixgbe_dev, dev)->txq[q];
}

static void m0_again(void);
static void model_again(uint32_t never)
{
	m0_again();
	ixgbe_model_never(m0, never);
}

static struct nic_model *model(int port)
{
	return ixgbe_model_nic(port ? m1 : m0);
}

const struct nic_suite nic_suite = {
	.driver = "ixgbe",
	.name = { "xe0", "xe1" },
	.addr = { ADDR0, ADDR1 },
	.wire_rx = wire_rx,
	.wire_rx_room = wire_rx_room,
	.wire_tx_hold = wire_tx_hold,
	.tick = tick,
	.txq = txq,
	.model = model,
	.model_again = model_again,
};

static void setup(void)
{
	nic_setup();
	static const uint8_t mac0[6] = { 0x02, 0, 0, 0, 0, 0x10 }, mac1[6] = { 0x02, 0, 0, 0, 0, 0x11 };
	m0 = ixgbe_model_create(ADDR0, mac0);
	m1 = ixgbe_model_create(ADDR1, mac1);
	ck_assert(m0 && m1);
	nic_model_on_error(ixgbe_model_nic(m0), nic_model_error, NULL);
	nic_model_on_error(ixgbe_model_nic(m1), nic_model_error, NULL);
	nic_model_on_tx(ixgbe_model_nic(m1), nic_wire_tx, NULL);
	pci_io_provider_set(nic_model_open, NULL);
}

static void teardown(void)
{
	nic_teardown_devices();
	if (!expect_errors) {
		ck_assert_msg(nic_model_errors(ixgbe_model_nic(m0)) == 0, "%s", nic_model_last_error(ixgbe_model_nic(m0)));
		ck_assert_msg(nic_model_errors(ixgbe_model_nic(m1)) == 0, "%s", nic_model_last_error(ixgbe_model_nic(m1)));
	}
	pci_io_provider_set(NULL, NULL);
	ixgbe_model_destroy(m0);
	ixgbe_model_destroy(m1);
	nic_teardown_buffers();
}

/* ---- bring-up ---- */

START_TEST(bring_up_link)
{
	struct device *d = nic_dev("xe0", ADDR0, NULL, 0);
	struct ixgbe_model_stats st;
	ixgbe_model_stats(m0, &st);
	ck_assert_uint_eq(st.resets, 1);
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x05080) & 0x700, 0x700); /* FCTRL BAM|UPE|MPE */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x04240) & 0x403, 0x403); /* HLREG0 TXPADEN|RXCRCSTRP|TXCRCEN */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x05818), 0);            /* one queue: no RSS */
	static const uint8_t mac0[6] = { 0x02, 0, 0, 0, 0, 0x10 };
	ck_assert_mem_eq(d->mac, mac0, 6); /* the port's own, from RAL(0)/RAH(0) */
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x03000) & 1, 1);          /* RXEN */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x01028) >> 25 & 1, 1);    /* RXDCTL(0).ENABLE */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x06028) >> 25 & 1, 1);    /* TXDCTL(0).ENABLE */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x01018), 1023);           /* RDT: the ring starts full */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x01014) >> 25 & 7, 1);    /* advanced one buffer */
	ck_assert_uint_eq(buffer_n_in_use(), 1024);
	buffer_check_held("device", "xe0 rx 0", 1024); /* the ring armed, named by `show buffers` */

	struct dev_link l;
	dev_link_get(d, &l);
	ck_assert(l.up);
	ck_assert(l.full_duplex);
	ck_assert_uint_eq(l.speed_mbps, 10000);

	const struct pci_driver *pd = pci_driver_find("ixgbe");
	ck_assert_ptr_nonnull(pd);
	char buf[2048];
	ck_assert_int_gt(pd->format_hw(d, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "link up 10000 Mb/s") && strstr(buf, "mac 02:00:00:00:00:10") &&
			      strstr(buf, "RDH 0 RDT 1023") && strstr(buf, "\n  rings: 1024 rx, 1024 tx descriptors per queue\n"),
		      "%s", buf);

	ixgbe_model_set_cable(m0, false);
	dev_link_get(d, &l);
	ck_assert(!l.up);
	ck_assert_ptr_eq(pci_claimed_by(ADDR0), d);

	/* A second interface on the same port is refused. */
	const char *w[] = { "dev", ADDR0 };
	ck_assert_ptr_null(dev_create("xe9", "ixgbe", w, 2, err, sizeof(err)));
	ck_assert_msg(strstr(err, "already used by xe0"), "%s", err);

	ck_assert_int_eq(dev_set_admin_up(d, false), 0);
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x01028) >> 25 & 1, 0);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	/* Up again after down. */
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x01018), 1023);
}
END_TEST

/* ---- the million ---- */

START_TEST(pcap_million_through_xconnect)
{
	struct device *d0, *d1;
	nic_pcap_replay(&d0, &d1);
	struct ixgbe_model_stats st;
	ixgbe_model_stats(m1, &st);
	ck_assert_uint_eq(st.tx_no_fcs, 0);
	ck_assert_uint_eq(st.tx_frames, (uint64_t)REPLAYS * N_FRAMES);
}
END_TEST

START_TEST(ring_wrap)
{
	const char *w[] = { "rx-desc", "64", "tx-desc", "64" };
	struct device *d0, *d1;
	pair(w, 4, w, 4, &d0, &d1);
	for (uint32_t i = 0; i < 300; i++)
		make_frame(&frames[i], i, 60, 1514);
	wire_expect(frames, 300);
	for (uint32_t r = 0; r < 10; r++)
		inject(frames, 300);
	ck_assert_uint_eq(wire.seen, 3000);
	ck_assert_uint_eq(wire.mismatches, 0);
	struct ixgbe_model_stats s0, s1;
	ixgbe_model_stats(m0, &s0);
	ixgbe_model_stats(m1, &s1);
	ck_assert_uint_eq(s0.rx_wraps[0], 3000 / 64);
	ck_assert_uint_eq(s1.tx_wraps[0], 3000 / 64);
	/* The hardware and software indices agree after all the wrapping. */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x01010), 3000 % 64);          /* RDH */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x01018), (3000 + 63) % 64);   /* RDT */
	ck_assert_uint_eq(ixgbe_model_peek(m1, 0x06010), ixgbe_model_peek(m1, 0x06018));
}
END_TEST

/* ---- jumbo frames, oversize ---- */

START_TEST(jumbo_chains)
{
	const char *w[] = { "mtu", "9000" };
	struct device *d0, *d1;
	pair(w, 2, w, 2, &d0, &d1);
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x04268) >> 16, 9018); /* MAXFRS */
	for (uint32_t i = 0; i < 40; i++)
		make_frame(&frames[i], i, i % 2 ? 60 : 2049, i % 2 ? 1514 : 9014);
	wire_expect(frames, 40);
	inject(frames, 40);
	ck_assert_uint_eq(wire.seen, 40);
	ck_assert_uint_eq(wire.mismatches, 0);

	/* Without jumbo frames a 9000-byte frame is the MAC's oversize error. */
	dev_delete(d0);
	dev_delete(d1);
	pair(NULL, 0, NULL, 0, &d0, &d1);
	ck_assert_int_eq(ixgbe_model_rx(m0, frames[0].bytes, 9000), -1);
	struct dev_counters c;
	dev_counters_get(d0, &c);
	ck_assert_uint_eq(c.rx_errors, 1); /* ROC */
}
END_TEST

/* ---- buffers run out ---- */

START_TEST(rx_refill_exhaustion)
{
	struct device *d0, *d1;
	pair(NULL, 0, NULL, 0, &d0, &d1);
	uint32_t *hoard = malloc(8192 * sizeof(uint32_t));
	uint32_t n_hoard = 0, got;
	while ((got = buffer_alloc(hoard + n_hoard, 256, -1)) > 0)
		n_hoard += got;
	ck_assert_uint_gt(n_hoard, 0);
	for (uint32_t i = 0; i < 100; i++)
		make_frame(&frames[i], i, 60, 1514);
	wire_expect(frames, 100);
	for (uint32_t i = 0; i < 100; i++)
		ck_assert_int_eq(ixgbe_model_rx(m0, frames[i].bytes, frames[i].len), 0);
	run();
	struct dev_counters c0, c1;
	dev_counters_get(d0, &c0);
	ck_assert_uint_eq(c0.rx_dropped, 100);
	ck_assert_uint_eq(c0.rx_packets, 0);
	ck_assert_uint_eq(wire.seen, 0);
	/* The ring is still full of buffers: the NIC dropped nothing itself. */
	ck_assert_uint_eq(ixgbe_model_rx_room(m0, 0), 1023);

	/* Ten buffers back: ten frames of the next fifty go through. */
	buffer_free(hoard + n_hoard - 10, 10);
	n_hoard -= 10;
	for (uint32_t i = 0; i < 50; i++)
		ck_assert_int_eq(ixgbe_model_rx(m0, frames[i].bytes, frames[i].len), 0);
	run();
	dev_counters_get(d0, &c0);
	ck_assert_uint_eq(c0.rx_packets, 10);
	ck_assert_uint_eq(c0.rx_dropped, 140);

	buffer_free(hoard, n_hoard);
	free(hoard);
	wire_expect(frames, 100);
	inject(frames, 100);
	dev_counters_get(d0, &c0);
	dev_counters_get(d1, &c1);
	ck_assert_uint_eq(c0.rx_packets, 110);
	ck_assert_uint_eq(wire.seen, 100);
	ck_assert_uint_eq(wire.mismatches, 0);
	ck_assert_uint_eq(c1.tx_packets, 110);
}
END_TEST

/* The NIC's own drops (no descriptor: QPRDC with DROP_EN) reach RX-dropped. */
START_TEST(nic_drops_folded)
{
	const char *w[] = { "rx-desc", "64" };
	struct device *d0, *d1;
	pair(w, 2, NULL, 0, &d0, &d1);
	for (uint32_t i = 0; i < 100; i++)
		make_frame(&frames[i], i, 60, 200);
	uint32_t landed = 0;
	for (uint32_t i = 0; i < 100; i++)
		landed += ixgbe_model_rx(m0, frames[i].bytes, frames[i].len) == 0;
	ck_assert_uint_eq(landed, 63);
	struct dev_counters c0;
	dev_counters_get(d0, &c0);
	ck_assert_uint_eq(c0.rx_dropped, 37);
	wire_expect(frames, 63);
	run();
	ck_assert_uint_eq(wire.seen, 63);
	ck_assert_uint_eq(wire.mismatches, 0);
	dev_counters_get(d0, &c0);
	ck_assert_uint_eq(c0.rx_packets, 63);
	ck_assert_uint_eq(c0.rx_dropped, 37);
	dev_clear_counters(d0);
	dev_counters_get(d0, &c0);
	ck_assert_uint_eq(c0.rx_dropped, 0);
}
END_TEST

/* ---- RSS ---- */

START_TEST(rss_four_queues)
{
	const char *w[] = { "rx-queues", "4" };
	struct device *d = nic_dev("xe0", ADDR0, w, 2);
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x05818) & 0xF, 1);         /* MRQC.MRQE: RSS */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x05C80), 0xda565a6d);      /* RSSRK(0), key bytes 0..3 */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x05C04), 0x03020100);      /* RETA(1): entries 4..7 */

	nic_check_rss(d, 128);
}
END_TEST

/* ---- tx ring full ---- */

START_TEST(tx_chains_mixed)
{
	nic_check_tx_chains_mixed();
}
END_TEST

START_TEST(rx_chunk_chains)
{
	nic_check_rx_chunk_chains();
}
END_TEST

START_TEST(tx_offsets)
{
	nic_check_tx_offsets();
}
END_TEST

START_TEST(tx_ring_full)
{
	nic_check_tx_ring_full();
}
END_TEST

/* ---- write-back and asynchronous transmit ---- */

/* Single frames at a low rate: each is received within 2 polls of the NIC
 * writing its descriptor back (the drivers program immediate write-back). */
START_TEST(rx_low_rate_latency)
{
	nic_check_rx_low_rate();
}
END_TEST

START_TEST(tx_async)
{
	nic_check_tx_async();
}
END_TEST

START_TEST(tx_reuse_before_dd_caught)
{
	nic_check_tx_reuse_caught();
}
END_TEST

/* ---- the model catches misprogramming ---- */

/* The test as a bad driver: the model's io, a ring and buffers mapped. */
struct raw {
	struct pci_io *io;
	uint8_t *ring;
	uint8_t *data;
};

static void raw_open(struct raw *r)
{
	expect_errors = true;
	r->io = pci_io_open(ADDR0, "ixgbe", err, sizeof(err));
	ck_assert_msg(r->io, "%s", err);
	r->ring = pci_dma_alloc(r->io, 4096);
	r->data = pci_dma_alloc(r->io, 4096);
	ck_assert(r->ring && r->data);
	pci_write32(r->io, 0x042A0, 3u << 13 | 1u << 12); /* AUTOC: 10G serial, AN_RESTART: the link, a virtual second later */
	nic_model_advance_ns(NIC_LINK_WAIT_NS);
}

static void raw_close(struct raw *r)
{
	pci_write32(r->io, 0x01028, 0); /* RXDCTL(0) off */
	pci_dma_free(r->io, r->ring, 4096);
	pci_dma_free(r->io, r->data, 4096);
	pci_io_close(r->io);
}

/* Program rx queue 0 on ring + off, len bytes, and try to enable it. */
static void raw_rx_ring(struct raw *r, uint64_t iova, uint32_t len)
{
	pci_write32(r->io, 0x01014, 1u << 25 | 2); /* SRRCTL: advanced one buffer, 2 KB */
	pci_write32(r->io, 0x01000, (uint32_t)iova);
	pci_write32(r->io, 0x01004, (uint32_t)(iova >> 32));
	pci_write32(r->io, 0x01008, len);
	pci_write32(r->io, 0x01028, 1u << 25);
}

static void expect_caught(uint64_t before, const char *what)
{
	ck_assert_msg(nic_model_errors(ixgbe_model_nic(m0)) > before, "not caught: %s", what);
	ck_assert_msg(strstr(nic_model_last_error(ixgbe_model_nic(m0)), what), "%s", nic_model_last_error(ixgbe_model_nic(m0)));
}

START_TEST(model_catches_unaligned_ring)
{
	struct raw r;
	raw_open(&r);
	uint64_t e = nic_model_errors(ixgbe_model_nic(m0));
	raw_rx_ring(&r, pci_iova(r.io, r.ring + 8), 1024);
	expect_caught(e, "not 16-byte aligned");
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x01028) >> 25 & 1, 0);
	e = nic_model_errors(ixgbe_model_nic(m0));
	raw_rx_ring(&r, pci_iova(r.io, r.ring), 1000);
	expect_caught(e, "multiple of 128");
	raw_close(&r);
}
END_TEST

START_TEST(model_catches_tail_past_ring)
{
	struct raw r;
	raw_open(&r);
	uint64_t e = nic_model_errors(ixgbe_model_nic(m0));
	raw_rx_ring(&r, pci_iova(r.io, r.ring), 1024); /* 64 descriptors */
	ck_assert_uint_eq(nic_model_errors(ixgbe_model_nic(m0)), e);
	pci_write32(r.io, 0x01018, 64);
	expect_caught(e, "tail 64 past the ring of 64");
	e = nic_model_errors(ixgbe_model_nic(m0));
	pci_write32(r.io, 0x06018, 3); /* TDT of a tx queue with no ring */
	expect_caught(e, "past the ring");
	raw_close(&r);
}
END_TEST

START_TEST(model_catches_dma_outside)
{
	struct raw r;
	raw_open(&r);
	/* A ring in memory the device was never given. */
	uint8_t *heap = aligned_alloc(4096, 4096);
	uint64_t e = nic_model_errors(ixgbe_model_nic(m0));
	raw_rx_ring(&r, pci_iova(r.io, heap), 1024);
	expect_caught(e, "DMA outside registered memory: descriptor ring");
	/* A buffer given by its virtual address (no IOVA translation). */
	e = nic_model_errors(ixgbe_model_nic(m0));
	uint64_t *d = (uint64_t *)r.ring;
	d[0] = (uint64_t)(uintptr_t)r.data;
	d[1] = 0;
	raw_rx_ring(&r, pci_iova(r.io, r.ring), 1024);
	ck_assert_uint_eq(nic_model_errors(ixgbe_model_nic(m0)), e);
	pci_write32(r.io, 0x04240, 1u << 1); /* HLREG0.RXCRCSTRP */
	pci_write32(r.io, 0x02F00, 1u << 1); /* RDRXCTL.CRCSTRIP */
	pci_write32(r.io, 0x05080, 1u << 9); /* FCTRL.UPE */
	pci_write32(r.io, 0x03000, 1);       /* RXEN */
	pci_write32(r.io, 0x01018, 1);       /* RDT: descriptor 0 is the NIC's */
	uint8_t f[64] = { 0x02 };
	ck_assert_int_eq(ixgbe_model_rx(m0, f, sizeof(f)), -1);
	expect_caught(e, "DMA outside registered memory: rx data buffer");
	free(heap);
	raw_close(&r);
}
END_TEST

START_TEST(model_catches_wrong_state)
{
	struct raw r;
	raw_open(&r);
	raw_rx_ring(&r, pci_iova(r.io, r.ring), 1024);
	uint64_t e = nic_model_errors(ixgbe_model_nic(m0));
	pci_write32(r.io, 0x01000, 0); /* RDBAL while the queue runs */
	expect_caught(e, "written while the queue is enabled");
	e = nic_model_errors(ixgbe_model_nic(m0));
	pci_write32(r.io, 0x04240, 0); /* HLREG0 without CRC strip, RDRXCTL with it */
	pci_write32(r.io, 0x02F00, 1u << 1);
	pci_write32(r.io, 0x03000, 1);
	expect_caught(e, "disagreeing");
	e = nic_model_errors(ixgbe_model_nic(m0));
	pci_write32(r.io, 0x06000, (uint32_t)pci_iova(r.io, r.data));
	pci_write32(r.io, 0x06004, (uint32_t)(pci_iova(r.io, r.data) >> 32));
	pci_write32(r.io, 0x06008, 1024);
	pci_write32(r.io, 0x06028, 1u << 25); /* TXDCTL.ENABLE before DMATXCTL.TE */
	expect_caught(e, "before DMATXCTL.TE");
	pci_write32(r.io, 0x01028, 0);
	e = nic_model_errors(ixgbe_model_nic(m0));
	pci_write32(r.io, 0x00000, 1u << 26); /* reset, then a write without waiting */
	pci_write32(r.io, 0x03000, 1);
	expect_caught(e, "while the reset is in progress");
	while (pci_read32(r.io, 0) & (1u << 26)) /* the reset ends in virtual time */
		nic_model_advance_ns(1000);
	/* Reset done, but the EEPROM auto-read and then the DMA initialisation
	 * take time: a driver that does not wait for them is caught. */
	e = nic_model_errors(ixgbe_model_nic(m0));
	pci_write32(r.io, 0x03000, 0); /* RXCTRL */
	expect_caught(e, "before the EEPROM auto-read completed");
	while (!(pci_read32(r.io, 0x10010) & (1u << 9))) /* EEC.ARD */
		nic_model_advance_ns(1000);
	e = nic_model_errors(ixgbe_model_nic(m0));
	pci_write32(r.io, 0x03000, 0);
	expect_caught(e, "before the DMA initialisation completed");
	while (!(pci_read32(r.io, 0x02F00) & (1u << 3))) /* RDRXCTL.DMAIDONE */
		nic_model_advance_ns(1000);
	e = nic_model_errors(ixgbe_model_nic(m0));
	pci_write32(r.io, 0x042A4, 0); /* LINKS is read-only */
	expect_caught(e, "read-only");
	e = nic_model_errors(ixgbe_model_nic(m0));
	(void)pci_read32(r.io, 0x00004);
	expect_caught(e, "unmodelled register 0x00004");
	raw_close(&r);
}
END_TEST

/* The real driver stays clean against all of it: the aliases decode. */
START_TEST(model_aliases)
{
	struct raw r;
	raw_open(&r);
	pci_write32(r.io, 0x0EC80, 0x12345671); /* MRQC alias */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x05818), 0x12345671);
	pci_write32(r.io, 0x02104, 1u << 25 | 4); /* SRRCTL(1) alias */
	ck_assert_uint_eq(pci_read32(r.io, 0x01054), 1u << 25 | 4);
	ck_assert_uint_eq(pci_read32(r.io, 0x0A200), pci_read32(r.io, 0x05400)); /* RAL(0) */
	ck_assert_uint_eq(nic_model_errors(ixgbe_model_nic(m0)), 0);
	raw_close(&r);
}
END_TEST

/* ---- write-back, waits, device IDs ---- */

static void m0_again(void)
{
	static const uint8_t mac0[6] = { 0x02, 0, 0, 0, 0, 0x10 };
	ixgbe_model_destroy(m0);
	m0 = ixgbe_model_create(ADDR0, mac0);
	ck_assert_ptr_nonnull(m0);
	nic_model_on_error(ixgbe_model_nic(m0), nic_model_error, NULL);
}

/* The wrong step: RXDCTL.WTHRESH 4 on rx queue 0. */
static void wthresh_4(struct device *d0)
{
	struct ixgbe_dev *xd = container_of(d0, struct ixgbe_dev, dev);
	pci_write32(xd->io, IXGBE_RXDCTL(0), pci_read32(xd->io, IXGBE_RXDCTL(0)) | 4u << IXGBE_DCTL_WTHRESH_SHIFT);
}

/* With WTHRESH above 0 a polled 82599 queue holds a lone frame until
 * WTHRESH write-backs are ready (82599 datasheet 7.1.9). */
START_TEST(rx_held_with_wthresh)
{
	nic_check_rx_held(wthresh_4, 4);
}
END_TEST

/* A device whose reset, EEPROM auto-read or DMA initialisation never
 * completes: creation fails naming the step, after the driver's 1 s bound
 * passed in virtual time. */
START_TEST(bring_up_never_completes)
{
	static const struct nic_never cases[] = {
		{ IXGBE_MODEL_STEP_RESET, "device reset (CTRL.RST, CTRL.LNK_RST) not done after 1000 ms", 1000 },
		{ IXGBE_MODEL_STEP_EEPROM, "EEPROM auto-read (EEC.ARD) not done after 1000 ms", 1000 },
		{ IXGBE_MODEL_STEP_DMA_INIT, "DMA initialisation (RDRXCTL.DMAIDONE) not done after 1000 ms", 1000 },
	};
	nic_check_never_completes("xe0", cases, ARRAY_LEN(cases));
	/* Auto-negotiation that never completes: created, link down. */
	m0_again();
	ixgbe_model_never(m0, IXGBE_MODEL_STEP_AUTONEG);
	struct device *d = nic_dev("xe0", ADDR0, NULL, 0);
	struct dev_link l;
	dev_link_get(d, &l);
	ck_assert(!l.up);
}
END_TEST

/* Delays drawn from nine seeds, the last at every upper end. */
START_TEST(bring_up_any_delays)
{
	nic_check_any_delays("xe0", 10000);
}
END_TEST

/* Every device ID the driver claims is an 82599 SFP+ port the model can
 * be, and links at 10 Gb/s with the driver's SFI bring-up. */
START_TEST(every_device_id_links)
{
	const struct pci_driver *pd = pci_driver_find("ixgbe");
	ck_assert_ptr_nonnull(pd);
	uint32_t n = 0;
	for (const struct pci_id *p = pd->ids; p->vendor; p++, n++) {
		ck_assert_msg(ixgbe_model_knows(p->device), "8086:%04x is claimed but not a device the model can be",
			      p->device);
		m0_again();
		ixgbe_model_set_device_id(m0, p->device);
		struct device *d = nic_dev("xe0", ADDR0, NULL, 0);
		struct dev_link l;
		dev_link_get(d, &l);
		ck_assert_msg(l.up && l.speed_mbps == 10000, "8086:%04x", p->device);
		dev_delete(d);
	}
	ck_assert_uint_eq(n, 5);
	ck_assert(!ixgbe_model_knows(0x10F7)); /* KX4: another link mode, not claimed */
}
END_TEST

/* ---- interrupts (82599 datasheet 7.3) ---- */

static struct ixgbe_dev *xdev(struct device *d)
{
	return container_of(d, struct ixgbe_dev, dev);
}


static uint64_t irqs0(void)
{
	return ixgbe_model_nic(m0)->irqs[0];
}




/* The driver's programming: MSI-X mode with auto-mask, rx queue 0 on
 * vector 0 (IVAR), 10 us throttle, auto-clear and auto-mask of the queue's
 * cause, the cause masked while the queue is polled; its fd is the
 * vector's eventfd. */
START_TEST(irq_programmed)
{
	struct device *d0 = nic_irq_pair();
	ck_assert_uint_eq(xdev(d0)->n_irq, 1);
	ck_assert_int_ge(ixgbe_rx_fd(d0, 0), 0);
	ck_assert_uint_eq(ixgbe_model_nic(m0)->n_vectors, 1);
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00898), (1u << 4) | (1u << 30) | (1u << 31)); /* GPIE */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00900) & 0xFF, 0x80);                      /* IVAR(0) rx 0 */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00820), 5u << 3);                          /* EITR(0): 10 us */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00810), 1);                                /* EIAC */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00890), 1);                                /* EIAM */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00880), 0);                                /* EIMS */
	/* Polling: frames come, no interrupt, the cause stays pending. */
	nic_frame_in(0);
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 1);
	ck_assert_uint_eq(irqs0(), 0);
	ck_assert_uint_eq(nic_wakeups(d0), 0);
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00800) & 1, 1); /* EICR: pending */
}
END_TEST

/* A queue in interrupt mode: armed, no wake while nothing comes; the first
 * frame gives exactly one interrupt (auto-cleared, auto-masked) and is
 * received; a second frame before the driver re-arms gives none (the
 * driver that forgot to re-arm would sleep on it), and the re-arm's look at
 * the ring finds it. */
START_TEST(irq_wakes_on_first_frame)
{
	struct device *d0 = nic_irq_pair();
	nic_frame_in(0); /* a cause left from polling: the arm clears it */
	run();
	ck_assert(!ixgbe_rx_arm(d0, 0));
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00880), 1); /* EIMS */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00800), 0); /* EICR */
	for (int k = 0; k < 100; k++)
		nic_poll();
	ck_assert_uint_eq(irqs0(), 0);
	ck_assert_uint_eq(nic_wakeups(d0), 0);

	nic_frame_in(1);
	ck_assert_uint_eq(irqs0(), 1);
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00880), 0); /* auto-masked */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00800), 0); /* auto-cleared */
	ck_assert_uint_eq(nic_wakeups(d0), 1);
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 2);
	ck_assert_uint_eq(wire.seen, 2);

	/* Not re-armed: the next frame wakes nobody. */
	for (int k = 0; k < 20; k++)
		nic_poll();
	ck_assert_int_eq(ixgbe_model_rx(m0, frames[2].bytes, frames[2].len), 0);
	for (int k = 0; k < 100; k++)
		nic_suite.tick();
	ck_assert_uint_eq(irqs0(), 1);
	ck_assert_uint_eq(nic_wakeups(d0), 0);
	ck_assert(ixgbe_rx_arm(d0, 0)); /* re-armed: the look after the unmask finds it */
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 3);
	ck_assert_uint_eq(wire.seen, 3);
	ck_assert_uint_eq(wire.mismatches, 0);
}
END_TEST

/* A masked cause wakes nobody and stays pending; unmasked, it is raised
 * once. */
START_TEST(irq_masked_then_pending)
{
	struct device *d0 = nic_irq_pair();
	struct ixgbe_dev *xd = xdev(d0);
	ck_assert(!ixgbe_rx_arm(d0, 0));
	pci_write32(xd->io, IXGBE_EIMC, 1);
	nic_frame_in(0);
	for (int k = 0; k < 50; k++)
		nic_suite.tick();
	ck_assert_uint_eq(irqs0(), 0);
	ck_assert_uint_eq(nic_wakeups(d0), 0);
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00800) & 1, 1); /* pending */
	pci_write32(xd->io, IXGBE_EIMS, 1);
	ck_assert_uint_eq(irqs0(), 1);
	for (int k = 0; k < 50; k++)
		nic_suite.tick();
	ck_assert_uint_eq(irqs0(), 1);
	ck_assert_uint_eq(nic_wakeups(d0), 1);
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 1);
	/* Software's own cause (EICS), masked: nothing until unmasked. */
	pci_write32(xd->io, IXGBE_EICS, 1);
	ck_assert_uint_eq(irqs0(), 1);
}
END_TEST

/* EITR 10 us: a frame 1 us after the one that interrupted is held until
 * the interval ends, then raised once, exactly at its end (1 us ticks). */
START_TEST(irq_throttled)
{
	struct device *d0 = nic_irq_pair();
	ck_assert(!ixgbe_rx_arm(d0, 0));
	nic_frame_in(0);
	uint64_t t0 = nic_model_now_ns();
	ck_assert_uint_eq(irqs0(), 1);
	ck_assert_uint_eq(nic_wakeups(d0), 1);
	nic_poll(); /* 1 us later: received */
	ck_assert_uint_eq(nic_rx_packets(d0), 1);
	ck_assert(!ixgbe_rx_arm(d0, 0));
	nic_frame_in(1);
	ck_assert_uint_eq(irqs0(), 1);
	while (irqs0() == 1) {
		ck_assert_uint_lt(nic_model_now_ns() - t0, 20000);
		nic_suite.tick();
	}
	ck_assert_uint_eq(nic_model_now_ns() - t0, 10000);
	ck_assert_uint_eq(irqs0(), 2);
	ck_assert_uint_eq(nic_wakeups(d0), 1);
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 2);
}
END_TEST

/* The race the re-check closes: a frame written back after the last empty
 * poll and before the unmask. The cause it set is cleared by the arm (it
 * could be stale), so only the look after the unmask sees it: without
 * that look (the wrong step: unmask only) the frame waits with no
 * interrupt to come. */
START_TEST(irq_recheck_closes_race)
{
	struct device *d0 = nic_irq_pair();
	nic_poll();
	nic_frame_in(0);
	ixgbe_irq_enable(xdev(d0), 0); /* the wrong step */
	for (int k = 0; k < 100; k++)
		nic_suite.tick();
	ck_assert_uint_eq(irqs0(), 0);
	ck_assert_uint_eq(nic_wakeups(d0), 0);
	ck_assert(ixgbe_rx_pending(xdev(d0), 0)); /* a frame no wakeup will announce */
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 1);
	/* The driver's arm: the same timing (polled empty, masked, the
	 * frame), the frame found. */
	pci_write32(xdev(d0)->io, IXGBE_EIMC, 1);
	nic_poll();
	nic_frame_in(1);
	ck_assert(ixgbe_rx_arm(d0, 0));
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 2);
}
END_TEST

/* The whole path on a worker: xe0's queue in interrupt mode on thread 1,
 * which blocks in epoll_wait (its last look armed the queue: EIMS), wakes
 * on the model's frame through the vector's eventfd (cause rx), receives
 * it and blocks again. Real time: bounded waits of 2 s. */
static struct graph_thread_info worker(void)
{
	struct graph_thread_info ti;
	ck_assert_int_eq(graph_thread_info(g, 1, &ti), 0);
	return ti;
}

/* Up to 2 s for the worker to be blocked (its safety bound wakes it once a
 * second, cause timeout, which nothing here counts). */
static bool worker_asleep(void)
{
	for (uint32_t i = 0; i < 20000 && !worker().asleep; i++)
		usleep(100);
	return worker().asleep;
}

START_TEST(irq_worker_sleeps_and_wakes)
{
	struct device *d0 = nic_irq_pair();
	ck_assert_int_eq(graph_workers_start(g, NULL, 1, err, sizeof(err)), 0);
	graph_barrier_sync(g); /* as the CLI does: the worker loops again after it */
	ck_assert_int_eq(dev_set_rx_mode(d0, -1, DEV_RX_MODE_INTERRUPT), 0);
	ck_assert_int_eq(dev_set_rx_placement(d0, 0, 1), 0);
	graph_barrier_release(g);
	ck_assert(worker_asleep());
	usleep(50000); /* nothing comes: nothing wakes it */
	ck_assert(worker_asleep());
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x00880), 1); /* EIMS: armed before blocking */
	struct graph_thread_info ti = worker();
	ck_assert_uint_eq(ti.wakeups[GRAPH_WAKE_RX], 0);
	ck_assert_uint_eq(irqs0(), 0);
	nic_frame_in(0); /* the worker is blocked: the model is the test thread's */
	for (uint32_t i = 0; i < 20000 && nic_rx_packets(d0) == 0; i++)
		usleep(100);
	ck_assert_uint_eq(nic_rx_packets(d0), 1);
	ck_assert_uint_eq(irqs0(), 1);
	ck_assert(worker_asleep());
	ck_assert_uint_eq(worker().wakeups[GRAPH_WAKE_RX], 1);
	graph_workers_stop(g);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ixgbe");
	TCase *tc = tcase_create("model");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, bring_up_link);
	tcase_add_test(tc, pcap_million_through_xconnect);
	tcase_add_test(tc, ring_wrap);
	tcase_add_test(tc, jumbo_chains);
	tcase_add_test(tc, tx_chains_mixed);
	tcase_add_test(tc, tx_offsets);
	tcase_add_test(tc, rx_chunk_chains);
	tcase_add_test(tc, rx_refill_exhaustion);
	tcase_add_test(tc, nic_drops_folded);
	tcase_add_test(tc, rss_four_queues);
	tcase_add_test(tc, tx_ring_full);
	tcase_add_test(tc, rx_low_rate_latency);
	tcase_add_test(tc, rx_held_with_wthresh);
	tcase_add_test(tc, bring_up_never_completes);
	tcase_add_test(tc, bring_up_any_delays);
	tcase_add_test(tc, every_device_id_links);
	tcase_add_test(tc, tx_async);
	tcase_add_test(tc, tx_reuse_before_dd_caught);
	tcase_add_test(tc, model_catches_unaligned_ring);
	tcase_add_test(tc, model_catches_tail_past_ring);
	tcase_add_test(tc, model_catches_dma_outside);
	tcase_add_test(tc, model_catches_wrong_state);
	tcase_add_test(tc, model_aliases);
	tcase_add_test(tc, irq_programmed);
	tcase_add_test(tc, irq_wakes_on_first_frame);
	tcase_add_test(tc, irq_masked_then_pending);
	tcase_add_test(tc, irq_throttled);
	tcase_add_test(tc, irq_recheck_closes_race);
	suite_add_tcase(s, tc);
	/* A worker thread, real time. */
	tc = tcase_create("worker");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, irq_worker_sleeps_and_wakes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
