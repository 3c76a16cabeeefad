/* The i40e driver against the XL710 model (tests/models/i40e_model.c):
 * bring-up to link up with link events; admin-queue round trips, error
 * completions and a firmware that stops answering; the queue-enable waits;
 * a 1,000-frame pcap replayed 1,000 times through model rx -> i40e-input ->
 * l2-xconnect -> interface-output -> model tx, byte-identical and in order;
 * ring wrap; jumbo frames as chains; rx refill under buffer exhaustion;
 * NIC drops folded into the
 * counters; RSS over 4 queues exactly as the LUT and the Toeplitz hash say;
 * tx ring full; and the model catching each class of misprogramming. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "drivers/device.h"
#include "drivers/i40e/i40e_private.h"
#include "drivers/pci/pci.h"
#include "graph/buffer.h"
#include "graph/graph.h"
#include "base/toeplitz.h"
#include "tests/buffer_check.h"
#include "tests/check_run.h"
#include "tests/models/i40e_model.h"
#include "tests/models/nic_model.h"
#include "tests/nic/nic_harness.h"

#define ADDR0 "0000:05:00.0"
#define ADDR1 "0000:05:00.1"

static struct i40e_model *m0, *m1;

static int wire_rx(const uint8_t *frame, uint32_t len)
{
	return i40e_model_rx(m0, frame, len);
}

static uint32_t wire_rx_room(void)
{
	return i40e_model_rx_room(m0, 0);
}

static void wire_tx_hold(bool hold)
{
	i40e_model_tx_hold(m1, hold);
}

static uint32_t tick(void)
{
	return i40e_model_tick(m0) + i40e_model_tick(m1);
}

static struct pci_txq *txq(struct device *d, uint16_t q)
{
	return &container_of(d, struct i40e_dev, dev)->txq[q];
}

static void m0_again(void);
static void model_again(uint32_t never)
{
	m0_again();
	i40e_model_never(m0, never);
}

static struct nic_model *model(int port)
{
	return i40e_model_nic(port ? m1 : m0);
}

const struct nic_suite nic_suite = {
	.driver = "i40e",
	.name = { "xl0", "xl1" },
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
	static const uint8_t mac0[6] = { 0x02, 0, 0, 0, 0, 0x20 }, mac1[6] = { 0x02, 0, 0, 0, 0, 0x21 };
	m0 = i40e_model_create(ADDR0, mac0);
	m1 = i40e_model_create(ADDR1, mac1);
	ck_assert(m0 && m1);
	nic_model_on_error(i40e_model_nic(m0), nic_model_error, NULL);
	nic_model_on_error(i40e_model_nic(m1), nic_model_error, NULL);
	nic_model_on_tx(i40e_model_nic(m1), nic_wire_tx, NULL);
	pci_io_provider_set(nic_model_open, NULL);
}

static void teardown(void)
{
	nic_teardown_devices();
	if (!expect_errors) {
		ck_assert_msg(nic_model_errors(i40e_model_nic(m0)) == 0, "%s", nic_model_last_error(i40e_model_nic(m0)));
		ck_assert_msg(nic_model_errors(i40e_model_nic(m1)) == 0, "%s", nic_model_last_error(i40e_model_nic(m1)));
	}
	pci_io_provider_set(NULL, NULL);
	i40e_model_destroy(m0);
	i40e_model_destroy(m1);
	nic_teardown_buffers();
}

static struct i40e_dev *priv(struct device *d)
{
	return container_of(d, struct i40e_dev, dev);
}

/* ---- bring-up ---- */

START_TEST(bring_up_link)
{
	struct device *d = nic_dev("xl0", ADDR0, NULL, 0);
	struct i40e_model_stats st;
	i40e_model_stats(m0, &st);
	ck_assert_uint_eq(st.resets, 1);
	ck_assert(st.promisc_unicast && st.promisc_multicast && st.promisc_broadcast && st.lse);
	ck_assert_uint_eq(st.max_frame, 1518);
	ck_assert_uint_eq(st.vsi_queues, 1);
	static const uint8_t mac0[6] = { 0x02, 0, 0, 0, 0, 0x20 };
	ck_assert_mem_eq(d->mac, mac0, 6); /* from the MAC address read */
	struct i40e_dev *id = priv(d);
	ck_assert_uint_eq(id->api_major, I40E_MODEL_API_MAJOR);
	ck_assert_uint_eq(id->fw_minor, I40E_MODEL_FW_MINOR);
	ck_assert_uint_eq(id->base_queue, I40E_MODEL_BASE_QUEUE);
	ck_assert_uint_eq(id->vsi_seid, I40E_MODEL_VSI_SEID);
	ck_assert_uint_eq(id->qs_handle, I40E_MODEL_QS_HANDLE);
	ck_assert_uint_eq(i40e_model_peek(m0, 0xC6500), 1); /* GLHMC_LANRXCNT(0) */
	ck_assert_uint_eq(i40e_model_peek(m0, 0xC0100) >> 2 & 0x3FF, 512); /* PFHMC_SDDATALOW: 512 pages */
	ck_assert_uint_eq(id->hmc_size, 2u << 20);                         /* all 2 MB of them backed */

	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	struct i40e_model_queue q;
	i40e_model_queue(m0, true, 0, &q);
	ck_assert(q.enabled);
	ck_assert_uint_eq(q.qlen, 1024);
	ck_assert_uint_eq(q.tail, 1023); /* the ring starts full */
	ck_assert_uint_eq(q.rxmax, 1518);
	ck_assert_uint_eq(q.dbuff, buffer_main.data_size / 128 * 128);
	i40e_model_queue(m0, false, 0, &q);
	ck_assert(q.enabled);
	ck_assert_uint_eq(q.rdylist, I40E_MODEL_QS_HANDLE);
	ck_assert_uint_eq(i40e_model_peek(m0, 0x120000) & 5, 5); /* QRX_ENA(0) REQ|STAT */
	ck_assert_uint_eq(buffer_n_in_use(), 1024);
	buffer_check_held("device", "xl0 rx 0", 1024); /* the ring armed, named by `show buffers` */

	/* The link: down in the answer to get link status (set PHY config
	 * restarted it), up in the event firmware posted once it trained. */
	struct dev_link l;
	dev_link_get(d, &l);
	ck_assert(l.up);
	ck_assert_uint_eq(l.speed_mbps, 40000);
	i40e_model_stats(m0, &st);
	ck_assert_uint_eq(st.arq_events, 1);
	ck_assert_uint_eq(id->n_link_events, 1);
	ck_assert_uint_eq(st.phy_abilities_asked, 1);
	ck_assert_uint_eq(st.phy_config_set, 1);
	ck_assert_uint_eq(st.phy_speeds, 0x10);                 /* 40G, what the abilities offered */
	ck_assert_uint_eq(st.phy_int_mask & 0x0002, 0);        /* link up/down events not masked */
	/* Link down arrives as a firmware event on the ARQ, and up again once
	 * the link trained after the cable went back in. */
	i40e_model_set_cable(m0, false);
	dev_link_get(d, &l);
	ck_assert(!l.up);
	i40e_model_set_cable(m0, true);
	dev_link_get(d, &l);
	ck_assert(!l.up); /* training */
	nic_model_advance_ns(NIC_LINK_WAIT_NS);
	dev_link_get(d, &l);
	ck_assert(l.up);
	i40e_model_stats(m0, &st);
	ck_assert_uint_eq(st.arq_events, 3);
	ck_assert_uint_eq(id->n_link_events, 3);

	const struct pci_driver *pd = pci_driver_find("i40e");
	ck_assert_ptr_nonnull(pd);
	char buf[2048];
	ck_assert_int_gt(pd->format_hw(d, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "link up 40000 Mb/s") && strstr(buf, "mac 02:00:00:00:00:20") &&
			      strstr(buf, "fw 9.20 api 1.15") && strstr(buf, "QRX_TAIL 1023 ENA 0x5"),
		      "%s", buf);
	const struct pci_id *pid;
	ck_assert_ptr_eq(pci_driver_match(0x8086, 0x1572, &pid), pd);
	ck_assert_ptr_eq(pci_driver_match(0x8086, 0x1583, &pid), pd);

	ck_assert_int_eq(dev_set_admin_up(d, false), 0);
	i40e_model_queue(m0, true, 0, &q);
	ck_assert(!q.enabled);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	i40e_model_queue(m0, true, 0, &q);
	ck_assert(q.enabled);
}
END_TEST

