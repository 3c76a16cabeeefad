/* The shared part of the ixgbe and i40e suites: see nic_harness.h. */
#include <check.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/buffer.h"
#include "base/bytes.h"
#include "base/toeplitz.h"
#include "tests/nic/nic_harness.h"

struct graph *g;
char err[1024];
struct wframe *frames;
uint32_t n_frames;
bool expect_errors;
struct nic_wire wire;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

void nic_model_error(void *ctx, const char *msg)
{
	(void)ctx;
	if (!expect_errors)
		ck_abort_msg("device model: %s", msg);
}

void nic_wire_tx(void *ctx, uint16_t queue, const uint8_t *bytes, uint32_t len)
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

void wire_expect(const struct wframe *want, uint32_t n)
{
	memset(&wire, 0, sizeof(wire));
	wire.want = want;
	wire.n_want = n;
}

void nic_setup(void)
{
	/* The models' delays from NIC_MODEL_SEED (default 1): a failure seen
	 * with one seed is replayed with it. */
	const char *seed = getenv("NIC_MODEL_SEED");
	nic_model_seed(seed ? strtoull(seed, NULL, 0) : 1);
	nic_model_delays_slowest(false);
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 8192;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	expect_errors = false;
	frames = calloc(N_FRAMES, sizeof(*frames));
	ck_assert_ptr_nonnull(frames);
	g = graph_create(NULL, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_msg(graph_add_registered(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(dev_graph_attach(g, err, sizeof(err)) == 0, "%s", err);
}

void nic_teardown_devices(void)
{
	dev_graph_detach(g);
	graph_destroy(g);
	dev_delete_all();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
}

void nic_teardown_buffers(void)
{
	free(frames);
	buffer_thread_unregister();
	buffer_main_free();
}

struct device *nic_dev(const char *name, const char *addr, const char *const *words, uint32_t n)
{
	const char *w[16] = { "dev", addr };
	for (uint32_t i = 0; i < n; i++)
		w[2 + i] = words[i];
	struct device *d = dev_create(name, nic_suite.driver, w, n + 2, err, sizeof(err));
	ck_assert_msg(d, "%s", err);
	/* The link comes up some time after the bring-up (auto-negotiation,
	 * the PHY's restart): a second of virtual time covers the models'
	 * slowest, and costs nothing. */
	nic_model_advance_ns(NIC_LINK_WAIT_NS);
	return d;
}

void pair(const char *const *w0, uint32_t n0, const char *const *w1, uint32_t n1, struct device **d0,
	  struct device **d1)
{
	*d0 = nic_dev(nic_suite.name[0], nic_suite.addr[0], w0, n0);
	*d1 = nic_dev(nic_suite.name[1], nic_suite.addr[1], w1, n1);
	ck_assert_int_eq(dev_set_xconnect(*d0, *d1), 0);
	ck_assert_int_eq(dev_set_admin_up(*d0, true), 0);
	ck_assert_int_eq(dev_set_admin_up(*d1, true), 0);
}

uint32_t nic_poll(void)
{
	nic_suite.tick();
	return graph_main_poll(g);
}

/* Poll until a poll moves nothing and the models have sent all they were
 * handed: transmission is asynchronous (tests/models/nic_model.h), and a
 * feeder that did not wait for it would overrun the tx ring. */
static void settle(void)
{
	for (uint32_t rounds = 0;; rounds++) {
		ck_assert_msg(rounds < 100000, "the models never finished sending");
		uint32_t pending = nic_suite.tick();
		if (!graph_main_poll(g) && !pending)
			return;
	}
}

uint64_t run(void)
{
	uint64_t total = 0;
	for (uint32_t idle = 0, rounds = 0; idle < 3; rounds++) {
		ck_assert_msg(rounds < 1000000, "the models never finished sending");
		uint32_t pending = nic_suite.tick();
		uint32_t n = graph_main_poll(g);
		total += n;
		idle = n || pending ? 0 : idle + 1;
	}
	return total;
}

void feed(const struct wframe *f, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (nic_suite.wire_rx_room() == 0)
			settle();
		ck_assert_int_eq(nic_suite.wire_rx(f[i].bytes, f[i].len), 0);
		if (i % 64 == 63)
			settle();
	}
}

void inject(const struct wframe *f, uint32_t n)
{
	feed(f, n);
	run();
}

void make_frame(struct wframe *f, uint32_t i, uint32_t lo, uint32_t hi)
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

static void write_pcap(const char *path)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *dp = pcap_dump_open(dead, path);
	ck_assert_msg(dp, "%s", pcap_geterr(dead));
	struct wframe *f = malloc(sizeof(*f));
	ck_assert_ptr_nonnull(f);
	for (uint32_t i = 0; i < N_FRAMES; i++) {
		make_frame(f, i, 60, 1514);
		struct pcap_pkthdr h = { .ts = { .tv_sec = i }, .caplen = f->len, .len = f->len };
		pcap_dump((u_char *)dp, &h, f->bytes);
	}
	free(f);
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

void nic_pcap_replay(struct device **d0, struct device **d1)
{
	char path[] = "/tmp/sluice-nic-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	write_pcap(path);
	read_pcap(path);
	unlink(path);

	pair(NULL, 0, NULL, 0, d0, d1);
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
	dev_counters_get(*d0, &c0);
	dev_counters_get(*d1, &c1);
	ck_assert_uint_eq(c0.rx_packets, total);
	ck_assert_uint_eq(c0.rx_bytes, bytes * REPLAYS);
	ck_assert_uint_eq(c0.rx_dropped + c0.rx_errors, 0);
	ck_assert_uint_eq(c1.tx_packets, total);
	ck_assert_uint_eq(c1.tx_bytes, bytes * REPLAYS);
	ck_assert_uint_eq(c1.tx_dropped, 0);
}

/* ---- RSS ---- */

struct flow {
	uint32_t len;
	uint8_t bytes[128];
	bool hashed;
	uint32_t hash;
	uint16_t queue;
};

/* Flow i: IPv4 TCP/UDP/other, IPv6 TCP/UDP/other or ARP, with the hash and
 * queue the NIC must give it under the default key and a table of lut
 * entries filled i % 4. */
static void make_flow(struct flow *f, uint32_t i, uint32_t lut)
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
	f->queue = f->hashed ? (uint16_t)((f->hash & (lut - 1)) % 4) : 0;
}

void nic_check_rss(struct device *d, uint32_t lut)
{
	enum { N_FLOWS = 700 };
	struct flow *flows = calloc(N_FLOWS + 1, sizeof(*flows));
	for (uint32_t i = 0; i < N_FLOWS; i++)
		make_flow(&flows[i], i, lut);
	/* Microsoft's first row: 66.9.149.187:2794 -> 161.142.100.80:1766 TCP. */
	struct flow *ms = &flows[N_FLOWS];
	make_flow(ms, 0, lut);
	uint8_t *ip = ms->bytes + 14;
	static const uint8_t src[4] = { 66, 9, 149, 187 }, dst[4] = { 161, 142, 100, 80 };
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
	put16(ip + 20, 2794);
	put16(ip + 22, 1766);
	uint32_t ms_index = N_FLOWS;
	memcpy(ms->bytes + ms->len - 4, &ms_index, 4);
	ms->hash = 0x51ccc178;
	ms->queue = (0x51ccc178 & (lut - 1)) % 4;

	uint32_t want[4] = { 0 };
	for (uint32_t i = 0; i <= N_FLOWS; i++) {
		int q = nic_suite.wire_rx(flows[i].bytes, flows[i].len);
		ck_assert_int_eq(q, flows[i].queue);
		want[q]++;
	}
	/* A few ticks: the i40e writes a partial cache line of descriptors
	 * back when its ITR expires (docs/nic.md 3.7). */
	for (int k = 0; k < 4; k++)
		nic_suite.tick();
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

/* ---- tx: chains among frames of one buffer ---- */

/* The wire saw `seen` frames, all as expected; d1 counts packets sent
 * and dropped. */
static void check_sent(struct device *d1, uint64_t seen, uint64_t packets, uint64_t dropped)
{
	ck_assert_uint_eq(wire.seen, seen);
	ck_assert_uint_eq(wire.mismatches, 0);
	struct dev_counters c1;
	dev_counters_get(d1, &c1);
	ck_assert_uint_eq(c1.tx_packets, packets);
	ck_assert_uint_eq(c1.tx_dropped, dropped);
}

/* frames[0..n) onto port 0's wire, a poll loop after every burst of b
 * (fewer than a ring of 64 holds). */
static void in_bursts(uint32_t n, uint32_t b)
{
	wire_expect(frames, n);
	for (uint32_t i = 0; i < n; i += b) {
		for (uint32_t k = i; k < MIN(i + b, n); k++)
			ck_assert_int_eq(nic_suite.wire_rx(frames[k].bytes, frames[k].len), 0);
		run();
	}
}

void nic_check_tx_chains_mixed(void)
{
	const char *w[] = { "mtu", "9000", "tx-desc", "64" };
	struct device *d0, *d1;
	pair(w, 2, w, 4, &d0, &d1);
	/* Every 7th frame a jumbo (3 to 5 buffers), in bursts of 24 on a ring
	 * of 64: chains start at every offset from the RS marks (every 32nd
	 * slot) and from the ring's end, so that reclaims stop inside chains
	 * and frames of one buffer follow them in flight. */
	for (uint32_t i = 0; i < 400; i++)
		make_frame(&frames[i], i, i % 7 ? 60 : 6000, i % 7 ? 1514 : 9014);
	in_bursts(400, 24);
	ck_assert_uint_eq(wire.seen, 400);
	ck_assert_uint_eq(wire.mismatches, 0);
	/* Then frames of one buffer only (reclaim by index again): every
	 * buffer the chains' reclaim returned came back reset, or these would
	 * go out wrong. */
	for (uint32_t i = 0; i < 300; i++)
		make_frame(&frames[i], i, 60, 1514);
	in_bursts(300, 24);
	check_sent(d1, 300, 700, 0);
	/* Every chain's buffers went back with its head: none held once the
	 * ports are down. */
	ck_assert_int_eq(dev_set_admin_up(d0, false), 0);
	ck_assert_int_eq(dev_set_admin_up(d1, false), 0);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
}

void nic_check_rx_chunk_chains(void)
{
	const char *w[] = { "mtu", "9000" };
	struct device *d0, *d1;
	pair(w, 2, w, 2, &d0, &d1);
	for (uint32_t i = 0; i < 100; i++)
		make_frame(&frames[i], i, i == 45 || i == 77 ? 2049 : 60, i == 45 || i == 77 ? 9014 : 1514);
	wire_expect(frames, 100);
	inject(frames, 100);
	ck_assert_uint_eq(wire.seen, 100);
	ck_assert_uint_eq(wire.mismatches, 0);
	struct dev_counters c0;
	dev_counters_get(d0, &c0);
	ck_assert_uint_eq(c0.rx_packets, 100);
	ck_assert_uint_eq(c0.rx_dropped + c0.rx_errors, 0);
	ck_assert_int_eq(dev_set_admin_up(d0, false), 0);
	ck_assert_int_eq(dev_set_admin_up(d1, false), 0);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
}

void nic_check_tx_offsets(void)
{
	static const int16_t at[] = { -BUFFER_HEADROOM, -14, 0, 1, 200, -1, 63, -2, 128, -127, 7 };
	enum { N = sizeof(at) / sizeof(at[0]) };
	struct device *d0, *d1;
	pair(NULL, 0, NULL, 0, &d0, &d1);
	uint32_t bi[N];
	ck_assert_uint_eq(buffer_alloc(bi, N, -1), N);
	for (uint32_t i = 0; i < N; i++) {
		make_frame(&frames[i], i, 60, 1514);
		struct buffer *b = buffer_get(bi[i]);
		b->current_data = at[i];
		b->current_length = (uint16_t)frames[i].len;
		memcpy(buffer_data(b), frames[i].bytes, frames[i].len);
	}
	wire_expect(frames, N);
	ck_assert_uint_eq(dev_tx_burst(d1, 0, bi, N), N);
	run();
	ck_assert_uint_eq(wire.seen, N);
	ck_assert_uint_eq(wire.mismatches, 0);
}

/* ---- tx ring full ---- */

void nic_check_tx_ring_full(void)
{
	const char *w[] = { "tx-desc", "64" };
	struct device *d0, *d1;
	pair(NULL, 0, w, 2, &d0, &d1);
	for (uint32_t i = 0; i < 200; i++)
		make_frame(&frames[i], i, 60, 1514);
	nic_suite.wire_tx_hold(true);
	for (uint32_t i = 0; i < 200; i++)
		ck_assert_int_eq(nic_suite.wire_rx(frames[i].bytes, frames[i].len), 0);
	wire_expect(frames, 63);
	run();
	struct dev_counters c1;
	dev_counters_get(d1, &c1);
	ck_assert_uint_eq(c1.tx_packets, 63); /* a ring of 64 holds 63 */
	ck_assert_uint_eq(c1.tx_dropped, 137);
	ck_assert_uint_eq(wire.seen, 0);
	nic_suite.wire_tx_hold(false);
	ck_assert_uint_eq(wire.seen, 63);
	ck_assert_uint_eq(wire.mismatches, 0);

	/* Afterwards traffic flows again, small bursts at a time. */
	wire_expect(frames, 100);
	for (uint32_t i = 0; i < 100; i += 8) {
		for (uint32_t k = i; k < MIN(i + 8, 100u); k++)
			ck_assert_int_eq(nic_suite.wire_rx(frames[k].bytes, frames[k].len), 0);
		run();
	}
	ck_assert_uint_eq(wire.seen, 100);
	ck_assert_uint_eq(wire.mismatches, 0);
	dev_counters_get(d1, &c1);
	ck_assert_uint_eq(c1.tx_packets, 163);
	ck_assert_uint_eq(c1.tx_dropped, 137);
}

uint32_t nic_rx_latency(struct device *d0, uint32_t n, uint32_t gap, uint32_t max_polls)
{
	uint32_t worst = 0;
	struct dev_counters c;
	struct nic_model *m0 = nic_suite.model(0);
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t k = 0; k < gap; k++)
			nic_poll();
		dev_counters_get(d0, &c);
		uint64_t before = c.rx_packets, written = m0->rx_written;
		ck_assert_int_eq(nic_suite.wire_rx(frames[i].bytes, frames[i].len), 0);
		/* Polls from the model writing the descriptor back to the frame
		 * being received; the write-back itself must come within
		 * max_polls of the frame's arrival. */
		uint32_t polls = 0, since_wb = 0;
		do {
			nic_poll();
			polls++;
			if (m0->rx_written > written)
				since_wb++;
			dev_counters_get(d0, &c);
		} while (c.rx_packets == before && polls <= max_polls);
		if (c.rx_packets == before)
			return max_polls + 1;
		worst = MAX(worst, since_wb);
	}
	return worst;
}

