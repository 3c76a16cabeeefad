/* The interface layer, the null and pcap drivers and the device nodes:
 * a pcap made here crosses pcap-input -> ethernet-input -> l2-xconnect ->
 * interface-output -> pcap tx byte for byte; counters exact; runts
 * accounted, frames larger than a buffer carried as chains; L3 drops, admin down, the null driver,
 * placement, trace records, creation errors, rx at recorded pace (with a
 * tolerance), the rx burst (frames of at most rx-burst packets per poll;
 * `set interface rx-burst` refusing bad values and changing nothing);
 * af-packet's rx-ring setting and `show af-packet` (root); no buffer
 * leaks. */
#include <check.h>
#include <errno.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "drivers/capture.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "tests/check_run.h"

#define N_FRAMES 1200
#define N_RUNTS 7
#define MAX_FRAME 5000

struct pkt {
	uint32_t len;
	uint8_t bytes[MAX_FRAME];
};

static struct pkt *pkts; /* what the input file holds, in order */
static uint32_t n_pkts;
static struct graph *g;
static char err[256];
static char dir[64];
static char in_path[128], out_path[128];

/* ---- making the input ---- */

static uint64_t rng = 0x1234567887654321ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* Frame i: sizes 64..1518 mixed, a few runts, two frames longer than a
 * buffer (chains of 2 and 3); Ethernet header with a varying ethertype,
 * the rest random. */
static void make_packets(void)
{
	static const uint16_t types[] = { 0x0800, 0x0806, 0x86dd, 0x88b5 };
	n_pkts = 0;
	for (uint32_t i = 0; i < N_FRAMES; i++) {
		struct pkt *p = &pkts[n_pkts++];
		if (i % 171 == 5)
			p->len = 1 + rnd() % 13; /* runt */
		else if (i == 600)
			p->len = 2100; /* larger than a buffer's data: a chain of 2 */
		else if (i == 601)
			p->len = 5000; /* a chain of 3 */
		else if (i % 3 == 0)
			p->len = i % 2 ? 64 : 1518;
		else
			p->len = 64 + rnd() % (1518 - 64 + 1);
		for (uint32_t k = 0; k < p->len; k++)
			p->bytes[k] = (uint8_t)rnd();
		if (p->len >= 14) {
			p->bytes[12] = (uint8_t)(types[i % 4] >> 8);
			p->bytes[13] = (uint8_t)types[i % 4];
		}
	}
}

static bool is_runt(const struct pkt *p)
{
	return p->len < 14;
}

static void write_pcap(const char *path)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	ck_assert_ptr_nonnull(dead);
	pcap_dumper_t *d = pcap_dump_open(dead, path);
	ck_assert_msg(d, "%s", pcap_geterr(dead));
	for (uint32_t i = 0; i < n_pkts; i++) {
		struct pcap_pkthdr h = { .ts = { .tv_sec = 1000 + i, .tv_usec = i }, .caplen = pkts[i].len,
					 .len = pkts[i].len };
		pcap_dump((u_char *)d, &h, pkts[i].bytes);
	}
	pcap_dump_close(d);
	pcap_close(dead);
}

static void put32le(FILE *f, uint32_t v)
{
	ck_assert_int_eq(fwrite(&v, 4, 1, f), 1);
}

/* A pcapng file of the first n packets: section header, one Ethernet
 * interface, one enhanced packet block each (host byte order, which the
 * byte-order magic declares). */
static void write_pcapng(const char *path, uint32_t n)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	uint32_t shb[] = { 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0xffffffff, 0xffffffff, 28 };
	ck_assert_int_eq(fwrite(shb, sizeof(shb), 1, f), 1);
	uint32_t idb[] = { 1, 20, 1, 65535, 20 };
	ck_assert_int_eq(fwrite(idb, sizeof(idb), 1, f), 1);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t padded = ROUND_UP(pkts[i].len, 4);
		uint32_t total = 32 + padded;
		put32le(f, 6);
		put32le(f, total);
		put32le(f, 0);
		put32le(f, 0);
		put32le(f, i);
		put32le(f, pkts[i].len);
		put32le(f, pkts[i].len);
		uint8_t pad[4] = { 0 };
		ck_assert_int_eq(fwrite(pkts[i].bytes, 1, pkts[i].len, f), pkts[i].len);
		ck_assert_int_eq(fwrite(pad, 1, padded - pkts[i].len, f), padded - pkts[i].len);
		put32le(f, total);
	}
	fclose(f);
}

/* ---- fixture ---- */

