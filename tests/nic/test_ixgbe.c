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
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/device.h"
#include "drivers/pci/pci.h"
#include "graph/buffer.h"
#include "graph/graph.h"
#include "graph/toeplitz.h"
#include "tests/buffer_check.h"
#include "tests/check_run.h"
#include "tests/models/ixgbe_model.h"

#ifdef TEST_SANITIZED
#define REPLAYS 100
#else
#define REPLAYS 1000
#endif
#define N_FRAMES 1000
#define MAX_FRAME 9100
#define ADDR0 "0000:03:00.0"
#define ADDR1 "0000:03:00.1"

struct wframe {
	uint32_t len;
	uint8_t bytes[MAX_FRAME];
};

static struct graph *g;
static struct ixgbe_model *m0, *m1;
static char err[1024];
static struct wframe *frames; /* the pcap's frames, as read back */
static uint32_t n_frames;
static bool expect_errors;   /* negative tests: the model's reports are wanted */

/* What the model's tx side saw, compared with the expected sequence. */
static struct {
	const struct wframe *want;
	uint32_t n_want;
	uint64_t seen;
	uint64_t mismatches;
	uint64_t first_bad;
} wire;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* ---- model hooks ---- */

static void model_error(void *ctx, const char *msg)
{
	(void)ctx;
	if (!expect_errors)
		ck_abort_msg("device model: %s", msg);
}

static void wire_tx(void *ctx, uint16_t queue, const uint8_t *bytes, uint32_t len)
{
	(void)ctx;
	(void)queue;
	const struct wframe *w = wire.n_want ? &wire.want[wire.seen % wire.n_want] : NULL;
	if (!w || w->len != len || memcmp(w->bytes, bytes, len)) {
		if (!wire.mismatches)
			wire.first_bad = wire.seen;
		wire.mismatches++;
	}
	wire.seen++;
}

static void wire_expect(const struct wframe *want, uint32_t n)
{
	memset(&wire, 0, sizeof(wire));
	wire.want = want;
	wire.n_want = n;
}

/* ---- fixture ---- */