void nic_check_rx_low_rate(void)
{
	struct device *d0, *d1;
	pair(NULL, 0, NULL, 0, &d0, &d1);
	for (uint32_t i = 0; i < 20; i++)
		make_frame(&frames[i], i, 60, 1514);
	wire_expect(frames, 20);
	ck_assert_uint_le(nic_rx_latency(d0, 20, 5, 10), 2);
	run();
	ck_assert_uint_eq(wire.seen, 20);
	ck_assert_uint_eq(wire.mismatches, 0);
}

void nic_check_rx_held(void (*wrong_step)(struct device *d0), uint32_t line)
{
	struct device *d0, *d1;
	pair(NULL, 0, NULL, 0, &d0, &d1);
	wrong_step(d0);
	for (uint32_t i = 0; i < line; i++)
		make_frame(&frames[i], i, 60, 1514);
	wire_expect(frames, line);
	/* A lone frame stays in the NIC: 50 polls, not received. */
	ck_assert_uint_eq(nic_rx_latency(d0, 1, 5, 50), 51);
	ck_assert_uint_eq(wire.seen, 0);
	/* The batch fills up with the next ones: all of them at once. */
	for (uint32_t i = 1; i < line; i++)
		ck_assert_int_eq(nic_suite.wire_rx(frames[i].bytes, frames[i].len), 0);
	run();
	ck_assert_uint_eq(wire.seen, line);
	ck_assert_uint_eq(wire.mismatches, 0);
}