/* ---- admin queue ---- */

START_TEST(aq_round_trip)
{
	struct device *d = nic_dev("xl0", ADDR0, NULL, 0);
	struct i40e_dev *id = priv(d);
	struct i40e_model_stats st;
	i40e_model_stats(m0, &st);
	uint64_t before = st.aq_commands;
	/* direct */
	struct i40e_aq_desc desc = { .opcode = I40E_AQC_GET_VERSION };
	ck_assert_int_eq(i40e_aq_cmd(id, &desc, NULL, 0, false), 0);
	ck_assert_uint_eq(desc.flags & (I40E_AQ_FLAG_DD | I40E_AQ_FLAG_CMP), I40E_AQ_FLAG_DD | I40E_AQ_FLAG_CMP);
	uint16_t v[4];
	memcpy(v, desc.params.raw + 8, sizeof(v));
	ck_assert_uint_eq(v[0], I40E_MODEL_FW_MAJOR);
	ck_assert_uint_eq(v[3], I40E_MODEL_API_MINOR);
	/* indirect, from firmware */
	uint8_t buf[I40E_AQ_BUF_SIZE];
	memset(&desc, 0, sizeof(desc));
	desc.opcode = I40E_AQC_MAC_ADDRESS_READ;
	ck_assert_int_eq(i40e_aq_cmd(id, &desc, buf, 24, false), 0);
	ck_assert_mem_eq(buf, d->mac, 6);
	/* indirect, to firmware */
	memset(buf, 0, 128);
	buf[0] = 1u << 6;
	buf[63] = 2u << 1; /* TC0: 4 queues */
	memset(&desc, 0, sizeof(desc));
	desc.opcode = I40E_AQC_UPDATE_VSI;
	desc.params.raw[0] = (uint8_t)I40E_MODEL_VSI_SEID, desc.params.raw[1] = I40E_MODEL_VSI_SEID >> 8;
	ck_assert_int_eq(i40e_aq_cmd(id, &desc, buf, 128, true), 0);
	i40e_model_stats(m0, &st);
	ck_assert_uint_eq(st.vsi_queues, 4);
	ck_assert_uint_eq(st.aq_commands, before + 3);
	ck_assert_uint_eq(st.last_opcode, I40E_AQC_UPDATE_VSI);
	/* An opcode the firmware does not know: an error completion, ENOSYS. */
	memset(&desc, 0, sizeof(desc));
	desc.opcode = 0x0A05;
	ck_assert_int_eq(i40e_aq_cmd(id, &desc, NULL, 0, false), -EIO);
	ck_assert_uint_eq(id->aq_last_rc, I40E_AQ_RC_ENOSYS);
	/* The ring wraps: 40 more commands through 32 slots. */
	for (int i = 0; i < 40; i++) {
		memset(&desc, 0, sizeof(desc));
		desc.opcode = I40E_AQC_GET_VERSION;
		ck_assert_int_eq(i40e_aq_cmd(id, &desc, NULL, 0, false), 0);
	}
}
END_TEST

START_TEST(aq_error_completion)
{
	/* EBUSY on get version: retried, and bring-up goes on. */
	i40e_model_aq_inject_error(m0, I40E_AQC_GET_VERSION, I40E_AQ_RC_EBUSY, 2);
	struct device *d = nic_dev("xl0", ADDR0, NULL, 0);
	struct i40e_model_stats st;
	i40e_model_stats(m0, &st);
	ck_assert_uint_eq(st.aq_error_completions, 2);
	ck_assert_uint_eq(priv(d)->api_major, I40E_MODEL_API_MAJOR);
	/* An error on a command the driver cannot do without: a clear failure. */
	i40e_model_aq_inject_error(m1, I40E_AQC_UPDATE_VSI, I40E_AQ_RC_EINVAL, 1);
	const char *w[] = { "dev", ADDR1 };
	ck_assert_ptr_null(dev_create("xl1", "i40e", w, 2, err, sizeof(err)));
	ck_assert_msg(strstr(err, "update VSI parameters failed: firmware returned EINVAL (14)"), "%s", err);
	/* The port is free again and comes up once the firmware agrees. */
	ck_assert_ptr_null(pci_claimed_by(ADDR1));
	struct device *d1 = nic_dev("xl1", ADDR1, NULL, 0);
	ck_assert_int_eq(dev_set_admin_up(d1, true), 0);
	/* A command failing at run time leaves the queue usable. */
	struct i40e_dev *id = priv(d);
	i40e_model_aq_inject_error(m0, I40E_AQC_GET_LINK_STATUS, I40E_AQ_RC_EIO, 1);
	struct i40e_aq_desc desc = { .opcode = I40E_AQC_GET_LINK_STATUS };
	ck_assert_int_eq(i40e_aq_cmd(id, &desc, NULL, 0, false), -EIO);
	ck_assert(desc.flags & I40E_AQ_FLAG_ERR);
	ck_assert_uint_eq(id->aq_last_rc, I40E_AQ_RC_EIO);
	memset(&desc, 0, sizeof(desc));
	desc.opcode = I40E_AQC_GET_LINK_STATUS;
	ck_assert_int_eq(i40e_aq_cmd(id, &desc, NULL, 0, false), 0);
	ck_assert_uint_eq(desc.params.raw[4] & 1, 1);
}
END_TEST

START_TEST(aq_timeout)
{
	struct device *d = nic_dev("xl0", ADDR0, NULL, 0);
	struct i40e_dev *id = priv(d);
	i40e_model_aq_stall(m0, true);
	struct i40e_aq_desc desc = { .opcode = I40E_AQC_GET_VERSION };
	ck_assert_int_eq(i40e_aq_cmd(id, &desc, NULL, 0, false), -ETIMEDOUT);
	/* Firmware catches up; the next command completes in order. */
	i40e_model_aq_stall(m0, false);
	memset(&desc, 0, sizeof(desc));
	desc.opcode = I40E_AQC_GET_VERSION;
	ck_assert_int_eq(i40e_aq_cmd(id, &desc, NULL, 0, false), 0);
	/* A stalled firmware at create time: a clear error, nothing leaks. */
	i40e_model_aq_stall(m1, true);
	const char *w[] = { "dev", ADDR1 };
	ck_assert_ptr_null(dev_create("xl1", "i40e", w, 2, err, sizeof(err)));
	ck_assert_msg(strstr(err, "get version") && strstr(err, "timed out"), "%s", err);
	i40e_model_aq_stall(m1, false);
}
END_TEST

/* ---- queue enable waits ---- */

START_TEST(queue_enable_waits)
{
	i40e_model_set_ena_delay(m0, 5);
	const char *w[] = { "rx-queues", "2", "tx-queues", "2" };
	struct device *d = nic_dev("xl0", ADDR0, w, 4);
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	struct i40e_model_stats st;
	i40e_model_stats(m0, &st);
	/* Four queues, each read until QENA_STAT followed (5 reads each). */
	ck_assert_uint_ge(st.ena_waits, 4 * 5);
	for (uint16_t q = 0; q < 2; q++) {
		ck_assert_uint_eq(i40e_model_peek(m0, 0x120000 + 4 * q) & 5, 5);
		ck_assert_uint_eq(i40e_model_peek(m0, 0x100000 + 4 * q) & 5, 5);
	}
	uint64_t waits = st.ena_waits;
	ck_assert_int_eq(dev_set_admin_up(d, false), 0);
	i40e_model_stats(m0, &st);
	ck_assert_uint_ge(st.ena_waits, waits + 4 * 5); /* disable waits too */
	for (uint16_t q = 0; q < 2; q++)
		ck_assert_uint_eq(i40e_model_peek(m0, 0x120000 + 4 * q) & 5, 0);
	/* A large delay is still waited out (polls in 1 ms steps). */
	i40e_model_set_ena_delay(m0, 40);
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	ck_assert_uint_eq(i40e_model_peek(m0, 0x100004) & 5, 5);
}
END_TEST