static void setup(void)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 8192;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	static const uint8_t mac0[6] = { 0x02, 0, 0, 0, 0, 0x10 }, mac1[6] = { 0x02, 0, 0, 0, 0, 0x11 };
	m0 = ixgbe_model_create(ADDR0, mac0);
	m1 = ixgbe_model_create(ADDR1, mac1);
	ck_assert(m0 && m1);
	expect_errors = false;
	ixgbe_model_on_error(m0, model_error, NULL);
	ixgbe_model_on_error(m1, model_error, NULL);
	ixgbe_model_on_tx(m1, wire_tx, NULL);
	pci_io_provider_set(ixgbe_model_open, NULL);
	frames = calloc(N_FRAMES, sizeof(*frames));
	ck_assert_ptr_nonnull(frames);
	g = graph_create(NULL, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_msg(graph_add_registered(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
}

static void teardown(void)
{
	graph_destroy(g);
	dev_delete_all();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	if (!expect_errors) {
		ck_assert_msg(ixgbe_model_errors(m0) == 0, "%s", ixgbe_model_last_error(m0));
		ck_assert_msg(ixgbe_model_errors(m1) == 0, "%s", ixgbe_model_last_error(m1));
	}
	pci_io_provider_set(NULL, NULL);
	ixgbe_model_destroy(m0);
	ixgbe_model_destroy(m1);
	free(frames);
	buffer_thread_unregister();
	buffer_main_free();
}

static struct device *xe(const char *name, const char *addr, const char *const *words, uint32_t n)
{
	const char *w[16] = { "dev", addr };
	for (uint32_t i = 0; i < n; i++)
		w[2 + i] = words[i];
	struct device *d = dev_create(name, "ixgbe", w, n + 2, err, sizeof(err));
	ck_assert_msg(d, "%s", err);
	return d;
}

/* xe0 -> xe1 cross-connected and up. */
static void pair(const char *const *w0, uint32_t n0, const char *const *w1, uint32_t n1, struct device **d0,
		 struct device **d1)
{
	*d0 = xe("xe0", ADDR0, w0, n0);
	*d1 = xe("xe1", ADDR1, w1, n1);
	ck_assert_int_eq(dev_set_xconnect(*d0, *d1), 0);
	ck_assert_int_eq(dev_set_admin_up(*d0, true), 0);
	ck_assert_int_eq(dev_set_admin_up(*d1, true), 0);
}

static uint64_t run(void)
{
	uint64_t total = 0;
	for (uint32_t idle = 0; idle < 3;) {
		uint32_t n = graph_main_poll(g);
		total += n;
		idle = n ? 0 : idle + 1;
	}
	return total;
}

/* Inject every frame of f[0..n) into m0, polling whenever the ring is full
 * and after every 64 frames; the caller runs the graph dry afterwards. */
static void feed(const struct wframe *f, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		while (ixgbe_model_rx_room(m0, 0) == 0)
			graph_main_poll(g);
		ck_assert_int_eq(ixgbe_model_rx(m0, f[i].bytes, f[i].len), 0);
		if (i % 64 == 63)
			graph_main_poll(g);
	}
}

static void inject(const struct wframe *f, uint32_t n)
{
	feed(f, n);
	run();
}

/* Ethernet frame i of a random size in [lo, hi], unicast to anyone. */
static void make_frame(struct wframe *f, uint32_t i, uint32_t lo, uint32_t hi)
{
	static const uint16_t types[] = { 0x0800, 0x86dd, 0x0806, 0x88b5 };
	f->len = lo + rnd() % (hi - lo + 1);
	for (uint32_t k = 0; k < f->len; k++)
		f->bytes[k] = (uint8_t)rnd();
	f->bytes[0] &= 0xfe; /* unicast */
	f->bytes[12] = (uint8_t)(types[i % 4] >> 8);
	f->bytes[13] = (uint8_t)types[i % 4];
	memcpy(f->bytes + 14, &i, sizeof(i));
}

/* ---- bring-up ---- */

START_TEST(bring_up_link)
{
	struct device *d = xe("xe0", ADDR0, NULL, 0);
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
			      strstr(buf, "RDH 0 RDT 1023"),
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

static void write_pcap(const char *path)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *dp = pcap_dump_open(dead, path);
	ck_assert_msg(dp, "%s", pcap_geterr(dead));
	struct wframe f;
	for (uint32_t i = 0; i < N_FRAMES; i++) {
		make_frame(&f, i, 60, 1514);
		struct pcap_pkthdr h = { .ts = { .tv_sec = i }, .caplen = f.len, .len = f.len };
		pcap_dump((u_char *)dp, &h, f.bytes);
	}
	pcap_dump_close(dp);
	pcap_close(dead);
}

static void read_pcap(const char *path)
{
	char pe[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, pe);
	ck_assert_msg(p, "%s", pe);
	struct pcap_pkthdr *h;
	const u_char *data;
	n_frames = 0;
	while (pcap_next_ex(p, &h, &data) == 1) {
		ck_assert_uint_lt(n_frames, N_FRAMES);
		frames[n_frames].len = h->caplen;
		memcpy(frames[n_frames].bytes, data, h->caplen);
		n_frames++;
	}
	pcap_close(p);
	ck_assert_uint_eq(n_frames, N_FRAMES);
}

START_TEST(pcap_million_through_xconnect)
{
	char path[] = "/tmp/sluice-nic-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	write_pcap(path);
	read_pcap(path);
	unlink(path);

	struct device *d0, *d1;
	pair(NULL, 0, NULL, 0, &d0, &d1);
	wire_expect(frames, n_frames);
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < n_frames; i++)
		bytes += frames[i].len;
	for (uint32_t r = 0; r < REPLAYS; r++)
		feed(frames, n_frames);
	run();

	uint64_t total = (uint64_t)REPLAYS * n_frames;
	ck_assert_uint_eq(wire.seen, total);
	ck_assert_msg(wire.mismatches == 0, "%" PRIu64 " frames differ, first at %" PRIu64, wire.mismatches,
		      wire.first_bad);
	struct dev_counters c0, c1;
	dev_counters_get(d0, &c0);
	dev_counters_get(d1, &c1);
	ck_assert_uint_eq(c0.rx_packets, total);
	ck_assert_uint_eq(c0.rx_bytes, bytes * REPLAYS);
	ck_assert_uint_eq(c0.rx_dropped + c0.rx_errors, 0);
	ck_assert_uint_eq(c1.tx_packets, total);
	ck_assert_uint_eq(c1.tx_bytes, bytes * REPLAYS);
	ck_assert_uint_eq(c1.tx_dropped, 0);
	struct ixgbe_model_stats st;
	ixgbe_model_stats(m1, &st);
	ck_assert_uint_eq(st.tx_no_fcs, 0);
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

struct flow {
	uint32_t len;
	uint8_t bytes[128];
	bool hashed;
	uint32_t hash;
	uint16_t queue;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Flow i: IPv4 TCP/UDP/other, IPv6 TCP/UDP/other or ARP, with the hash and
 * queue the NIC must give it under the default key and a RETA of i % 4. */
static void make_flow(struct flow *f, uint32_t i)
{
	memset(f, 0, sizeof(*f));
	uint8_t *p = f->bytes;
	memset(p, 0x02, 6);
	memset(p + 6, 0x04, 6);
	uint32_t kind = i % 7;
	uint8_t in[36];
	size_t n_in = 0;
	if (kind <= 2) {
		put16(p + 12, 0x0800);
		uint8_t *ip = p + 14;
		ip[0] = 0x45;
		ip[8] = 64;
		ip[9] = kind == 0 ? 6 : kind == 1 ? 17 : 47;
		uint32_t src = 0x0a000000 | rnd() % 0xffffff, dst = 0xc0a80000 | rnd() % 0xffff;
		uint16_t sp = (uint16_t)rnd(), dp = (uint16_t)rnd();
		for (int k = 0; k < 4; k++) {
			ip[12 + k] = (uint8_t)(src >> (24 - 8 * k));
			ip[16 + k] = (uint8_t)(dst >> (24 - 8 * k));
		}
		put16(ip + 20, sp);
		put16(ip + 22, dp);
		f->len = 14 + 20 + 40;
		put16(ip + 2, 60);
		n_in = toeplitz_ip4_input(in, src, dst, sp, dp, kind <= 1);
	} else if (kind <= 5) {
		put16(p + 12, 0x86dd);
		uint8_t *ip = p + 14;
		ip[0] = 0x60;
		ip[6] = kind == 3 ? 6 : kind == 4 ? 17 : 59;
		ip[7] = 64;
		for (int k = 0; k < 32; k++)
			ip[8 + k] = (uint8_t)rnd();
		uint16_t sp = (uint16_t)rnd(), dp = (uint16_t)rnd();
		put16(ip + 40, sp);
		put16(ip + 42, dp);
		f->len = 14 + 40 + 40;
		n_in = toeplitz_ip6_input(in, ip + 8, ip + 24, sp, dp, kind <= 4);
	} else {
		put16(p + 12, 0x0806);
		f->len = 60;
	}
	memcpy(p + f->len - 4, &i, 4); /* the flow's number, at the end */
	f->hashed = n_in != 0;
	f->hash = f->hashed ? toeplitz_hash(toeplitz_default_key, TOEPLITZ_KEY_SIZE_DEFAULT, in, n_in) : 0;
	f->queue = f->hashed ? (uint16_t)((f->hash & 0x7F) % 4) : 0;
}

START_TEST(rss_four_queues)
{
	const char *w[] = { "rx-queues", "4" };
	struct device *d = xe("xe0", ADDR0, w, 2);
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x05818) & 0xF, 1);         /* MRQC.MRQE: RSS */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x05C80), 0xda565a6d);      /* RSSRK(0), key bytes 0..3 */
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x05C04), 0x03020100);      /* RETA(1): entries 4..7 */

	enum { N_FLOWS = 700 };
	struct flow *flows = calloc(N_FLOWS + 1, sizeof(*flows));
	for (uint32_t i = 0; i < N_FLOWS; i++)
		make_flow(&flows[i], i);
	/* Microsoft's first row: 66.9.149.187:2794 -> 161.142.100.80:1766 TCP. */
	struct flow *ms = &flows[N_FLOWS];
	make_flow(ms, 0);
	uint8_t *ip = ms->bytes + 14;
	static const uint8_t src[4] = { 66, 9, 149, 187 }, dst[4] = { 161, 142, 100, 80 };
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
	put16(ip + 20, 2794);
	put16(ip + 22, 1766);
	uint32_t ms_index = N_FLOWS;
	memcpy(ms->bytes + ms->len - 4, &ms_index, 4);
	ms->hash = 0x51ccc178;
	ms->queue = (0x51ccc178 & 0x7F) % 4;

	uint32_t want[4] = { 0 };
	for (uint32_t i = 0; i <= N_FLOWS; i++) {
		int q = ixgbe_model_rx(m0, flows[i].bytes, flows[i].len);
		ck_assert_int_eq(q, flows[i].queue);
		want[q]++;
	}
	uint32_t got[4] = { 0 };
	uint32_t bi[256];
	for (uint16_t q = 0; q < 4; q++) {
		ck_assert_uint_gt(want[q], 100);
		uint32_t n;
		while ((n = dev_rx_burst(d, q, bi, 256)) > 0) {
			for (uint32_t k = 0; k < n; k++) {
				struct buffer *b = buffer_get(bi[k]);
				uint32_t idx;
				memcpy(&idx, buffer_data(b) + b->current_length - 4, 4);
				ck_assert_uint_le(idx, N_FLOWS);
				const struct flow *f = &flows[idx];
				ck_assert_uint_eq(b->current_length, f->len);
				ck_assert_uint_eq(f->queue, q);
				ck_assert_uint_eq(!!(b->flags & BUFFER_F_FLOW_HASH), f->hashed);
				if (f->hashed)
					ck_assert_uint_eq(b->flow_hash, f->hash);
				got[q]++;
			}
			buffer_free(bi, n);
		}
	}
	for (uint16_t q = 0; q < 4; q++)
		ck_assert_uint_eq(got[q], want[q]);
	free(flows);
}
END_TEST