void nic_check_tx_async(void)
{
	struct device *d0, *d1;
	pair(NULL, 0, NULL, 0, &d0, &d1);
	for (uint32_t i = 0; i < 200; i++)
		make_frame(&frames[i], i, 60, 200);
	wire_expect(frames, 200);
	for (uint32_t i = 0; i < 200; i++)
		ck_assert_int_eq(nic_suite.wire_rx(frames[i].bytes, frames[i].len), 0);
	/* Poll 0 takes all 200 and writes the tail; the NIC starts two ticks
	 * later and sends 64 a tick. */
	static const uint64_t want[] = { 0, 0, 64, 128, 192, 200 };
	struct pci_txq *tq = nic_suite.txq(d1, 0);
	for (uint32_t k = 0; k < ARRAY_LEN(want); k++) {
		nic_poll();
		ck_assert_msg(wire.seen == want[k], "after poll %u: %" PRIu64 " frames on the wire, want %" PRIu64, k,
			      wire.seen, want[k]);
		if (k < 2) /* nothing written back yet: nothing can be reclaimed */
			ck_assert_uint_eq(tx_slots_n_held(&tq->slots), 200);
	}
	ck_assert_uint_eq(wire.mismatches, 0);
	/* The next burst reclaims what the NIC wrote back. */
	wire_expect(frames, 1);
	wire.seen = 0;
	inject(frames, 1);
	ck_assert_uint_eq(wire.seen, 1);
	ck_assert_uint_le(tx_slots_n_held(&tq->slots), 1);

	/* A ring of 64 and a NIC slower than the traffic: the second burst
	 * finds the first's 60 slots not yet written back and takes only the
	 * 3 free ones (a driver reclaiming before DD would reuse slots the NIC
	 * still owns, which the model reports). */
	dev_delete(d0);
	dev_delete(d1);
	const char *w[] = { "tx-desc", "64" };
	pair(NULL, 0, w, 2, &d0, &d1);
	wire_expect(frames, 63);
	for (uint32_t i = 0; i < 60; i++)
		ck_assert_int_eq(nic_suite.wire_rx(frames[i].bytes, frames[i].len), 0);
	nic_poll();
	for (uint32_t i = 60; i < 120; i++)
		ck_assert_int_eq(nic_suite.wire_rx(frames[i].bytes, frames[i].len), 0);
	run();
	check_sent(d1, 63, 63, 57);
}