/* ---- the million ---- */

START_TEST(pcap_million_through_xconnect)
{
	struct device *d0, *d1;
	nic_pcap_replay(&d0, &d1);
	uint64_t total = (uint64_t)REPLAYS * N_FRAMES;
	struct i40e_model_stats st;
	i40e_model_stats(m1, &st);
	ck_assert_uint_eq(st.tx_no_crc, 0);
	ck_assert_uint_eq(st.tx_frames, total);
	/* The port counters agree. */
	ck_assert_uint_eq(i40e_model_peek(m0, 0x3005A0), total); /* GLPRT_UPRCL */
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
	struct i40e_model_stats s0, s1;
	i40e_model_stats(m0, &s0);
	i40e_model_stats(m1, &s1);
	ck_assert_uint_eq(s0.rx_wraps[0], 3000 / 64);
	ck_assert_uint_eq(s1.tx_wraps[0], 3000 / 64);
	struct i40e_model_queue q;
	i40e_model_queue(m0, true, 0, &q);
	ck_assert_uint_eq(q.head, 3000 % 64);
	ck_assert_uint_eq(q.tail, (3000 + 63) % 64);
	i40e_model_queue(m1, false, 0, &q);
	ck_assert_uint_eq(q.head, q.tail);
	ck_assert_uint_eq(q.head, 3000 % 64);
}
END_TEST

/* ---- jumbo frames, oversize ---- */