/* ---- tx ring full ---- */

START_TEST(tx_ring_full)
{
	const char *w[] = { "tx-desc", "64" };
	struct device *d0, *d1;
	pair(NULL, 0, w, 2, &d0, &d1);
	for (uint32_t i = 0; i < 200; i++)
		make_frame(&frames[i], i, 60, 1514);
	ixgbe_model_tx_hold(m1, true);
	for (uint32_t i = 0; i < 200; i++)
		ck_assert_int_eq(ixgbe_model_rx(m0, frames[i].bytes, frames[i].len), 0);
	wire_expect(frames, 63);
	run();
	struct dev_counters c1;
	dev_counters_get(d1, &c1);
	ck_assert_uint_eq(c1.tx_packets, 63); /* a ring of 64 holds 63 */
	ck_assert_uint_eq(c1.tx_dropped, 137);
	ck_assert_uint_eq(wire.seen, 0);
	ixgbe_model_tx_hold(m1, false);
	ck_assert_uint_eq(wire.seen, 63);
	ck_assert_uint_eq(wire.mismatches, 0);

	/* Afterwards traffic flows again, small bursts at a time. */
	wire_expect(frames, 100);
	for (uint32_t i = 0; i < 100; i += 8) {
		for (uint32_t k = i; k < MIN(i + 8, 100u); k++)
			ck_assert_int_eq(ixgbe_model_rx(m0, frames[k].bytes, frames[k].len), 0);
		run();
	}
	ck_assert_uint_eq(wire.seen, 100);
	ck_assert_uint_eq(wire.mismatches, 0);
	dev_counters_get(d1, &c1);
	ck_assert_uint_eq(c1.tx_packets, 163);
	ck_assert_uint_eq(c1.tx_dropped, 137);
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
	ck_assert_msg(ixgbe_model_errors(m0) > before, "not caught: %s", what);
	ck_assert_msg(strstr(ixgbe_model_last_error(m0), what), "%s", ixgbe_model_last_error(m0));
}