void nic_check_tx_reuse_caught(void)
{
	const char *w[] = { "tx-desc", "64" };
	struct device *d0, *d1;
	pair(NULL, 0, w, 2, &d0, &d1);
	for (uint32_t i = 0; i < 80; i++)
		make_frame(&frames[i], i, 60, 200);
	nic_suite.wire_tx_hold(true);
	for (uint32_t i = 0; i < 40; i++)
		ck_assert_int_eq(nic_suite.wire_rx(frames[i].bytes, frames[i].len), 0);
	run();
	struct tx_slots *t = &nic_suite.txq(d1, 0)->slots;
	ck_assert_uint_eq(tx_slots_n_held(t), 40);
	/* The wrong step: every RS slot reclaimed as if done, no DD read. */
	while (tx_slots_oldest_rs(t) >= 0)
		tx_slots_reclaim_rs(t);
	expect_errors = true;
	struct nic_model *m1 = nic_suite.model(1);
	uint64_t e = nic_model_errors(m1);
	for (uint32_t i = 40; i < 80; i++)
		ck_assert_int_eq(nic_suite.wire_rx(frames[i].bytes, frames[i].len), 0);
	run();
	ck_assert_uint_gt(nic_model_errors(m1), e);
	ck_assert_msg(strstr(nic_model_last_error(m1), "hands over descriptors the NIC still owns"), "%s",
		      nic_model_last_error(m1));
	/* The partner takes what was held: slot 0 is no longer what the tail
	 * write handed over. */
	e = nic_model_errors(m1);
	nic_suite.wire_tx_hold(false);
	ck_assert_uint_gt(nic_model_errors(m1), e);
	ck_assert_msg(strstr(nic_model_last_error(m1), "descriptor 0: written by the driver after its tail write"),
		      "%s", nic_model_last_error(m1));
}