START_TEST(jumbo_chains)
{
	const char *w[] = { "mtu", "9000" };
	struct device *d0, *d1;
	pair(w, 2, w, 2, &d0, &d1);
	struct i40e_model_stats st;
	i40e_model_stats(m0, &st);
	ck_assert_uint_eq(st.max_frame, 9018); /* set MAC config */
	struct i40e_model_queue q;
	i40e_model_queue(m0, true, 0, &q);
	ck_assert_uint_eq(q.rxmax, 9018);
	ck_assert_uint_eq(d0->mtu, 9000);
	for (uint32_t i = 0; i < 40; i++)
		make_frame(&frames[i], i, i % 2 ? 60 : 2049, i % 2 ? 1514 : 9014);
	wire_expect(frames, 40);
	inject(frames, 40);
	ck_assert_uint_eq(wire.seen, 40);
	ck_assert_uint_eq(wire.mismatches, 0);
	struct dev_counters c0, c1;
	dev_counters_get(d0, &c0);
	dev_counters_get(d1, &c1);
	ck_assert_uint_eq(c0.rx_packets, 40);
	ck_assert_uint_eq(c1.tx_packets, 40);
	ck_assert_uint_eq(c0.rx_dropped + c0.rx_errors + c1.tx_dropped, 0);
	i40e_model_queue(m0, true, 0, &q);
	uint32_t n_desc = 0;
	for (uint32_t i = 0; i < 40; i++)
		n_desc += (frames[i].len + q.dbuff - 1) / q.dbuff;
	ck_assert_uint_eq(q.head, n_desc % 1024); /* several descriptors a jumbo frame */
	ck_assert_uint_gt(n_desc, 40);

	/* Without the mtu a 9000-byte frame is the MAC's oversize error. */
	dev_delete(d0);
	dev_delete(d1);
	pair(NULL, 0, NULL, 0, &d0, &d1);
	ck_assert_int_eq(i40e_model_rx(m0, frames[0].bytes, 9000), -1);
	dev_counters_get(d0, &c0);
	ck_assert_uint_eq(c0.rx_errors, 1); /* ROC */
	ck_assert_uint_eq(c0.rx_packets, 0);
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
		ck_assert_int_eq(i40e_model_rx(m0, frames[i].bytes, frames[i].len), 0);
	run();
	struct dev_counters c0, c1;
	dev_counters_get(d0, &c0);
	ck_assert_uint_eq(c0.rx_dropped, 100);
	ck_assert_uint_eq(c0.rx_packets, 0);
	ck_assert_uint_eq(wire.seen, 0);
	ck_assert_uint_eq(i40e_model_rx_room(m0, 0), 1023); /* re-armed with their own buffers */

	buffer_free(hoard + n_hoard - 10, 10);
	n_hoard -= 10;
	for (uint32_t i = 0; i < 50; i++)
		ck_assert_int_eq(i40e_model_rx(m0, frames[i].bytes, frames[i].len), 0);
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

/* The NIC's own drops (ring full: GLPRT_RDPC) reach RX-dropped. */
START_TEST(nic_drops_folded)
{
	const char *w[] = { "rx-desc", "64" };
	struct device *d0, *d1;
	pair(w, 2, NULL, 0, &d0, &d1);
	for (uint32_t i = 0; i < 100; i++)
		make_frame(&frames[i], i, 60, 200);
	uint32_t landed = 0;
	for (uint32_t i = 0; i < 100; i++)
		landed += i40e_model_rx(m0, frames[i].bytes, frames[i].len) == 0;
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
}
END_TEST

/* `show hardware`'s driver lines (ops->format_hw) say what the model holds:
 * tails, tx head, enable state, the port's drops and octets. */
START_TEST(format_hw_matches_model)
{
	const char *w[] = { "rx-desc", "64", "tx-desc", "64" };
	struct device *d0, *d1;
	pair(w, 4, w, 4, &d0, &d1);
	for (uint32_t i = 0; i < 100; i++)
		make_frame(&frames[i], i, 60, 200);
	uint64_t octets = 0;
	for (uint32_t i = 0; i < 100; i++)
		if (i40e_model_rx(m0, frames[i].bytes, frames[i].len) == 0)
			octets += frames[i].len + 4;
	wire_expect(frames, 63);
	run();
	i40e_model_tx_hold(m1, true);
	ck_assert_int_eq(i40e_model_rx(m0, frames[0].bytes, frames[0].len), 0);
	octets += frames[0].len + 4;
	run();

	struct i40e_model_queue rq, tq;
	i40e_model_queue(m0, true, 0, &rq);
	i40e_model_queue(m1, false, 0, &tq);
	ck_assert_uint_ne(tq.head, tq.tail); /* one frame held */
	char buf[2048], want[256];
	ck_assert_ptr_nonnull(d0->ops->format_hw);
	ck_assert_int_gt(d0->ops->format_hw(d0, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "  rx queue 0: QRX_TAIL %u ENA 0x5 next %u\n", rq.tail, rq.head);
	ck_assert_msg(strstr(buf, want), "want '%s' in:\n%s", want, buf);
	snprintf(want, sizeof(want), "GORC %" PRIu64 " UPRC 64 GOTC 0 UPTC 0 RDPC 37 CRCERRS 0", octets);
	ck_assert_msg(strstr(buf, want), "want '%s' in:\n%s", want, buf);
	ck_assert_msg(strstr(buf, "link up 40000 Mb/s") && strstr(buf, "running"), "%s", buf);
	ck_assert_msg(strstr(buf, "\n  rings: 64 rx, 64 tx descriptors per queue\n"), "%s", buf); /* rx-desc, tx-desc 64 */

	ck_assert_int_gt(d1->ops->format_hw(d1, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "  tx queue 0: QTX_HEAD %u QTX_TAIL %u ENA 0x5 clean ", tq.head, tq.tail);
	ck_assert_msg(strstr(buf, want), "want '%s' in:\n%s", want, buf);
	ck_assert_msg(strstr(buf, "UPTC 63 RDPC 0"), "%s", buf);
	buffer_check_held("device", "xl1 tx 0", 1); /* the held frame; the 63 before it reclaimed */
	i40e_model_tx_hold(m1, false);
	ck_assert_uint_eq(wire.seen, 64);
	ck_assert_uint_eq(wire.mismatches, 0);
}
END_TEST

/* ARP through an i40e port: a broadcast request arrives only because the
 * driver set the VSI's broadcast flag at bring-up (the model drops broadcast
 * otherwise, as the X710's switch does), with promiscuous mode off; clearing
 * the flag (as a driver that never sets it leaves it) loses the next one. */
START_TEST(arp_broadcast_received)
{
	const char *w[] = { "promisc", "off" };
	struct device *d0, *d1;
	pair(w, 2, w, 2, &d0, &d1);
	/* who-has 192.0.2.1 tell 192.0.2.2, padded to the minimum frame */
	static const uint8_t arp[42] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x99, 0x08, 0x06,
					 0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01, 0x02, 0, 0, 0, 0, 0x99,
					 192, 0, 2, 2, 0, 0, 0, 0, 0, 0, 192, 0, 2, 1 };
	memset(&frames[0], 0, sizeof(frames[0]));
	memcpy(frames[0].bytes, arp, sizeof(arp));
	frames[0].len = 60;
	wire_expect(frames, 1);
	inject(frames, 1);
	ck_assert_uint_eq(wire.seen, 1);
	ck_assert_uint_eq(wire.mismatches, 0);
	ck_assert_uint_eq(i40e_model_peek(m0, 0x3005E0), 1); /* GLPRT_BPRCL */
	struct dev_counters c0;
	dev_counters_get(d0, &c0);
	ck_assert_uint_eq(c0.rx_packets, 1);
	struct i40e_model_stats st;
	i40e_model_stats(m0, &st);
	ck_assert(st.promisc_broadcast && !st.promisc_unicast && !st.promisc_multicast);

	/* Without the flag the switch drops it. */
	struct i40e_aq_desc desc = { .opcode = I40E_AQC_SET_VSI_PROMISC };
	uint16_t p[3] = { 0, I40E_PROMISC_BROADCAST, I40E_MODEL_VSI_SEID };
	memcpy(desc.params.raw, p, sizeof(p));
	ck_assert_int_eq(i40e_aq_cmd(priv(d0), &desc, NULL, 0, false), 0);
	i40e_model_stats(m0, &st);
	uint64_t filtered = st.rx_filtered;
	ck_assert_int_eq(i40e_model_rx(m0, frames[0].bytes, frames[0].len), -1);
	i40e_model_stats(m0, &st);
	ck_assert_uint_eq(st.rx_filtered, filtered + 1);
	run();
	ck_assert_uint_eq(wire.seen, 1);
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

/* The port counters wrap (48-bit octets and packets, 32-bit drops); the
 * driver's totals do not. Two long uptimes in two steps, each less than the
 * counter's width, together more: "now minus bring-up, modulo the width"
 * would lose a whole wrap. */
START_TEST(stats_survive_wrap)
{
	i40e_model_count(m0, 0x300000, (1ull << 48) - 100); /* GLPRT_GORCL/H near their wrap */
	i40e_model_count(m0, 0x300600, 0xFFFFFFFFull - 4);   /* GLPRT_RDPC */
	struct device *d = nic_dev("xl0", ADDR0, NULL, 0);
	struct dev_counters c;
	dev_counters_get(d, &c);
	ck_assert_uint_eq(c.rx_dropped, 0);
	i40e_model_count(m0, 0x300000, 1ull << 47);
	i40e_model_count(m0, 0x300600, 1ull << 31);
	dev_counters_get(d, &c);
	ck_assert_uint_eq(c.rx_dropped, 1ull << 31);
	i40e_model_count(m0, 0x300000, (1ull << 47) + 50);
	i40e_model_count(m0, 0x300600, (1ull << 31) + 7);
	dev_counters_get(d, &c);
	ck_assert_uint_eq(c.rx_dropped, (1ull << 32) + 7);
	char buf[2048], want[64];
	ck_assert_int_gt(d->ops->format_hw(d, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "GORC %llu UPRC 0", (1ull << 48) + 50);
	ck_assert_msg(strstr(buf, want), "want '%s' in:\n%s", want, buf);
}
END_TEST

/* An X722 is driven like an XL710 with one rx queue; asking it for RSS
 * (which goes through admin commands on the X722) is refused, nothing
 * touched. */
START_TEST(x722_one_queue)
{
	i40e_model_set_device_id(m0, 0x37D0);
	i40e_model_set_device_id(m1, 0x37D0);
	const char *w4[] = { "dev", ADDR0, "rx-queues", "4" };
	ck_assert_ptr_null(dev_create("xl0", "i40e", w4, 4, err, sizeof(err)));
	ck_assert_msg(strstr(err, "0000:05:00.0: X722 (8086:37d0)") && strstr(err, "configure rx-queues 1"), "%s",
		      err);
	struct i40e_model_stats st;
	i40e_model_stats(m0, &st);
	ck_assert_uint_eq(st.resets, 0);
	ck_assert_uint_eq(st.aq_commands, 0);
	ck_assert_ptr_null(pci_claimed_by(ADDR0));

	struct device *d0, *d1;
	pair(NULL, 0, NULL, 0, &d0, &d1);
	for (uint32_t i = 0; i < 300; i++)
		make_frame(&frames[i], i, 60, 1514);
	wire_expect(frames, 300);
	inject(frames, 300);
	ck_assert_uint_eq(wire.seen, 300);
	ck_assert_uint_eq(wire.mismatches, 0);
	char buf[2048];
	ck_assert_int_gt(d0->ops->format_hw(d0, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "i40e 0000:05:00.0 8086:37d0"), "%s", buf);
	const struct pci_id *id;
	ck_assert_ptr_eq(pci_driver_match(0x8086, 0x37D0, &id), pci_driver_find("i40e"));
	ck_assert_str_eq(id->name, "X722 SFP");
}
END_TEST

/* ---- RSS ---- */

START_TEST(rss_four_queues)
{
	const char *w[] = { "rx-queues", "4" };
	struct device *d = nic_dev("xl0", ADDR0, w, 2);
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	ck_assert_uint_eq(i40e_model_peek(m0, 0x269BA4) & 2, 2);          /* GLQF_CTL.HTOEP */
	ck_assert_uint_eq(i40e_model_peek(m0, 0x1C0AC0) >> 16 & 1, 1);    /* 512-entry LUT */
	ck_assert_uint_eq(i40e_model_peek(m0, 0x244800), 0xda565a6d);     /* HKEY(0): key bytes 0..3 */
	ck_assert_uint_eq(i40e_model_peek(m0, 0x240080), 0x03020100);     /* HLUT(1): entries 4..7 */

	nic_check_rss(d, 512);
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

/* ---- the model catches misprogramming ---- */

/* The test as a bad driver: the model's io, memory mapped for DMA. */
struct raw {
	struct pci_io *io;
	uint8_t *ring;
	uint8_t *hmc;
};

static void raw_open(struct raw *r)
{
	expect_errors = true;
	nic_model_advance_ns(5000000000ull); /* past the global reset, the NVM load and the link */
	r->io = pci_io_open(ADDR0, "i40e", err, sizeof(err));
	ck_assert_msg(r->io, "%s", err);
	r->ring = pci_dma_alloc(r->io, 4096);
	r->hmc = pci_dma_alloc(r->io, I40E_HMC_DIRECT_SIZE);
	ck_assert(r->ring && r->hmc);
}

static void raw_close(struct raw *r)
{
	pci_dma_free(r->io, r->ring, 4096);
	pci_dma_free(r->io, r->hmc, I40E_HMC_DIRECT_SIZE);
	pci_io_close(r->io);
}

static void expect_caught(uint64_t before, const char *what)
{
	ck_assert_msg(nic_model_errors(i40e_model_nic(m0)) > before, "not caught: %s", what);
	ck_assert_msg(strstr(nic_model_last_error(i40e_model_nic(m0)), what), "%s", nic_model_last_error(i40e_model_nic(m0)));
}

static void raw_atq(struct raw *r, uint64_t iova, uint32_t entries)
{
	pci_write32(r->io, 0x80200, entries ? entries | 1u << 31 : 0); /* ATQLEN */
	pci_write32(r->io, 0x80000, (uint32_t)iova);
	pci_write32(r->io, 0x80100, (uint32_t)(iova >> 32));
}

/* HMC segment 0 on r->hmc, one RX and one TX context; returns the RX one. */
static uint8_t *raw_hmc(struct raw *r)
{
	uint64_t pa = pci_iova(r->io, r->hmc);
	pci_write32(r->io, 0xC6300, 1);       /* LANTXCNT(0) */
	pci_write32(r->io, 0xC6400, 1);       /* LANRXBASE(0): 512 */
	pci_write32(r->io, 0xC6500, 1);       /* LANRXCNT(0) */
	pci_write32(r->io, 0xC0200, (uint32_t)(pa >> 32));
	pci_write32(r->io, 0xC0100, ((uint32_t)pa & 0xFFFFF000u) | 512u << 2 | 3);
	pci_write32(r->io, 0xC0000, 1u << 31);
	return r->hmc + 512;
}

/* A valid RX context for a 64-descriptor ring on r->ring. */
static void raw_rx_ctx(struct raw *r, uint8_t *ctx)
{
	memset(ctx, 0, 32);
	i40e_ctx_set(ctx, I40E_RXCTX_BASE, pci_iova(r->io, r->ring) >> 7);
	i40e_ctx_set(ctx, I40E_RXCTX_QLEN, 64);
	i40e_ctx_set(ctx, I40E_RXCTX_DBUFF, 2048 >> 7);
	i40e_ctx_set(ctx, I40E_RXCTX_DSIZE, 1);
	i40e_ctx_set(ctx, I40E_RXCTX_CRCSTRIP, 1);
	i40e_ctx_set(ctx, I40E_RXCTX_RXMAX, 1518);
	i40e_ctx_set(ctx, I40E_RXCTX_PREFENA, 1);
}

static void raw_rx_enable(struct raw *r)
{
	pci_write32(r->io, 0x120000, 1);
	while (!(pci_read32(r->io, 0x120000) & 4))
		;
}

START_TEST(model_catches_unaligned_ring)
{
	struct raw r;
	raw_open(&r);
	uint64_t e = nic_model_errors(i40e_model_nic(m0));
	raw_atq(&r, pci_iova(r.io, r.ring + 32), 32);
	pci_write32(r.io, 0x80400, 1); /* ATQT */
	expect_caught(e, "not 64-byte aligned");
	ck_assert_uint_eq(i40e_model_peek(m0, 0x80300), 0); /* nothing ran */
	raw_atq(&r, 0, 0);
	raw_close(&r);
}
END_TEST

START_TEST(model_catches_tail_past_ring)
{
	struct raw r;
	raw_open(&r);
	uint64_t e = nic_model_errors(i40e_model_nic(m0));
	raw_atq(&r, pci_iova(r.io, r.ring), 32);
	pci_write32(r.io, 0x80400, 32);
	expect_caught(e, "tail 32 past the ring of 32");
	raw_atq(&r, 0, 0);
	uint8_t *ctx = raw_hmc(&r);
	raw_rx_ctx(&r, ctx);
	pci_write32(r.io, 0x128000, 63); /* QRX_TAIL */
	raw_rx_enable(&r);
	e = nic_model_errors(i40e_model_nic(m0));
	ck_assert_uint_eq(e, nic_model_errors(i40e_model_nic(m0)));
	pci_write32(r.io, 0x128000, 64);
	expect_caught(e, "tail 64 past the ring of 64");
	pci_write32(r.io, 0x120000, 0);
	while (pci_read32(r.io, 0x120000) & 4)
		;
	raw_close(&r);
}
END_TEST

START_TEST(model_catches_dma_outside)
{
	struct raw r;
	raw_open(&r);
	uint8_t *heap = aligned_alloc(4096, 4096);
	uint64_t e = nic_model_errors(i40e_model_nic(m0));
	raw_atq(&r, pci_iova(r.io, heap), 32); /* never mapped */
	pci_write32(r.io, 0x80400, 1);
	expect_caught(e, "DMA outside registered memory: admin send queue");
	raw_atq(&r, 0, 0);
	/* An rx buffer given by its virtual address. */
	uint8_t *ctx = raw_hmc(&r);
	raw_rx_ctx(&r, ctx);
	uint64_t *d = (uint64_t *)r.ring;
	d[0] = (uint64_t)(uintptr_t)r.hmc;
	d[1] = 0;
	pci_write32(r.io, 0x128000, 1);
	raw_rx_enable(&r);
	/* promiscuous: the test has no admin queue, so address the port */
	uint8_t f[64] = { 0x02, 0, 0, 0, 0, 0x20, 0x02 };
	e = nic_model_errors(i40e_model_nic(m0));
	ck_assert_int_eq(i40e_model_rx(m0, f, sizeof(f)), -1);
	expect_caught(e, "DMA outside registered memory: rx data buffer");
	pci_write32(r.io, 0x120000, 0);
	while (pci_read32(r.io, 0x120000) & 4)
		;
	free(heap);
	raw_close(&r);
}
END_TEST

START_TEST(model_catches_wrong_state)
{
	struct raw r;
	raw_open(&r);
	uint64_t e = nic_model_errors(i40e_model_nic(m0));
	pci_write32(r.io, 0x80400, 1); /* ATQT with the ATQ disabled */
	expect_caught(e, "while the queue is disabled");
	e = nic_model_errors(i40e_model_nic(m0));
	pci_write32(r.io, 0x92400, 1); /* PF reset, then a write without waiting */
	pci_write32(r.io, 0x38800, 0);
	expect_caught(e, "while the PF reset is in progress");
	while (pci_read32(r.io, 0x92400) & 1) /* PFSWR self-clears in virtual time */
		nic_model_advance_ns(1000000);
	e = nic_model_errors(i40e_model_nic(m0));
	pci_write32(r.io, 0x108000, 1); /* QTX_TAIL of a disabled queue */
	expect_caught(e, "tail written while the queue is not enabled");
	e = nic_model_errors(i40e_model_nic(m0));
	pci_write32(r.io, 0x100000, 1); /* QTX_ENA before QTX_CTL */
	expect_caught(e, "before QTX_CTL");
	e = nic_model_errors(i40e_model_nic(m0));
	pci_write32(r.io, 0x104000, 2); /* PF queue, PF 0: but still pre-disabled */
	pci_write32(r.io, 0x100000, 1);
	expect_caught(e, "GLLAN_TXPRE_QDIS");
	/* An enable request, then a second write before QENA_STAT followed. */
	uint8_t *ctx = raw_hmc(&r);
	raw_rx_ctx(&r, ctx);
	pci_write32(r.io, 0x128000, 63);
	e = nic_model_errors(i40e_model_nic(m0));
	pci_write32(r.io, 0x120000, 1);
	pci_write32(r.io, 0x120000, 0);
	expect_caught(e, "while a request is in flight");
	while (!(pci_read32(r.io, 0x120000) & 4))
		;
	pci_write32(r.io, 0x120000, 0);
	while (pci_read32(r.io, 0x120000) & 4)
		;
	e = nic_model_errors(i40e_model_nic(m0));
	pci_write32(r.io, 0x0B8188, 0); /* GLGEN_RSTAT is read-only */
	expect_caught(e, "read-only");
	e = nic_model_errors(i40e_model_nic(m0));
	(void)pci_read32(r.io, 0x00004);
	expect_caught(e, "unmodelled register 0x000004");
	raw_close(&r);
}
END_TEST

START_TEST(model_catches_context_out_of_range)
{
	struct raw r;
	raw_open(&r);
	uint8_t *ctx = raw_hmc(&r);
	pci_write32(r.io, 0x128000, 0);
	struct {
		uint32_t lsb, width;
		uint64_t value;
		const char *what;
	} bad[] = {
		{ I40E_RXCTX_QLEN, 8161, "qlen 8161 out of range" },
		{ I40E_RXCTX_QLEN, 0, "qlen 0 out of range" },
		{ I40E_RXCTX_DBUFF, 0, "dbuff 0 or rxmax 1518 out of range" },
		{ I40E_RXCTX_RXMAX, 9729, "rxmax 9729 out of range" },
		{ I40E_RXCTX_RXMAX, 40, "rxmax 40 out of range" },
		{ I40E_RXCTX_DSIZE, 0, "dsize/dtype out of range" },
		{ I40E_RXCTX_PREFENA, 0, "prefena is 0" },
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		raw_rx_ctx(&r, ctx);
		i40e_ctx_set(ctx, bad[i].lsb, bad[i].width, bad[i].value);
		uint64_t e = nic_model_errors(i40e_model_nic(m0));
		pci_write32(r.io, 0x120000, 1);
		expect_caught(e, bad[i].what);
		ck_assert_uint_eq(i40e_model_peek(m0, 0x120000), 0); /* refused */
	}
	/* TX: a context whose rdylist is not the VSI's queue set. */
	pci_write32(r.io, 0x104000, 2);
	pci_write32(r.io, 0x0E6504, (I40E_MODEL_BASE_QUEUE % 128) | 1u << 31); /* block 1: queue 128 */
	memset(r.hmc, 0, 128);
	i40e_ctx_set(r.hmc, I40E_TXCTX_BASE, pci_iova(r.io, r.ring) >> 7);
	i40e_ctx_set(r.hmc, I40E_TXCTX_QLEN, 64);
	i40e_ctx_set(r.hmc, I40E_TXCTX_RDYLIST, 3);
	uint64_t e = nic_model_errors(i40e_model_nic(m0));
	pci_write32(r.io, 0x100000, 1);
	expect_caught(e, "rdylist 3 out of range");
	/* A context beyond the HMC memory the driver registered. */
	pci_write32(r.io, 0xC6400, 0x100000); /* RX contexts 512 MB in: past the segment's memory */
	raw_rx_ctx(&r, ctx);
	e = nic_model_errors(i40e_model_nic(m0));
	pci_write32(r.io, 0x120000, 1);
	expect_caught(e, "DMA outside registered memory: rx queue context (HMC)");
	raw_close(&r);
}
END_TEST

/* A direct HMC segment backs 2 MB: fewer backing pages declared, or less
 * memory behind the 512, is caught (the NIC may use all of it). */
START_TEST(model_catches_hmc_segment)
{
	struct raw r;
	raw_open(&r);
	uint64_t pa = pci_iova(r.io, r.hmc);
	pci_write32(r.io, 0xC0200, (uint32_t)(pa >> 32));
	pci_write32(r.io, 0xC0100, ((uint32_t)pa & 0xFFFFF000u) | 1u << 2 | 3); /* one page */
	uint64_t e = nic_model_errors(i40e_model_nic(m0));
	pci_write32(r.io, 0xC0000, 1u << 31);
	expect_caught(e, "direct with 1 backing pages");
	uint8_t *small = pci_dma_alloc(r.io, 4096); /* 512 pages declared, 4 KB behind them */
	ck_assert_ptr_nonnull(small);
	pa = pci_iova(r.io, small);
	pci_write32(r.io, 0xC0200, (uint32_t)(pa >> 32));
	pci_write32(r.io, 0xC0100, ((uint32_t)pa & 0xFFFFF000u) | 512u << 2 | 3);
	e = nic_model_errors(i40e_model_nic(m0));
	pci_write32(r.io, 0xC0000, 1u << 31);
	expect_caught(e, "HMC segment (2 MB)");
	pci_dma_free(r.io, small, 4096);
	raw_close(&r);
}
END_TEST

/* What the model writes back, and only up to the tail: a raw queue whose
 * tail gives the NIC one descriptor. */
START_TEST(model_rx_writeback)
{
	struct raw r;
	raw_open(&r);
	expect_errors = false;
	uint8_t *data = pci_dma_alloc(r.io, 4096);
	ck_assert_ptr_nonnull(data);
	raw_rx_ctx(&r, raw_hmc(&r));
	volatile uint64_t *d = (volatile uint64_t *)r.ring;
	d[0] = pci_iova(r.io, data);
	d[1] = 0;
	d[4] = pci_iova(r.io, data + 2048);
	d[5] = 0;
	pci_write32(r.io, 0x128000, 1); /* QRX_TAIL: descriptor 0 is the NIC's */
	raw_rx_enable(&r);
	uint8_t f[74] = { 0x02, 0, 0, 0, 0, 0x20, 0x02, 0, 0, 0, 0, 0x99, 0x08, 0x00, 0x45 };
	f[14 + 9] = 6; /* TCP */
	for (uint32_t i = 34; i < sizeof(f); i++)
		f[i] = (uint8_t)i;
	/* Vector 0's ITR 0 at 2 us over rx queue 0, WB_ON_ITR (docs/nic.md 3.7). */
	pci_write32(r.io, 0x38000, 1);                      /* PFINT_ITR0(0) */
	pci_write32(r.io, 0x3A000, 1u << 30 | 0x7FFu << 16); /* QINT_RQCTL(0): cause on, end of list */
	pci_write32(r.io, 0x38500, 0);                      /* PFINT_LNKLST0: rx queue 0 */
	pci_write32(r.io, 0x38480, 1u << 30 | 3u << 3);     /* PFINT_DYN_CTL0: WB_ON_ITR, no ITR update */
	uint64_t written = i40e_model_nic(m0)->rx_written;
	ck_assert_int_eq(i40e_model_rx(m0, f, sizeof(f)), 0);
	ck_assert_int_eq(i40e_model_rx(m0, f, sizeof(f)), -1); /* the tail stops it */
	ck_assert_uint_eq(d[1], 0); /* held: its cache line is not complete */
	i40e_model_tick(m0);        /* 1 us */
	ck_assert_uint_eq(d[1], 0);
	i40e_model_tick(m0);        /* 2 us: the ITR expires */
	ck_assert_uint_eq(i40e_model_nic(m0)->rx_written, written + 1);
	uint64_t q1 = d[1];
	ck_assert_uint_eq(q1 & 3, 3);                        /* DD, EOF */
	ck_assert_uint_eq(q1 >> 38 & 0x3FFF, sizeof(f));     /* length */
	ck_assert_uint_eq(q1 >> 30 & 0xFF, 26);              /* PTYPE: IPv4 TCP */
	ck_assert_uint_eq(q1 >> 12 & 3, 0);                  /* no RSS (HENA 0) */
	ck_assert_mem_eq(data, f, sizeof(f));
	ck_assert_uint_eq(d[5], 0);                          /* descriptor 1 untouched */
	ck_assert_uint_eq(i40e_model_peek(m0, 0x300600), 1); /* GLPRT_RDPC */
	pci_write32(r.io, 0x120000, 0);
	while (pci_read32(r.io, 0x120000) & 4)
		;
	pci_dma_free(r.io, data, 4096);
	raw_close(&r);
}
END_TEST

/* ---- write-back, waits, link, device IDs ---- */

/* Port 0's model again, fresh (a step that never completes stays so). */
static void m0_again(void)
{
	static const uint8_t mac0[6] = { 0x02, 0, 0, 0, 0, 0x20 };
	i40e_model_destroy(m0);
	m0 = i40e_model_create(ADDR0, mac0);
	ck_assert_ptr_nonnull(m0);
	nic_model_on_error(i40e_model_nic(m0), nic_model_error, NULL);
}

/* The wrong step: WB_ON_ITR not set (PFINT_DYN_CTL0 as the bring-up left
 * it), on vector 0 (the tx queues' causes) and on each rx queue's own. */
static void wb_on_itr_off(struct device *d0)
{
	pci_write32(priv(d0)->io, I40E_PFINT_DYN_CTL0, 0);
	for (uint16_t q = 0; q < d0->n_rx_queues; q++)
		pci_write32(priv(d0)->io, I40E_PFINT_DYN_CTLN(q), 0);
}

/* Without WB_ON_ITR a polled X710 queue holds a lone frame until its
 * cache line of four descriptors is complete. */
START_TEST(rx_held_without_wb_on_itr)
{
	nic_check_rx_held(wb_on_itr_off, 4);
}
END_TEST

/* Lone frames sent one at a time, polls polls apart: after each burst
 * (which reclaims what reads done first) the tx slots still held. */
static void tx_lone_frames(struct device *d1, uint32_t n, uint32_t polls, const uint32_t *want_held)
{
	struct pci_txq *tq = txq(d1, 0);
	for (uint32_t i = 0; i < n; i++)
		make_frame(&frames[i], i, 60, 200);
	wire_expect(frames, n);
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_int_eq(nic_suite.wire_rx(frames[i].bytes, frames[i].len), 0);
		for (uint32_t k = 0; k < polls; k++)
			nic_poll();
		ck_assert_uint_eq(wire.seen, i + 1);
		ck_assert_msg(tx_slots_n_held(&tq->slots) == want_held[i], "after frame %u: %u slots held, want %u", i,
			      tx_slots_n_held(&tq->slots), want_held[i]);
	}
	ck_assert_uint_eq(wire.mismatches, 0);
}

/* Transmit DD is written back a cache line (eight descriptors) at a time;
 * with the tx queue's cause on vector 0 and WB_ON_ITR, a lone frame's DD
 * comes when the ITR expires, so the next burst, 10 polls later, finds it
 * done and reclaims it: one slot held (its own) after each. */
START_TEST(tx_low_rate_reclaim)
{
	struct device *d0, *d1;
	pair(NULL, 0, NULL, 0, &d0, &d1);
	static const uint32_t want[] = { 1, 1, 1, 1 };
	tx_lone_frames(d1, ARRAY_LEN(want), 10, want);
}
END_TEST

/* The wrong step: WB_ON_ITR cleared on the sending port. The lone frames'
 * DD is held until the eighth completes the line: nothing reclaimed for
 * 50 polls at a time, then all eight at once by the ninth burst. */
START_TEST(tx_held_without_wb_on_itr)
{
	struct device *d0, *d1;
	pair(NULL, 0, NULL, 0, &d0, &d1);
	wb_on_itr_off(d1);
	static const uint32_t want[] = { 1, 2, 3, 4, 5, 6, 7, 8, 1 };
	tx_lone_frames(d1, ARRAY_LEN(want), 50, want);
}
END_TEST

/* A device whose reset, NVM load, PF reset or firmware never completes:
 * creation fails naming the step, after the driver's bound passed in
 * virtual time. */
START_TEST(bring_up_never_completes)
{
	static const struct nic_never cases[] = {
		{ I40E_MODEL_STEP_GLOBAL_RESET, "global reset (GLGEN_RSTAT.DEVSTATE) not done after 10000 ms", 10000 },
		{ I40E_MODEL_STEP_NVM, "NVM configuration load (GLNVM_ULD core and global done) not done after 4000 ms", 4000 },
		{ I40E_MODEL_STEP_PF_RESET, "PF software reset (PFGEN_CTRL.PFSWR) not done after 400 ms", 400 },
		{ I40E_MODEL_STEP_FIRMWARE, "get version: Connection timed out", 2500 },
	};
	nic_check_never_completes("xl0", cases, ARRAY_LEN(cases));
}
END_TEST

/* A link that never trains: created and started, the link down; set PHY
 * config refused: logged, the link as firmware has it (up). */
START_TEST(link_never_or_phy_config_refused)
{
	m0_again();
	i40e_model_never(m0, I40E_MODEL_STEP_LINK);
	struct device *d = nic_dev("xl0", ADDR0, NULL, 0);
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	struct dev_link l;
	dev_link_get(d, &l);
	ck_assert(!l.up);
	dev_delete(d);
	m0_again();
	i40e_model_aq_inject_error(m0, I40E_AQC_SET_PHY_CONFIG, 14 /* EINVAL */, 1);
	d = nic_dev("xl0", ADDR0, NULL, 0);
	dev_link_get(d, &l);
	ck_assert(l.up && l.speed_mbps == 40000);
	ck_assert_uint_eq(priv(d)->phy_speeds, 0);
	struct i40e_model_stats st;
	i40e_model_stats(m0, &st);
	ck_assert_uint_eq(st.aq_error_completions, 1);
	ck_assert_uint_eq(st.phy_config_set, 0);
}
END_TEST

/* Delays drawn from nine seeds, the last at every upper end: bring-up,
 * start and link every time. */
START_TEST(bring_up_any_delays)
{
	nic_check_any_delays("xl0", 40000);
}
END_TEST

/* Every device ID the driver claims is one the model can be, and comes up
 * at its port's speed from firmware's answers (10G, 20G, 25G, 40G; 1G for
 * the X722 1000BASE-T), then follows a link down and up. */
START_TEST(every_device_id_links)
{
	const struct pci_driver *pd = pci_driver_find("i40e");
	ck_assert_ptr_nonnull(pd);
	uint32_t n = 0, seen25 = 0, seen10 = 0;
	for (const struct pci_id *p = pd->ids; p->vendor; p++, n++) {
		uint32_t mbps = 0;
		ck_assert_msg(i40e_model_knows(p->device, &mbps), "8086:%04x is claimed but not a device the model can be",
			      p->device);
		m0_again();
		i40e_model_set_device_id(m0, p->device);
		struct device *d = nic_dev("xl0", ADDR0, NULL, 0);
		struct dev_link l;
		dev_link_get(d, &l);
		ck_assert_msg(l.up && l.speed_mbps == mbps, "8086:%04x: link %d %u Mb/s, want %u", p->device, l.up,
			      l.speed_mbps, mbps);
		char want[64], *out = NULL;
		snprintf(want, sizeof(want), "\"speed_mbps\":\t%u", mbps);
		ck_assert_int_eq(cli_exec_line("show hardware xl0 json", &out), 0);
		ck_assert_msg(strstr(out, "\"link\":\t\"up\"") && strstr(out, want), "%s", out);
		free(out);
		/* Down and up again, as firmware's events say, in `show interface`. */
		ck_assert_int_eq(dev_set_admin_up(d, true), 0);
		i40e_model_set_cable(m0, false);
		ck_assert_int_eq(cli_exec_line("show interface xl0 json", &out), 0);
		ck_assert_msg(strstr(out, "\"link\":\t\"down\""), "%s", out);
		free(out);
		dev_link_get(d, &l);
		ck_assert(!l.up && l.speed_mbps == 0);
		i40e_model_set_cable(m0, true);
		nic_model_advance_ns(NIC_LINK_WAIT_NS);
		ck_assert_int_eq(cli_exec_line("show interface xl0 json", &out), 0);
		ck_assert_msg(strstr(out, "\"link\":\t\"up\""), "%s", out);
		free(out);
		dev_link_get(d, &l);
		ck_assert_uint_eq(l.speed_mbps, mbps);
		char buf[2048];
		snprintf(want, sizeof(want), "link up %u Mb/s", mbps);
		ck_assert_int_gt(pd->format_hw(d, buf, sizeof(buf)), 0);
		ck_assert_msg(strstr(buf, want), "%s", buf);
		seen25 += mbps == 25000, seen10 += mbps == 10000;
		dev_delete(d);
	}
	ck_assert_uint_eq(n, 21);
	ck_assert_uint_eq(seen25, 2);
	ck_assert_uint_gt(seen10, 5);
	ck_assert(!i40e_model_knows(0x15FF, NULL)); /* X710-T BC: no longer claimed, not modelled */
}
END_TEST

/* ---- interrupts (X710/XL710 datasheet 7.5) ---- */


static uint64_t irqs1(void)
{
	return i40e_model_nic(m0)->irqs[1];
}



static void ticks(uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		nic_suite.tick();
}


#define DYN_CTLN0 0x34800u  /* PFINT_DYN_CTLN(0): vector 1 */
#define RQCTL0 0x3A000u     /* QINT_RQCTL(0) */
#define INTEVENT (1u << 31)

/* The driver's programming: rx queue 0's cause alone on vector 1 (its
 * list, ITR 0 at 2 us), WB_ON_ITR with INTENA 0 while polled; vector 0
 * keeps the tx queue's cause; the queue's fd is vector 1's eventfd. A
 * polled frame raises nothing and leaves its cause's event pending. */
START_TEST(irq_programmed)
{
	struct device *d0 = nic_irq_pair();
	ck_assert_uint_eq(priv(d0)->n_irq, 1);
	ck_assert_int_ge(i40e_rx_fd(d0, 0), 0);
	ck_assert_uint_eq(i40e_model_nic(m0)->n_vectors, 2);
	ck_assert_uint_eq(i40e_model_peek(m0, RQCTL0), 1u << 30 | 0x7FFu << 16 | 1u); /* cause on, end, vector 1 */
	ck_assert_uint_eq(i40e_model_peek(m0, 0x35000), 0);                           /* LNKLSTN(0): rx queue 0 */
	ck_assert_uint_eq(i40e_model_peek(m0, 0x30000), 1);                           /* ITRN(0, 0): 2 us */
	ck_assert_uint_eq(i40e_model_peek(m0, DYN_CTLN0), 1u << 30 | 3u << 3);        /* WB_ON_ITR, INTENA 0 */
	ck_assert_uint_eq(i40e_model_peek(m0, 0x38500), 1u << 11);                    /* LNKLST0: tx queue 0 */
	nic_frame_in(0);
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 1);
	ck_assert_uint_eq(irqs1(), 0);
	ck_assert_uint_eq(nic_wakeups(d0), 0);
	ck_assert_uint_eq(i40e_model_peek(m0, RQCTL0) & INTEVENT, INTEVENT);
}
END_TEST

/* Armed: no wake while nothing comes; the first frame gives exactly one
 * interrupt, its descriptor written back first, and the vector masks
 * itself (INTENA 0); a second frame before the driver arms again raises
 * nothing (the driver that forgot to re-arm sleeps on it), and the arm's
 * look at the ring finds it. */
START_TEST(irq_wakes_on_first_frame)
{
	struct device *d0 = nic_irq_pair();
	ck_assert(!i40e_rx_arm(d0, 0));
	ck_assert_uint_eq(i40e_model_peek(m0, DYN_CTLN0) & 1, 1); /* INTENA */
	ticks(100);
	ck_assert_uint_eq(irqs1(), 0);
	ck_assert_uint_eq(nic_wakeups(d0), 0);
	nic_frame_in(0);
	ck_assert_uint_eq(irqs1(), 1);
	ck_assert_uint_eq(nic_wakeups(d0), 1);
	ck_assert_uint_eq(i40e_model_peek(m0, DYN_CTLN0) & 1, 0); /* masked by the NIC */
	ck_assert(i40e_rx_pending(priv(d0), 0));                  /* written back before the message */
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 1);
	nic_frame_in(1);
	ticks(100);
	ck_assert_uint_eq(irqs1(), 1);
	ck_assert_uint_eq(nic_wakeups(d0), 0);
	ck_assert(i40e_rx_arm(d0, 0)); /* found by the look after the enable */
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 2);
	ck_assert_uint_eq(wire.seen, 2);
	ck_assert_uint_eq(wire.mismatches, 0);
}
END_TEST

/* INTENA 0: a frame's event waits (no wake), and fires once when INTENA
 * is set. The same makes the arm after a busy spell cost one wakeup: the
 * last polled frame's event fires at once. */
START_TEST(irq_masked_then_pending)
{
	struct device *d0 = nic_irq_pair();
	ck_assert(!i40e_rx_arm(d0, 0));
	pci_write32(priv(d0)->io, I40E_PFINT_DYN_CTLN(0), I40E_PFINT_DYN_CTL0_WB_ON_ITR | I40E_PFINT_DYN_CTL0_ITR_NONE);
	nic_frame_in(0);
	ticks(50);
	ck_assert_uint_eq(irqs1(), 0);
	ck_assert_uint_eq(nic_wakeups(d0), 0);
	ck_assert_uint_eq(i40e_model_peek(m0, RQCTL0) & INTEVENT, INTEVENT);
	pci_write32(priv(d0)->io, I40E_PFINT_DYN_CTLN(0),
		    I40E_PFINT_DYN_CTL0_INTENA | I40E_PFINT_DYN_CTL0_WB_ON_ITR | I40E_PFINT_DYN_CTL0_ITR_NONE);
	ck_assert_uint_eq(irqs1(), 1);
	ticks(50);
	ck_assert_uint_eq(irqs1(), 1);
	ck_assert_uint_eq(nic_wakeups(d0), 1);
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 1);
	/* Polled frames, then the arm: their event fires at once. */
	nic_frame_in(1);
	run();
	ck_assert(!i40e_rx_arm(d0, 0));
	ck_assert_uint_eq(irqs1(), 2);
	ck_assert_uint_eq(nic_wakeups(d0), 1);
}
END_TEST