START_TEST(model_catches_unaligned_ring)
{
	struct raw r;
	raw_open(&r);
	uint64_t e = ixgbe_model_errors(m0);
	raw_rx_ring(&r, pci_iova(r.io, r.ring + 8), 1024);
	expect_caught(e, "not 16-byte aligned");
	ck_assert_uint_eq(ixgbe_model_peek(m0, 0x01028) >> 25 & 1, 0);
	e = ixgbe_model_errors(m0);
	raw_rx_ring(&r, pci_iova(r.io, r.ring), 1000);
	expect_caught(e, "multiple of 128");
	raw_close(&r);
}
END_TEST

START_TEST(model_catches_tail_past_ring)
{
	struct raw r;
	raw_open(&r);
	uint64_t e = ixgbe_model_errors(m0);
	raw_rx_ring(&r, pci_iova(r.io, r.ring), 1024); /* 64 descriptors */
	ck_assert_uint_eq(ixgbe_model_errors(m0), e);
	pci_write32(r.io, 0x01018, 64);
	expect_caught(e, "tail 64 past the ring of 64");
	e = ixgbe_model_errors(m0);
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
	uint64_t e = ixgbe_model_errors(m0);
	raw_rx_ring(&r, pci_iova(r.io, heap), 1024);
	expect_caught(e, "DMA outside registered memory: descriptor ring");
	/* A buffer given by its virtual address (no IOVA translation). */
	e = ixgbe_model_errors(m0);
	uint64_t *d = (uint64_t *)r.ring;
	d[0] = (uint64_t)(uintptr_t)r.data;
	d[1] = 0;
	raw_rx_ring(&r, pci_iova(r.io, r.ring), 1024);
	ck_assert_uint_eq(ixgbe_model_errors(m0), e);
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
	uint64_t e = ixgbe_model_errors(m0);
	pci_write32(r.io, 0x01000, 0); /* RDBAL while the queue runs */
	expect_caught(e, "written while the queue is enabled");
	e = ixgbe_model_errors(m0);
	pci_write32(r.io, 0x04240, 0); /* HLREG0 without CRC strip, RDRXCTL with it */
	pci_write32(r.io, 0x02F00, 1u << 1);
	pci_write32(r.io, 0x03000, 1);
	expect_caught(e, "disagreeing");
	e = ixgbe_model_errors(m0);
	pci_write32(r.io, 0x06000, (uint32_t)pci_iova(r.io, r.data));
	pci_write32(r.io, 0x06004, (uint32_t)(pci_iova(r.io, r.data) >> 32));
	pci_write32(r.io, 0x06008, 1024);
	pci_write32(r.io, 0x06028, 1u << 25); /* TXDCTL.ENABLE before DMATXCTL.TE */
	expect_caught(e, "before DMATXCTL.TE");
	pci_write32(r.io, 0x01028, 0);
	e = ixgbe_model_errors(m0);
	pci_write32(r.io, 0x00000, 1u << 26); /* reset, then a write without waiting */
	pci_write32(r.io, 0x03000, 1);
	expect_caught(e, "while the reset is in progress");
	while (pci_read32(r.io, 0) & (1u << 26))
		;
	e = ixgbe_model_errors(m0);
	pci_write32(r.io, 0x042A4, 0); /* LINKS is read-only */
	expect_caught(e, "read-only");
	e = ixgbe_model_errors(m0);
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
	ck_assert_uint_eq(ixgbe_model_errors(m0), 0);
	raw_close(&r);
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
	tcase_add_test(tc, rx_refill_exhaustion);
	tcase_add_test(tc, nic_drops_folded);
	tcase_add_test(tc, rss_four_queues);
	tcase_add_test(tc, tx_ring_full);
	tcase_add_test(tc, model_catches_unaligned_ring);
	tcase_add_test(tc, model_catches_tail_past_ring);
	tcase_add_test(tc, model_catches_dma_outside);
	tcase_add_test(tc, model_catches_wrong_state);
	tcase_add_test(tc, model_aliases);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