void nic_check_never_completes(const char *name, const struct nic_never *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		nic_suite.model_again(cases[i].step);
		const char *w[] = { "dev", nic_suite.addr[0] };
		uint64_t t0 = nic_model_now_ns();
		struct device *d = dev_create(name, nic_suite.driver, w, 2, err, sizeof(err));
		ck_assert_ptr_null(d);
		ck_assert_msg(strstr(err, cases[i].what), "%s", err);
		ck_assert_uint_ge(nic_model_now_ns() - t0, cases[i].bound_ms * 1000000u);
	}
}

void nic_check_any_delays(const char *name, uint32_t mbps)
{
	for (uint64_t seed = 1; seed <= 9; seed++) {
		nic_model_seed(seed);
		nic_model_delays_slowest(seed == 9);
		nic_suite.model_again(0);
		struct device *d = nic_dev(name, nic_suite.addr[0], NULL, 0);
		ck_assert_int_eq(dev_set_admin_up(d, true), 0);
		struct dev_link l;
		dev_link_get(d, &l);
		ck_assert_msg(l.up && l.speed_mbps == mbps, "seed %" PRIu64 ": link %d %u", seed, l.up, l.speed_mbps);
		dev_delete(d);
	}
	nic_model_delays_slowest(false);
	nic_model_seed(1);
}

uint64_t nic_wakeups(struct device *d)
{
	uint64_t v = 0;
	if (read(d->ops->rx_fd(d, 0), &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

uint64_t nic_rx_packets(struct device *d)
{
	struct dev_counters c;
	dev_counters_get(d, &c);
	return c.rx_packets;
}

void nic_frame_in(uint32_t i)
{
	ck_assert_int_eq(nic_suite.wire_rx(frames[i].bytes, frames[i].len), 0);
}

struct device *nic_irq_pair(void)
{
	struct device *d0, *d1;
	pair(NULL, 0, NULL, 0, &d0, &d1);
	for (uint32_t i = 0; i < 8; i++)
		make_frame(&frames[i], i, 60, 1514);
	wire_expect(frames, 8);
	return d0;
}