/* ITR 10 us: a frame 1 us after the one that interrupted waits, its
 * descriptor too, until the interval ends, then one interrupt, exactly at
 * its end (1 us ticks). */
START_TEST(irq_throttled)
{
	struct device *d0 = nic_irq_pair();
	pci_write32(priv(d0)->io, I40E_PFINT_ITRN(0, 0), 5);
	ck_assert(!i40e_rx_arm(d0, 0));
	nic_frame_in(0);
	uint64_t t0 = nic_model_now_ns();
	ck_assert_uint_eq(irqs1(), 1);
	nic_poll();
	ck_assert_uint_eq(nic_rx_packets(d0), 1);
	ck_assert(!i40e_rx_arm(d0, 0));
	nic_frame_in(1);
	ck_assert_uint_eq(irqs1(), 1);
	ck_assert(!i40e_rx_pending(priv(d0), 0)); /* held with the ITR */
	while (irqs1() == 1) {
		ck_assert_uint_lt(nic_model_now_ns() - t0, 20000);
		nic_suite.tick();
	}
	ck_assert_uint_eq(nic_model_now_ns() - t0, 10000);
	ck_assert(i40e_rx_pending(priv(d0), 0));
	run();
	ck_assert_uint_eq(nic_rx_packets(d0), 2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("i40e");
	TCase *tc = tcase_create("model");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, bring_up_link);
	tcase_add_test(tc, aq_round_trip);
	tcase_add_test(tc, aq_error_completion);
	tcase_add_test(tc, aq_timeout);
	tcase_add_test(tc, queue_enable_waits);
	tcase_add_test(tc, pcap_million_through_xconnect);
	tcase_add_test(tc, ring_wrap);
	tcase_add_test(tc, jumbo_chains);
	tcase_add_test(tc, tx_chains_mixed);
	tcase_add_test(tc, tx_offsets);
	tcase_add_test(tc, rx_chunk_chains);
	tcase_add_test(tc, rx_refill_exhaustion);
	tcase_add_test(tc, nic_drops_folded);
	tcase_add_test(tc, format_hw_matches_model);
	tcase_add_test(tc, arp_broadcast_received);
	tcase_add_test(tc, stats_survive_wrap);
	tcase_add_test(tc, x722_one_queue);
	tcase_add_test(tc, rss_four_queues);
	tcase_add_test(tc, tx_ring_full);
	tcase_add_test(tc, rx_low_rate_latency);
	tcase_add_test(tc, rx_held_without_wb_on_itr);
	tcase_add_test(tc, tx_low_rate_reclaim);
	tcase_add_test(tc, tx_held_without_wb_on_itr);
	tcase_add_test(tc, bring_up_never_completes);
	tcase_add_test(tc, bring_up_any_delays);
	tcase_add_test(tc, link_never_or_phy_config_refused);
	tcase_add_test(tc, every_device_id_links);
	tcase_add_test(tc, irq_programmed);
	tcase_add_test(tc, irq_wakes_on_first_frame);
	tcase_add_test(tc, irq_masked_then_pending);
	tcase_add_test(tc, irq_throttled);
	tcase_add_test(tc, tx_async);
	tcase_add_test(tc, tx_reuse_before_dd_caught);
	tcase_add_test(tc, model_catches_unaligned_ring);
	tcase_add_test(tc, model_catches_tail_past_ring);
	tcase_add_test(tc, model_catches_dma_outside);
	tcase_add_test(tc, model_catches_wrong_state);
	tcase_add_test(tc, model_catches_context_out_of_range);
	tcase_add_test(tc, model_rx_writeback);
	tcase_add_test(tc, model_catches_hmc_segment);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