static void setup(void)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 8192;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	pkts = calloc(N_FRAMES, sizeof(*pkts));
	ck_assert_ptr_nonnull(pkts);
	make_packets();
	snprintf(dir, sizeof(dir), "/tmp/sluice-drv-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(in_path, sizeof(in_path), "%s/in.pcap", dir);
	snprintf(out_path, sizeof(out_path), "%s/out.pcap", dir);
	g = graph_create(NULL, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_msg(graph_add_registered(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(dev_graph_attach(g, err, sizeof(err)) == 0, "%s", err);
}

static void teardown(void)
{
	dev_graph_detach(g);
	graph_destroy(g);
	g = NULL;
	dev_delete_all();
	ck_assert_uint_eq(dev_count(), 0);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_thread_unregister();
	buffer_main_free();
	free(pkts);
	pkts = NULL;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static struct device *create(const char *name, const char *driver, const char *const *words, uint32_t n)
{
	struct device *d = dev_create(name, driver, words, n, err, sizeof(err));
	ck_assert_msg(d, "%s", err);
	return d;
}

/* Poll until the inputs have been idle for a few loops. */
static uint64_t run(void)
{
	uint64_t total = 0;
	for (uint32_t idle = 0, loops = 0; idle < 3 && loops < 100000; loops++) {
		uint32_t n = graph_main_poll(g);
		total += n;
		idle = n ? 0 : idle + 1;
	}
	return total;
}

static uint64_t errors_of(const char *node, uint16_t code)
{
	int i = graph_node_index(g, node);
	ck_assert_int_ge(i, 0);
	return graph_node_error_count(g, (uint32_t)i, code);
}

/* Every frame of the output file, compared with the expected list. */
static void expect_output(const char *path, const struct pkt *const *want, uint32_t n_want)
{
	char pe[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, pe);
	ck_assert_msg(p, "%s", pe);
	ck_assert_int_eq(pcap_datalink(p), DLT_EN10MB);
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t i = 0;
	while (pcap_next_ex(p, &h, &data) == 1) {
		ck_assert_uint_lt(i, n_want);
		ck_assert_uint_eq(h->caplen, want[i]->len);
		ck_assert_uint_eq(h->len, want[i]->len);
		ck_assert_msg(memcmp(data, want[i]->bytes, h->caplen) == 0, "frame %u differs", i);
		i++;
	}
	ck_assert_uint_eq(i, n_want);
	pcap_close(p);
}

/* ---- pcap across the cross-connect ---- */

static void xconnect_run(const char *in, uint32_t loops, uint32_t n_in)
{
	char loops_s[16];
	snprintf(loops_s, sizeof(loops_s), "%u", loops);
	const char *rx_words[] = { "rx-file", in, "rx-loops", loops_s };
	const char *tx_words[] = { "tx-file", out_path };
	struct device *cap0 = create("cap0", "pcap", rx_words, 4);
	struct device *cap1 = create("cap1", "pcap", tx_words, 2);
	ck_assert_int_eq(dev_set_xconnect(cap0, cap1), 0);
	ck_assert_int_eq(dev_set_admin_up(cap0, true), 0);
	ck_assert_int_eq(dev_set_admin_up(cap1, true), 0);

	uint64_t rx = 0, rx_bytes = 0, tx_bytes = 0, runts = 0;
	const struct pkt **want = calloc((size_t)n_in * loops, sizeof(*want));
	uint32_t n_want = 0;
	for (uint32_t l = 0; l < loops; l++)
		for (uint32_t i = 0; i < n_in; i++) {
			const struct pkt *p = &pkts[i];
			rx++;
			rx_bytes += p->len;
			if (is_runt(p)) {
				runts++;
				continue;
			}
			tx_bytes += p->len;
			want[n_want++] = p;
		}
	ck_assert_uint_eq(run(), rx);

	struct dev_counters c0, c1;
	dev_counters_get(cap0, &c0);
	dev_counters_get(cap1, &c1);
	ck_assert_uint_eq(c0.rx_packets, rx);
	ck_assert_uint_eq(c0.rx_bytes, rx_bytes);
	ck_assert_uint_eq(c0.rx_errors, 0);
	ck_assert_uint_eq(c0.rx_dropped, 0);
	ck_assert_uint_eq(c0.tx_packets + c0.tx_bytes + c0.tx_dropped, 0);
	ck_assert_uint_eq(c1.tx_packets, n_want);
	ck_assert_uint_eq(c1.tx_bytes, tx_bytes);
	ck_assert_uint_eq(c1.tx_dropped, 0);
	ck_assert_uint_eq(c1.rx_packets + c1.rx_bytes + c1.rx_errors + c1.rx_dropped, 0);
	ck_assert_uint_eq(errors_of("ethernet-input", 0), runts); /* runt */
	ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)graph_node_index(g, "interface-output"), 0), 0);

	/* The queue view agrees with the interface view. */
	struct dev_counters q;
	dev_rx_queue_counters(cap0, 0, &q);
	ck_assert_uint_eq(q.rx_packets, rx);
	dev_tx_queue_counters(cap1, 0, &q);
	ck_assert_uint_eq(q.tx_bytes, tx_bytes);

	/* Stop flushes: the file is complete while the interface still exists. */
	ck_assert_int_eq(dev_set_admin_up(cap1, false), 0);
	expect_output(out_path, want, n_want);
	dev_delete(cap1);
	expect_output(out_path, want, n_want);
	free(want);

	dev_clear_counters(cap0);
	dev_counters_get(cap0, &c0);
	ck_assert_uint_eq(c0.rx_packets + c0.rx_bytes + c0.rx_errors, 0);
	/* cap0 fell back to L3 when its peer went away. */
	ck_assert_uint_eq(cap0->mode, DEV_MODE_L3);
}

START_TEST(pcap_xconnect_exact_bytes)
{
	write_pcap(in_path);
	xconnect_run(in_path, 1, n_pkts);
}
END_TEST

START_TEST(pcapng_three_loops)
{
	char ng[160];
	snprintf(ng, sizeof(ng), "%s/in.pcapng", dir);
	write_pcapng(ng, 300);
	xconnect_run(ng, 3, 300);
}
END_TEST

/* ---- L3 mode, admin down ---- */

START_TEST(l3_counts_and_drops)
{
	write_pcap(in_path);
	const char *rx_words[] = { "rx-file", in_path };
	struct device *cap0 = create("cap0", "pcap", rx_words, 2);
	ck_assert_int_eq(dev_set_admin_up(cap0, true), 0);
	/* Runts; frames for another station (the destination MACs are random:
	 * about half are group addresses, which every station takes); then by
	 * ethertype: IPv4 to ip4-input, ARP to arp-input, IPv6 to ip6-input,
	 * the rest unknown. */
	uint64_t want[4] = { 0 }, want_ip4 = 0, want_arp = 0, want_ip6 = 0;
	for (uint32_t i = 0; i < n_pkts; i++) {
		const struct pkt *p = &pkts[i];
		if (is_runt(p))
			want[0]++;
		else if (!(p->bytes[0] & 1) && memcmp(p->bytes, cap0->mac, 6) != 0)
			want[1]++;
		else if (i % 4 == 0)
			want_ip4++;
		else if (i % 4 == 1)
			want_arp++;
		else if (i % 4 == 2)
			want_ip6++;
		else
			want[2]++;
	}
	ck_assert_uint_gt(want_ip4, 0);
	ck_assert_uint_gt(want_arp, 0);
	run();
	for (uint16_t e = 0; e < 4; e++)
		ck_assert_uint_eq(errors_of("ethernet-input", e), want[e]);
	int eth = graph_node_index(g, "ethernet-input");
	ck_assert_uint_eq(graph_arc_packets(g, (uint32_t)eth, 2), want_ip4); /* ip4-input */
	ck_assert_uint_eq(graph_arc_packets(g, (uint32_t)eth, 3), want_arp); /* arp-input */
	ck_assert_uint_eq(graph_arc_packets(g, (uint32_t)eth, 5), want_ip6); /* ip6-input */
}
END_TEST

START_TEST(admin_down_drops_counted)
{
	write_pcap(in_path);
	const char *rx_words[] = { "rx-file", in_path };
	const char *tx_words[] = { "tx-file", out_path };
	struct device *cap0 = create("cap0", "pcap", rx_words, 2);
	struct device *cap1 = create("cap1", "pcap", tx_words, 2);
	ck_assert_int_eq(dev_set_xconnect(cap0, cap1), 0);
	ck_assert_int_eq(dev_set_admin_up(cap0, true), 0);
	uint64_t good = 0;
	for (uint32_t i = 0; i < n_pkts; i++)
		good += !is_runt(&pkts[i]);
	run();
	struct dev_counters c1;
	dev_counters_get(cap1, &c1);
	ck_assert_uint_eq(c1.tx_packets, 0);
	ck_assert_uint_eq(c1.tx_dropped, good);
	ck_assert_uint_eq(errors_of("interface-output", 0), good); /* interface down */
	dev_delete(cap1);
	expect_output(out_path, NULL, 0);

	/* An interface that is not up is not polled. */
	struct device *cap2 = create("cap2", "pcap", rx_words, 2);
	ck_assert_uint_eq(run(), 0);
	struct dev_counters c2;
	dev_counters_get(cap2, &c2);
	ck_assert_uint_eq(c2.rx_packets, 0);
}
END_TEST

/* ---- the null driver ---- */

START_TEST(null_rx_nothing_tx_frees)
{
	struct device *n0 = create("nul0", "null", NULL, 0);
	ck_assert_int_eq(dev_set_admin_up(n0, true), 0);
	ck_assert_uint_eq(run(), 0);
	uint32_t bi[10];
	ck_assert_uint_eq(buffer_alloc(bi, 10, -1), 10);
	ck_assert_uint_eq(dev_tx_burst(n0, 0, bi, 10), 10);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	struct dev_link l;
	dev_link_get(n0, &l);
	ck_assert(l.up);
}
END_TEST

START_TEST(null_recycle_xconnect)
{
	const char *words[] = { "rx-recycle", "rx-size", "60", "rx-queues", "2" };
	struct device *n0 = create("nul0", "null", words, 5);
	struct device *n1 = create("nul1", "null", NULL, 0);
	ck_assert_int_eq(dev_set_xconnect(n0, n1), 0);
	ck_assert_int_eq(dev_set_admin_up(n0, true), 0);
	ck_assert_int_eq(dev_set_admin_up(n1, true), 0);
	uint64_t total = 0;
	for (int i = 0; i < 100; i++)
		total += graph_main_poll(g);
	ck_assert_uint_eq(total, 100 * 2 * FRAME_SIZE);
	struct dev_counters c0, c1, q;
	dev_counters_get(n0, &c0);
	dev_counters_get(n1, &c1);
	ck_assert_uint_eq(c0.rx_packets, total);
	ck_assert_uint_eq(c0.rx_bytes, total * 60);
	ck_assert_uint_eq(c1.tx_packets, total);
	ck_assert_uint_eq(c1.tx_bytes, total * 60);
	dev_rx_queue_counters(n0, 1, &q);
	ck_assert_uint_eq(q.rx_packets, total / 2);
}
END_TEST

/* ---- the rx burst ---- */

/* calls and vectors of ethernet-input on thread 0. */
static struct node_stats eth_stats(void)
{
	struct node_stats st;
	int i = graph_node_index(g, "ethernet-input");
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(graph_node_stats(g, 0, (uint32_t)i, &st), 0);
	return st;
}

/* nul0 (rx-recycle, rx-burst 32) -> nul1: each poll hands ethernet-input
 * one frame of exactly 32 packets (the null driver fills what is asked),
 * never more; counters agree. */
START_TEST(null_rx_burst_frames)
{
	const char *words[] = { "rx-recycle" };
	struct device *n0 = create("nul0", "null", words, 1);
	struct device *n1 = create("nul1", "null", NULL, 0);
	ck_assert_uint_eq(n0->rx_burst, FRAME_SIZE); /* the default: a frame */
	ck_assert_int_eq(dev_set_rx_burst(n0, 32), 0);
	ck_assert_int_eq(dev_set_rx_burst(n0, 0), -ERANGE);
	ck_assert_int_eq(dev_set_rx_burst(n0, DEV_RX_BURST_MAX + 1), -ERANGE);
	ck_assert_uint_eq(n0->rx_burst, 32);
	ck_assert_int_eq(dev_set_xconnect(n0, n1), 0);
	ck_assert_int_eq(dev_set_admin_up(n0, true), 0);
	ck_assert_int_eq(dev_set_admin_up(n1, true), 0);
	graph_clear_runtime(g);
	for (int i = 0; i < 100; i++) {
		struct node_stats a = eth_stats();
		ck_assert_uint_eq(graph_main_poll(g), 32);
		struct node_stats b = eth_stats();
		ck_assert_uint_eq(b.calls - a.calls, 1);
		ck_assert_uint_eq(b.vectors - a.vectors, 32);
	}
	struct dev_counters c0, c1;
	dev_counters_get(n0, &c0);
	dev_counters_get(n1, &c1);
	ck_assert_uint_eq(c0.rx_packets, 100 * 32);
	ck_assert_uint_eq(c1.tx_packets, 100 * 32);
	/* Back to a frame: full frames again. */
	ck_assert_int_eq(dev_set_rx_burst(n0, DEV_RX_BURST_MAX), 0);
	ck_assert_uint_eq(graph_main_poll(g), FRAME_SIZE);
}
END_TEST

/* Run line; returns its status, *out its output (freed by the caller). */
static int cli(const char *line, char **out)
{
	*out = NULL;
	int rc = cli_exec_line(line, out);
	ck_assert_ptr_nonnull(*out);
	return rc;
}

/* `set interface rx-burst`: a good value is taken and shown (text and
 * json); a bad one prints the reason and the usage and changes nothing. */
START_TEST(cli_rx_burst)
{
	struct device *n0 = create("nul0", "null", NULL, 0);
	char *out;
	cli_set_graph(g);
	ck_assert_int_eq(cli("set interface rx-burst nul0 32", &out), 0);
	ck_assert_str_eq(out, "nul0 rx-burst 32\n");
	free(out);
	ck_assert_uint_eq(n0->rx_burst, 32);
	static const char *const bad[] = {
		"set interface rx-burst nul0 0",    "set interface rx-burst nul0 257", "set interface rx-burst nul0 lots",
		"set interface rx-burst nul0 -1",   "set interface rx-burst nul0 32x", "set interface rx-burst nul0",
		"set interface rx-burst nul9 64",   "set interface rx-burst nul0 64 1", "set interface rx-burst",
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		ck_assert_msg(cli(bad[i], &out) < 0, "'%s' accepted: %s", bad[i], out);
		ck_assert_msg(strstr(out, "error: ") && strstr(out, "usage: set interface rx-burst NAME N"),
			      "'%s': %s", bad[i], out);
		free(out);
		ck_assert_msg(n0->rx_burst == 32, "'%s' changed it to %u", bad[i], n0->rx_burst);
	}
	ck_assert_int_eq(cli("show interface nul0 json", &out), 0);
	ck_assert_msg(strstr(out, "\"rx-burst\":\t32") || strstr(out, "\"rx-burst\": 32"), "%s", out);
	free(out);
	ck_assert_int_eq(cli("show interface", &out), 0);
	ck_assert_msg(strstr(out, "RX-burst\n") && strstr(out, " 32\n"), "%s", out);
	free(out);
	ck_assert_int_eq(cli("show hardware nul0", &out), 0);
	ck_assert_msg(strstr(out, "1 rx queue(s) of burst 32"), "%s", out);
	free(out);
	cli_set_graph(NULL);
}
END_TEST

/* set interface mtu / mac address: VPP's spelling; bad words print usage
 * and change nothing; show interface and show hardware show both. */
START_TEST(cli_mtu_mac)
{
	struct device *n0 = create("nul0", "null", NULL, 0);
	char *out;
	cli_set_graph(g);
	ck_assert_int_eq(cli("set interface mtu 9000 nul0", &out), 0);
	ck_assert_str_eq(out, "nul0 mtu 9000\n");
	free(out);
	ck_assert_int_eq(cli("set interface mtu packet 1400 nul0", &out), 0);
	free(out);
	ck_assert_uint_eq(n0->mtu, 1400);
	ck_assert_int_eq(cli("set interface mac address nul0 02:42:0A:00:00:01", &out), 0);
	ck_assert_str_eq(out, "nul0 mac 02:42:0a:00:00:01\n");
	free(out);
	static const char *const bad[] = {
		"set interface mtu 67 nul0",     "set interface mtu 9217 nul0", "set interface mtu nul0 1500",
		"set interface mtu 1500 nul9",   "set interface mtu 1500",      "set interface mtu ip4 1500 nul0",
		"set interface mac address nul0 01:00:5e:00:00:05", "set interface mac address nul0 00:00:00:00:00:00",
		"set interface mac address nul0 02:42:0a:00:00",    "set interface mac address nul0",
		"set interface mac address nul9 02:42:0a:00:00:02",
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		ck_assert_msg(cli(bad[i], &out) < 0, "'%s' accepted: %s", bad[i], out);
		ck_assert_msg(strstr(out, "error: "), "'%s': %s", bad[i], out);
		free(out);
		ck_assert_msg(n0->mtu == 1400 && n0->mac[5] == 1, "'%s' changed nul0", bad[i]);
	}
	ck_assert_int_eq(cli("show interface nul0 json", &out), 0);
	ck_assert_msg(strstr(out, "\"mac\":\t\"02:42:0a:00:00:01\"") || strstr(out, "\"mac\": \"02:42:0a:00:00:01\""),
		      "%s", out);
	free(out);
	ck_assert_int_eq(cli("show hardware nul0", &out), 0);
	ck_assert_msg(strstr(out, "mtu 1400, mac 02:42:0a:00:00:01,"), "%s", out);
	free(out);
	cli_set_graph(NULL);
}
END_TEST

/* ---- table, placement, trace, errors ---- */

START_TEST(table_and_placement)
{
	const char *two[] = { "rx-queues", "2" };
	struct device *a = create("a", "null", two, 2);
	struct device *b = create("b", "null", two, 2);
	ck_assert_ptr_eq(dev_by_name("b"), b);
	ck_assert_ptr_eq(dev_by_index(a->index), a);
	ck_assert_uint_eq(dev_count(), 2);
	uint32_t n;
	dev_poll_list(0, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(dev_rx_placement_round_robin(1, 3), 0);
	const struct dev_poll *p = dev_poll_list(1, &n);
	ck_assert_uint_eq(n, 2); /* a/0 and b/1 */
	ck_assert_ptr_eq(p[0].dev, a);
	ck_assert_uint_eq(p[0].queue, 0);
	ck_assert_ptr_eq(p[1].dev, b);
	ck_assert_uint_eq(p[1].queue, 1);
	dev_poll_list(0, &n);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(dev_set_rx_placement(a, 1, 0), 0);
	dev_poll_list(0, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(dev_set_rx_placement(a, 2, 0), -EINVAL);
	ck_assert_int_eq(dev_set_xconnect(a, a), -EINVAL);
	dev_delete(a);
	ck_assert_ptr_null(dev_by_name("a"));
	struct device *c = create("c", "null", NULL, 0);
	ck_assert_uint_eq(c->index, 0); /* the lowest free index again */
	struct device *d;
	uint32_t seen = 0;
	DEV_FOREACH(d)
	seen++;
	ck_assert_uint_eq(seen, 2);
}
END_TEST

/* Run line, which must succeed. */
static void cli_ok(const char *line)
{
	char *out;
	ck_assert_msg(cli(line, &out) == 0, "'%s': %s", line, out);
	free(out);
}

/* af-packet's rx-ring (drivers/af_packet): `create host-interface ...
 * rx-ring KIND` on lo (root: a packet socket), and `show af-packet` in
 * text and json says the setting and, once up, the ring each queue has: a
 * polling queue gets the per-frame ring with rx-ring frame, the block ring
 * with auto; a queue whose mode changes keeps its ring until the next up.
 * A bad kind prints the reason and the usage and creates nothing; so does
 * the same word through `create interface`. */
START_TEST(af_packet_rx_ring)
{
	if (geteuid() != 0) {
		fprintf(stderr, "af_packet_rx_ring: skipped, needs root (a packet socket)\n");
		return;
	}
	/* A network namespace of this test's own, whose lo gets an MTU a
	 * 2048-byte tx frame holds. */
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	struct ifreq ifr = { .ifr_mtu = 1500 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	ck_assert_int_eq(ioctl(fd, SIOCSIFMTU, &ifr), 0);
	ck_assert_int_eq(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	ck_assert_int_eq(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	close(fd);
	char *out;
	cli_set_graph(g);
	static const char *const bad[] = {
		"create host-interface name lo rx-ring fast",
		"create host-interface name lo rx-ring",
		"create interface host-lo driver af-packet host-if lo rx-ring V2",
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		ck_assert_msg(cli(bad[i], &out) < 0, "'%s' accepted: %s", bad[i], out);
		ck_assert_msg(strstr(out, "error: ") && strstr(out, "usage: create "), "'%s': %s", bad[i], out);
		ck_assert_msg(strstr(out, "rx-ring"), "'%s' does not name the key: %s", bad[i], out);
		free(out);
		ck_assert_ptr_null(dev_by_name("host-lo"));
	}
	ck_assert_int_eq(cli("create host-interface name lo rx-ring fast", &out), -EINVAL);
	ck_assert_msg(strstr(out, "error: rx-ring: expected frame, block or auto, found 'fast'"), "%s", out);
	free(out);
	cli_ok("create host-interface name lo rx-ring frame");
	cli_ok("create interface lo-auto driver af-packet host-if lo");
	ck_assert_int_eq(cli("show af-packet host-lo json", &out), 0);
	ck_assert_msg(strstr(out, "\"rx_ring\":\t\"frame\"") && strstr(out, "\"ring\":\tnull"), "%s", out);
	free(out);
	cli_ok("set interface rx-mode host-lo polling");
	cli_ok("set interface rx-mode lo-auto polling");
	cli_ok("set interface state host-lo up");
	cli_ok("set interface state lo-auto up");
	ck_assert_int_eq(cli("show af-packet json", &out), 0);
	cJSON *j = cJSON_Parse(out);
	free(out);
	ck_assert_ptr_nonnull(j);
	cJSON *list = cJSON_GetObjectItem(j, "interfaces");
	ck_assert_int_eq(cJSON_GetArraySize(list), 2);
	static const char *const want[][4] = { { "host-lo", "frame", "frame", "v2" }, { "lo-auto", "auto", "block", "v3" } };
	for (int i = 0; i < 2; i++) {
		cJSON *o = cJSON_GetArrayItem(list, i);
		cJSON *q = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rx_queues"), 0);
		ck_assert_str_eq(cJSON_GetObjectItem(o, "name")->valuestring, want[i][0]);
		ck_assert_str_eq(cJSON_GetObjectItem(o, "host_if")->valuestring, "lo");
		ck_assert_str_eq(cJSON_GetObjectItem(o, "rx_ring")->valuestring, want[i][1]);
		ck_assert_str_eq(cJSON_GetObjectItem(q, "rx_mode")->valuestring, "polling");
		ck_assert_str_eq(cJSON_GetObjectItem(q, "ring")->valuestring, want[i][2]);
		ck_assert_str_eq(cJSON_GetObjectItem(q, "tpacket")->valuestring, want[i][3]);
		ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(q, "kept_since_start")));
	}
	cJSON_Delete(j);
	/* The mode changes, the rings stay (until the next up). */
	cli_ok("set interface rx-mode lo-auto interrupt");
	cli_ok("set interface rx-mode host-lo interrupt");
	ck_assert_int_eq(cli("show af-packet", &out), 0);
	ck_assert_msg(strstr(out, "host-lo    lo       frame        0  interrupt  frame (TPACKET_V2 ") &&
			      strstr(out, "lo-auto    lo       auto         0  interrupt  block (TPACKET_V3 32 x 131072)") &&
			      strstr(out, "kept since start"),
		      "%s", out);
	free(out);
	ck_assert_int_eq(cli("show hardware lo-auto", &out), 0);
	ck_assert_msg(strstr(out, "rx-ring auto,") && strstr(out, "TPACKET_V3"), "%s", out);
	free(out);
	cli_ok("set interface state lo-auto down");
	cli_ok("set interface state lo-auto up");
	ck_assert_int_eq(cli("show af-packet lo-auto json", &out), 0);
	ck_assert_msg(strstr(out, "\"ring\":\t\"frame\"") && strstr(out, "\"kept_since_start\":\tfalse"), "%s", out);
	free(out);
	ck_assert_int_eq(cli("show af-packet nul0", &out), -EINVAL);
	free(out);
	create("nul0", "null", NULL, 0);
	ck_assert_int_eq(cli("show af-packet nul0", &out), -EINVAL);
	ck_assert_msg(strstr(out, "nul0 is not an af-packet interface") && strstr(out, "usage: show af-packet"), "%s",
		      out);
	free(out);
	cli_set_graph(NULL);
}
END_TEST

START_TEST(create_errors)
{
	const char *bad_key[] = { "colour", "red" };
	ck_assert_ptr_null(dev_create("x", "null", bad_key, 2, err, sizeof(err)));
	ck_assert_str_eq(err, "driver null has no key 'colour'");
	ck_assert_ptr_null(dev_create("x", "nic9000", NULL, 0, err, sizeof(err)));
	ck_assert_msg(strstr(err, "unknown driver 'nic9000'") && strstr(err, "pcap") && strstr(err, "null"), "%s",
		      err);
	const char *missing[] = { "rx-file", "/nonexistent/in.pcap" };
	ck_assert_ptr_null(dev_create("x", "pcap", missing, 2, err, sizeof(err)));
	ck_assert_msg(strstr(err, "/nonexistent/in.pcap"), "%s", err);
	const char *no_value[] = { "rx-queues" };
	ck_assert_ptr_null(dev_create("x", "null", no_value, 1, err, sizeof(err)));
	const char *range[] = { "rx-queues", "99" };
	ck_assert_ptr_null(dev_create("x", "null", range, 2, err, sizeof(err)));
	create("x", "null", NULL, 0);
	ck_assert_ptr_null(dev_create("x", "null", NULL, 0, err, sizeof(err)));
	ck_assert_str_eq(err, "interface x already exists");
	ck_assert_ptr_nonnull(conf_driver_find("pcap"));
}
END_TEST

START_TEST(trace_records)
{
	write_pcap(in_path);
	const char *rx_words[] = { "rx-file", in_path };
	const char *tx_words[] = { "tx-file", out_path };
	struct device *cap0 = create("cap0", "pcap", rx_words, 2);
	struct device *cap1 = create("cap1", "pcap", tx_words, 2);
	ck_assert_int_eq(dev_set_xconnect(cap0, cap1), 0);
	ck_assert_int_eq(dev_set_admin_up(cap0, true), 0);
	ck_assert_int_eq(dev_set_admin_up(cap1, true), 0);
	ck_assert_msg(graph_trace_add(g, "pcap-input", 6, err, sizeof(err)) == 0, "%s", err);
	run();
	ck_assert_uint_eq(graph_trace_n_packets(g), 6);
	/* Packet 0: 1518 bytes of type 0x0800 across the cross-connect. */
	const struct trace_record *r;
	ck_assert_uint_eq(graph_trace_packet(g, 0, &r, NULL), 5);
	char buf[256], want[256], eth[80];
	const uint8_t *h = pkts[0].bytes;
	snprintf(eth, sizeof(eth), "%02x:%02x:%02x:%02x:%02x:%02x -> %02x:%02x:%02x:%02x:%02x:%02x type 0x0800",
		 h[6], h[7], h[8], h[9], h[10], h[11], h[0], h[1], h[2], h[3], h[4], h[5]);
	graph_trace_format(g, &r[0], buf, sizeof(buf));
	snprintf(want, sizeof(want), "cap0 (if 0) rx queue 0 length 1518: %s", eth);
	ck_assert_str_eq(buf, want);
	graph_trace_format(g, &r[1], buf, sizeof(buf));
	snprintf(want, sizeof(want), "cap0 (if 0) length 1518: %s -> l2-xconnect", eth);
	ck_assert_str_eq(buf, want);
	graph_trace_format(g, &r[2], buf, sizeof(buf));
	ck_assert_str_eq(buf, "cap0 (if 0) -> cap1 (if 1) -> interface-output");
	graph_trace_format(g, &r[3], buf, sizeof(buf));
	snprintf(want, sizeof(want), "cap1 (if 1) tx queue 0 length 1518: %s", eth);
	ck_assert_str_eq(buf, want);
	ck_assert_str_eq(graph_node_reg(g, r[4].node_index)->name, "pcap-tx");
	graph_trace_format(g, &r[4], buf, sizeof(buf));
	ck_assert_str_eq(buf, "cap1 (if 1) tx queue 0 length 1518");
	/* Packet 5 is a runt: ethernet-input says so, error-drop takes it. */
	ck_assert_uint_eq(graph_trace_packet(g, 5, &r, NULL), 3);
	graph_trace_format(g, &r[1], buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "-> error-drop (runt"), "%s", buf);
}
END_TEST

/* ---- rx at recorded pace ---- */

/* Gaps of 200 ms and 80 ms of tolerance: a loaded 2-core box deschedules
 * the poll loop for tens of ms, which must not read as a pacing fault; a
 * frame sent a gap early or late still does. */
enum { PACE_N = 16, PACE_GAP_US = 200000, PACE_TOL_US = 80000 };

/* One replay of the file at in_path (stamps rec_us) through cap0 -> cap1.
 * Asserts that every frame arrives, in order, never before it was due,
 * counted from the start of the pass; returns how late the latest one was
 * (us), the whole pass's overrun included. */
static int64_t pace_replay(const int64_t *rec_us, uint32_t *worst_frame)
{
	const char *rx_words[] = { "rx-file", in_path, "rx-pace", "recorded" };
	const char *tx_words[] = { "tx-file", out_path };
	struct device *cap0 = create("cap0", "pcap", rx_words, 4);
	struct device *cap1 = create("cap1", "pcap", tx_words, 2);
	ck_assert_int_eq(dev_set_xconnect(cap0, cap1), 0);
	ck_assert_int_eq(dev_set_admin_up(cap0, true), 0);
	ck_assert_int_eq(dev_set_admin_up(cap1, true), 0);
	/* The pass starts when the first poll reads frame 0, after this: the
	 * reference for every frame. Frame 0's own tx stamp is not one: a
	 * loaded box (or ASan) may take milliseconds to carry it to the tx,
	 * and the frames after it would then seem early. The tx stamps are
	 * CLOCK_REALTIME; 1 ms of margin for its slewing. */
	struct timespec start;
	clock_gettime(CLOCK_REALTIME, &start);
	uint64_t t0 = time_now_ns(), total = 0;
	while (total < PACE_N && time_now_ns() - t0 < 5000000000ull)
		total += graph_main_poll(g);
	int64_t elapsed_us = (int64_t)((time_now_ns() - t0) / 1000);
	ck_assert_uint_eq(total, PACE_N);
	ck_assert_int_ge(elapsed_us, rec_us[PACE_N - 1]);
	ck_assert_int_eq(dev_set_admin_up(cap1, false), 0); /* flushes the file */

	char pe[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(out_path, pe);
	ck_assert_msg(p, "%s", pe);
	struct pcap_pkthdr *h;
	const u_char *data;
	int64_t start_us = (int64_t)start.tv_sec * 1000000 + start.tv_nsec / 1000, prev_rec = 0, clock_rec = 0;
	int64_t worst = (elapsed_us - rec_us[PACE_N - 1]) / 2;
	*worst_frame = PACE_N; /* the pass as a whole */
	for (uint32_t i = 0; i < PACE_N; i++) {
		ck_assert_int_eq(pcap_next_ex(p, &h, &data), 1);
		ck_assert_uint_eq(data[14], i);
		int64_t at = (int64_t)h->ts.tv_sec * 1000000 + h->ts.tv_usec;
		/* when it was due: its own stamp, or at once when out of order */
		clock_rec = rec_us[i] > prev_rec ? rec_us[i] : clock_rec;
		prev_rec = rec_us[i] > prev_rec ? rec_us[i] : prev_rec;
		int64_t late = (at - start_us) - clock_rec;
		ck_assert_msg(late > -1000, "frame %u sent %lld us before it was due", i, (long long)-late);
		if (late > worst) {
			worst = late;
			*worst_frame = i;
		}
	}
	pcap_close(p);
	dev_delete(cap0);
	dev_delete(cap1);
	return worst;
}

/* 16 frames stamped 200 ms apart (one a third of a gap late, one stamped
 * before its predecessor), replayed with rx-pace recorded into a pcap tx
 * file: each tx stamp (the time of its burst) is never before the frame was
 * due and within the tolerance after it (the test polls without sleeping;
 * the daemon's idle sleep adds up to idle-max-us), and the whole pass takes
 * the recorded time (within twice the tolerance). Lateness is physical
 * time on a shared box: up to three replays, one must be on time. */
START_TEST(pcap_rx_pace_recorded)
{
	int64_t rec_us[PACE_N];
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d = pcap_dump_open(dead, in_path);
	ck_assert_ptr_nonnull(d);
	for (uint32_t i = 0; i < PACE_N; i++) {
		rec_us[i] = (int64_t)i * PACE_GAP_US + (i == 5 ? PACE_GAP_US / 3 : 0);
		if (i == 9)
			rec_us[i] = rec_us[8] - 1000; /* out of order: goes at once */
		struct pcap_pkthdr h = { .ts = { .tv_sec = 1700000000 + rec_us[i] / 1000000,
						 .tv_usec = rec_us[i] % 1000000 },
					 .caplen = 64, .len = 64 };
		uint8_t frame[64] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x88, 0xb5, (uint8_t)i };
		pcap_dump((u_char *)d, &h, frame);
	}
	pcap_dump_close(d);
	pcap_close(dead);

	for (uint32_t attempt = 1;; attempt++) {
		uint32_t frame;
		int64_t worst = pace_replay(rec_us, &frame);
		if (worst < PACE_TOL_US)
			break;
		fprintf(stderr, "pace attempt %u: %s %u sent %lld us late\n", attempt,
			frame < PACE_N ? "frame" : "the pass of", frame < PACE_N ? frame : PACE_N, (long long)worst);
		ck_assert_msg(attempt < 3, "sent late in 3 replays out of 3 (last: %lld us)", (long long)worst);
	}
}
END_TEST

/* pcap capture drop: what error-drop frees, seen through the graph's drop
 * tap, lands in the file (up to max), each frame one of those sent. */
START_TEST(capture_drop)
{
	write_pcap(in_path);
	const char *rx_words[] = { "rx-file", in_path };
	struct device *cap0 = create("cap0", "pcap", rx_words, 2);
	char drop_path[300];
	snprintf(drop_path, sizeof(drop_path), "%s/drop.pcap", dir);
	struct dev_capture_params p = { .what = DEV_CAPTURE_DROP, .if_index = DEV_INDEX_INVALID, .max = 10,
					.path = drop_path };
	ck_assert_msg(dev_capture_start(&p, err, sizeof(err)) == 0, "%s", err);
	graph_set_drop_tap(g, dev_capture_drop_tap, NULL);
	ck_assert_int_eq(dev_set_admin_up(cap0, true), 0);
	run();
	uint64_t n = 0;
	char path[256];
	ck_assert_int_eq(dev_capture_stop(&n, path, sizeof(path)), 0);
	graph_set_drop_tap(g, NULL, NULL);
	ck_assert_uint_eq(n, 10);
	char pe[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(drop_path, pe);
	ck_assert_msg(pc, "%s", pe);
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t got = 0;
	while (pcap_next_ex(pc, &h, &data) == 1) {
		bool found = false;
		for (uint32_t i = 0; i < n_pkts && !found; i++)
			found = pkts[i].len == h->caplen && memcmp(pkts[i].bytes, data, h->caplen) == 0;
		ck_assert_msg(found, "captured frame %u is not one that was sent", got);
		got++;
	}
	pcap_close(pc);
	ck_assert_uint_eq(got, 10);
}
END_TEST

/* Run the replay of in_path on cap0 with p armed (what, filter, drop
 * errors); return the capture file opened for reading. */
static pcap_t *capture_replay(struct dev_capture_params *p, const char *name)
{
	write_pcap(in_path);
	const char *rx_words[] = { "rx-file", in_path };
	struct device *cap0 = create("cap0", "pcap", rx_words, 2);
	static char path[300];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	p->if_index = DEV_INDEX_INVALID;
	p->max = N_FRAMES;
	p->snaplen = 8192;
	p->path = path;
	ck_assert_msg(dev_capture_start(p, err, sizeof(err)) == 0, "%s", err);
	graph_set_drop_tap(g, dev_capture_drop_tap, NULL);
	ck_assert_int_eq(dev_set_admin_up(cap0, true), 0);
	run();
	uint64_t n = 0;
	ck_assert_int_eq(dev_capture_stop(&n, NULL, 0), 0);
	graph_set_drop_tap(g, NULL, NULL);
	char pe[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, pe);
	ck_assert_msg(pc, "%s", pe);
	return pc;
}

/* The frames of pc are, in order and byte for byte, the sent frames that
 * keep() accepts (whole: none is longer than the snap length). */
static void expect_capture(pcap_t *pc, bool (*keep)(const struct pkt *p, const struct bpf_program *prog),
			   const struct bpf_program *prog, uint32_t n_want)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t i = 0, got = 0;
	while (pcap_next_ex(pc, &h, &data) == 1) {
		while (i < n_pkts && !keep(&pkts[i], prog))
			i++;
		ck_assert_msg(i < n_pkts, "captured frame %u was not to be kept", got);
		ck_assert_uint_eq(h->len, pkts[i].len);
		ck_assert_uint_eq(h->caplen, pkts[i].len);
		ck_assert_msg(memcmp(data, pkts[i].bytes, h->caplen) == 0, "captured frame %u differs from frame %u", got, i);
		i++;
		got++;
	}
	pcap_close(pc);
	ck_assert_uint_eq(got, n_want);
}

static bool keep_by_libpcap(const struct pkt *p, const struct bpf_program *prog)
{
	struct pcap_pkthdr h = { .caplen = p->len, .len = p->len };
	return pcap_offline_filter(prog, &h, p->bytes) != 0;
}

/* rx with a filter: exactly the frames libpcap's own evaluation of the same
 * expression over the sent frames accepts (ARP: every fourth, the chain of
 * 3 among them, the runts not), in order. */
START_TEST(capture_rx_filtered)
{
	const char *expr = "arp or (ether[14] & 0xf0 = 0x40 and ether[0] & 1 = 1)";
	struct dev_capture_params p = { .what = DEV_CAPTURE_RX };
	p.filter = pkt_filter_compile(expr, err, sizeof(err));
	ck_assert_msg(p.filter, "%s", err);
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	struct bpf_program prog;
	ck_assert_int_eq(pcap_compile(dead, &prog, expr, 1, PCAP_NETMASK_UNKNOWN), 0);
	uint32_t n_want = 0;
	for (uint32_t i = 0; i < n_pkts; i++)
		n_want += keep_by_libpcap(&pkts[i], &prog);
	ck_assert_uint_ge(n_want, N_FRAMES / 4 - N_RUNTS);
	ck_assert(keep_by_libpcap(&pkts[601], &prog)); /* the chain of 3 */
	expect_capture(capture_replay(&p, "filtered.pcap"), keep_by_libpcap, &prog, n_want);
	pcap_freecode(&prog);
	pcap_close(dead);
}
END_TEST

static bool keep_runt(const struct pkt *p, const struct bpf_program *prog)
{
	(void)prog;
	return is_runt(p);
}

/* drop with one error: of all ethernet-input drops (mostly "destination MAC
 * not this interface's"), only the runts; a bad filter arms nothing. */
START_TEST(capture_drop_by_error)
{
	ck_assert_ptr_null(pkt_filter_compile("ether proto", err, sizeof(err)));
	ck_assert_msg(strstr(err, "syntax error"), "%s", err);
	struct dev_capture_params p = { .what = DEV_CAPTURE_DROP, .drop_node = "ethernet-input",
					.drop_reason = "runt (shorter than an Ethernet header)" };
	int node = graph_node_index(g, "ethernet-input");
	for (uint32_t e = 0; e < graph_n_errors(g); e++) {
		uint32_t ni;
		const char *reason;
		if (!graph_error_info(g, e, &ni, &reason) && ni == (uint32_t)node && !strcmp(reason, p.drop_reason))
			p.drop_error_first = e, p.drop_error_count = 1;
	}
	ck_assert_uint_eq(p.drop_error_count, 1);
	expect_capture(capture_replay(&p, "runts.pcap"), keep_runt, NULL, N_RUNTS);
	ck_assert_uint_gt(errors_of("ethernet-input", 1), N_FRAMES / 2); /* not for us: dropped, not captured */
	struct dev_capture_status st;
	dev_capture_get_status(&st);
	ck_assert_uint_eq(st.max, 0); /* stopped: nothing shown */
}
END_TEST

/* ---- tx arcs: made by the device layer as interfaces come ---- */

/* The arc of `node` to `target` in g, or -1. */
static int arc_to(const char *node, const char *target)
{
	int n = graph_node_index(g, node), t = graph_node_index(g, target);
	ck_assert_int_ge(n, 0);
	ck_assert_int_ge(t, 0);
	for (uint16_t k = 0; k < graph_node_n_next(g, (uint32_t)n); k++)
		if (graph_node_next(g, (uint32_t)n, k) == t)
			return k;
	return -1;
}

/* Arcs of `node` to nodes whose name ends in "-tx". */
static uint32_t n_tx_arcs(const char *node)
{
	int n = graph_node_index(g, node);
	ck_assert_int_ge(n, 0);
	uint32_t count = 0;
	for (uint16_t k = 0; k < graph_node_n_next(g, (uint32_t)n); k++) {
		const char *name = graph_node_reg(g, (uint32_t)graph_node_next(g, (uint32_t)n, k))->name;
		size_t len = strlen(name);
		count += len > 3 && strcmp(name + len - 3, "-tx") == 0;
	}
	return count;
}

/* A null source recycling 60-byte frames (FRAME_SIZE a poll), cross-
 * connected to dst: after `polls` polls, dst has sent exactly that many
 * (TX-packets, TX-bytes), or dropped them all when `dropped`. */
static void expect_tx_through(struct device *src, struct device *dst, uint32_t polls, bool dropped)
{
	ck_assert_int_eq(dev_set_xconnect(src, dst), 0);
	ck_assert_int_eq(dev_set_admin_up(dst, true), 0);
	ck_assert_int_eq(dev_set_admin_up(src, true), 0);
	dev_clear_counters(dst);
	uint64_t total = 0;
	for (uint32_t i = 0; i < polls; i++)
		total += graph_main_poll(g);
	ck_assert_int_eq(dev_set_admin_up(src, false), 0);
	run();
	ck_assert_uint_eq(total, (uint64_t)polls * FRAME_SIZE);
	struct dev_counters c;
	dev_counters_get(dst, &c);
	ck_assert_uint_eq(c.tx_packets, (dropped ? 0 : total));
	ck_assert_uint_eq(c.tx_bytes, (dropped ? 0 : total * 60));
	ck_assert_uint_eq(c.tx_dropped, (dropped ? total : 0));
}

static uint32_t notx_tx(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	(void)dev;
	(void)queue;
	buffer_free(bi, n);
	return n;
}

static uint32_t notx_rx(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	(void)dev;
	(void)queue;
	(void)bi;
	(void)n;
	return 0;
}

static void notx_destroy(struct device *dev)
{
	free(dev);
}

/* A driver whose ops name no tx node. */
static const struct device_ops notx_ops = { .rx_burst = notx_rx, .tx_burst = notx_tx, .destroy = notx_destroy };

static struct device *notx_create(const char *name)
{
	struct device *d = aligned_alloc(64, ROUND_UP(sizeof(*d), 64));
	ck_assert_ptr_nonnull(d);
	memset(d, 0, sizeof(*d));
	d->ops = &notx_ops;
	d->n_tx_queues = 1;
	ck_assert_int_eq(dev_register(d, name), 0);
	return d;
}

static uint32_t pcap_frames(const char *path)
{
	char pe[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, pe);
	ck_assert_msg(p, "%s", pe);
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t n = 0;
	while (pcap_next_ex(p, &h, &data) == 1) {
		ck_assert_uint_eq(h->caplen, 60);
		n++;
	}
	pcap_close(p);
	return n;
}

/* Interfaces made while the graph runs: the first of each driver adds an
 * arc from interface-output and from sched-egress to the tx node its ops
 * name (the next reuses it), and packets sent to each reach its tx; an
 * interface whose ops name no tx node gets none, and what is sent to it
 * is dropped as "no tx node". */
START_TEST(tx_arcs_at_run_time)
{
	const char *senders[] = { "interface-output", "sched-egress" };
	for (uint32_t i = 0; i < 2; i++)
		ck_assert_uint_eq(n_tx_arcs(senders[i]), 0);
	const char *recycle[] = { "rx-recycle", "rx-size", "60" };
	struct device *src = create("src", "null", recycle, 3);
	for (uint32_t i = 0; i < 2; i++) {
		ck_assert_int_gt(arc_to(senders[i], "null-tx"), 0);
		ck_assert_int_lt(arc_to(senders[i], "pcap-tx"), 0);
		ck_assert_uint_eq(n_tx_arcs(senders[i]), 1);
	}
	struct device *n1 = create("n1", "null", NULL, 0);
	ck_assert_uint_eq(n_tx_arcs("interface-output"), 1); /* the same arc */
	expect_tx_through(src, n1, 3, false);

	const char *tx_words[] = { "tx-file", out_path };
	struct device *p1 = create("p1", "pcap", tx_words, 2);
	for (uint32_t i = 0; i < 2; i++) {
		ck_assert_int_gt(arc_to(senders[i], "pcap-tx"), 0);
		ck_assert_uint_eq(n_tx_arcs(senders[i]), 2);
	}
	expect_tx_through(src, p1, 2, false);
	ck_assert_int_eq(dev_set_admin_up(p1, false), 0); /* flushes the file */
	ck_assert_uint_eq(pcap_frames(out_path), 2 * FRAME_SIZE);

	struct device *x = notx_create("x");
	ck_assert_uint_eq(n_tx_arcs("interface-output"), 2);
	expect_tx_through(src, x, 2, true);
	ck_assert_uint_eq(errors_of("interface-output", 2), 2 * FRAME_SIZE); /* no tx node */

	/* A deleted interface's index, taken by an interface of another
	 * driver, leads to that driver's tx node. */
	uint32_t index = n1->index;
	dev_delete(n1);
	struct device *p2 = create("p2", "pcap", tx_words, 2);
	ck_assert_uint_eq(p2->index, index);
	expect_tx_through(src, p2, 1, false);
	ck_assert_uint_eq(errors_of("interface-output", 2), 2 * FRAME_SIZE);
}
END_TEST

/* Start-up order: interfaces made before the graph is attached get their
 * arcs when it is; detached, nothing leads to a tx node any more. */
START_TEST(tx_arcs_attach_after_create)
{
	dev_graph_detach(g);
	ck_assert_ptr_null(dev_graph());
	const char *recycle[] = { "rx-recycle", "rx-size", "60" };
	struct device *src = create("src", "null", recycle, 3);
	const char *tx_words[] = { "tx-file", out_path };
	struct device *p1 = create("p1", "pcap", tx_words, 2);
	ck_assert_uint_eq(n_tx_arcs("interface-output"), 0);
	expect_tx_through(src, p1, 1, true);
	ck_assert_uint_eq(errors_of("interface-output", 2), FRAME_SIZE);

	ck_assert_msg(dev_graph_attach(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_eq(dev_graph(), g);
	ck_assert_int_gt(arc_to("interface-output", "null-tx"), 0);
	ck_assert_int_gt(arc_to("sched-egress", "pcap-tx"), 0);
	expect_tx_through(src, p1, 2, false);
	ck_assert_uint_eq(errors_of("interface-output", 2), FRAME_SIZE);
	ck_assert_int_eq(dev_set_admin_up(p1, false), 0); /* flushes the file */
	ck_assert_uint_eq(pcap_frames(out_path), 2 * FRAME_SIZE);
}
END_TEST

static Suite *drivers_suite(void)
{
	Suite *s = suite_create("drivers");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, pcap_xconnect_exact_bytes);
	tcase_add_test(tc, pcapng_three_loops);
	tcase_add_test(tc, pcap_rx_pace_recorded);
	tcase_add_test(tc, capture_drop);
	tcase_add_test(tc, capture_rx_filtered);
	tcase_add_test(tc, capture_drop_by_error);
	tcase_add_test(tc, l3_counts_and_drops);
	tcase_add_test(tc, admin_down_drops_counted);
	tcase_add_test(tc, null_rx_nothing_tx_frees);
	tcase_add_test(tc, null_recycle_xconnect);
	tcase_add_test(tc, null_rx_burst_frames);
	tcase_add_test(tc, cli_rx_burst);
	tcase_add_test(tc, cli_mtu_mac);
	tcase_add_test(tc, table_and_placement);
	tcase_add_test(tc, create_errors);
	tcase_add_test(tc, af_packet_rx_ring);
	tcase_add_test(tc, trace_records);
	suite_add_tcase(s, tc);
	tc = tcase_create("tx-arcs");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, tx_arcs_at_run_time);
	tcase_add_test(tc, tx_arcs_attach_after_create);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(drivers_suite());
}
