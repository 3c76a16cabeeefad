/* The IPv6 forwarding path's four-at-a-time loops (ip6-input's fast path,
 * ip6-lookup's run of one adjacency, ip6-rewrite's fast rewrite,
 * ethernet-input's IPv6 loop) with exact bytes out: bursts where every
 * packet is the common case, and bursts where packets that are not (hop
 * limit 1, an extension header, a packet to sluice, Ethernet padding, no
 * route, another next hop) sit among them at every position of a group of
 * four, so that each loop falls back to its per-packet path mid-frame.
 * And `pcap capture drop` of IPv6 packets dropped in the middle of such a
 * burst: the file holds each whole frame as it came in.
 *
 *   host A 2001:db8:1::2 -- a 2001:db8:1::1/64 [sluice] b 2001:db8:2::1/64 -- R 2001:db8:2::2
 *   2001:db8:9::/48 via R; 2001:db8:2::3 (C) a static neighbour on b too
 */
#include <arpa/inet.h>
#include <check.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/capture.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_dad.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_route.h"
#include "tests/check_run.h"

static struct graph *g;
#include "tests/l3_harness.h"

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0b };
static const uint8_t mac_ha[6] = { 0x02, 0xaa, 0, 0, 0, 0x01 };
static const uint8_t mac_r[6] = { 0x02, 0xbb, 0, 0, 0, 0x02 };
static const uint8_t mac_c[6] = { 0x02, 0xcc, 0, 0, 0, 0x03 };
static struct device *dev_a, *dev_b;
static char err[256];

static void a6(struct in6_addr *out, const char *s)
{
	ck_assert_int_eq(inet_pton(AF_INET6, s, out), 1);
}

static void setup(void)
{
	ip6_dad_transmits = 0; /* no probes among the frames counted */
	memset(ip6_dad_ifs, 0, sizeof(ip6_dad_ifs));
	l3_graph_up(4096, err, sizeof(err));
	dev_a = tdev_create("a", mac_a);
	dev_b = tdev_create("b", mac_b);
	struct in6_addr x;
	a6(&x, "2001:db8:1::1");
	ck_assert_msg(ip6_if_addr_add(dev_a->index, &x, 64, err, sizeof(err)) == 0, "%s", err);
	a6(&x, "2001:db8:2::1");
	ck_assert_msg(ip6_if_addr_add(dev_b->index, &x, 64, err, sizeof(err)) == 0, "%s", err);
	a6(&x, "2001:db8:1::2");
	ck_assert_msg(ip6_nbr_set(dev_a->index, &x, mac_ha, true, err, sizeof(err)) == 0, "%s", err);
	a6(&x, "2001:db8:2::3");
	ck_assert_msg(ip6_nbr_set(dev_b->index, &x, mac_c, true, err, sizeof(err)) == 0, "%s", err);
	struct in6_addr nh, p;
	a6(&nh, "2001:db8:2::2");
	ck_assert_msg(ip6_nbr_set(dev_b->index, &nh, mac_r, true, err, sizeof(err)) == 0, "%s", err);
	a6(&p, "2001:db8:9::");
	ck_assert_msg(ip6_route_add(&p, 48, &nh, DEV_INDEX_INVALID, err, sizeof(err)) == 0, "%s", err);
	poll_n(2);
	n_tx = 0;
}

/* Neighbours first: they hold references to the interfaces. */
static void ip6_free(void)
{
	ip6_nbr_flush(DEV_INDEX_INVALID, NULL, 0);
	ip6_main_free();
}

static void teardown(void)
{
	l3_graph_down(ip6_free);
}

/* ---- packets ---- */

enum kind {
	FWD,     /* UDP from A to 2001:db8:9::N via R: forwarded, hop limit - 1 */
	FWD_C,   /* UDP from A to C (another next hop on b) */
	PADDED,  /* FWD with 8 bytes of Ethernet padding: trimmed */
	EXT,     /* FWD behind a Destination Options header (the walk) */
	HLIM1,   /* FWD with hop limit 1: Time Exceeded to A */
	LOCAL,   /* UDP to a's address: ip6-local, dropped (no service) */
	NOROUTE, /* to 2001:db8:99::1: Destination Unreachable to A */
};

struct pkt {
	uint8_t in[128], out[128];
	uint32_t in_len, out_len;
	const struct device *out_dev; /* NULL: nothing forwarded as it came */
};

static void build(struct pkt *k, enum kind kind, uint32_t n)
{
	uint8_t *p = k->in;
	memset(k, 0, sizeof(*k));
	memcpy(p, mac_a, 6);
	memcpy(p + 6, mac_ha, 6);
	p[12] = 0x86, p[13] = 0xdd;
	uint8_t *ip = p + 14;
	uint32_t ext = kind == EXT ? 8 : 0, plen = ext + 16;
	ip[0] = 0x60, ip[1] = (uint8_t)n; /* a flow label that differs per packet */
	ip[5] = (uint8_t)plen;
	ip[6] = kind == EXT ? 60 : 17;
	ip[7] = kind == HLIM1 ? 1 : (uint8_t)(64 - n % 32);
	struct in6_addr s, d;
	a6(&s, "2001:db8:1::2");
	a6(&d, kind == FWD_C ? "2001:db8:2::3" : kind == LOCAL ? "2001:db8:1::1" : kind == NOROUTE ? "2001:db8:99::1"
										       : "2001:db8:9::");
	if (kind != FWD_C && kind != LOCAL && kind != NOROUTE)
		d.s6_addr[15] = (uint8_t)(n + 1);
	memcpy(ip + 8, &s, 16);
	memcpy(ip + 24, &d, 16);
	uint8_t *l4 = ip + 40;
	if (ext) {
		l4[0] = 17, l4[1] = 0, l4[2] = 1, l4[3] = 4; /* PadN */
		l4 += 8;
	}
	for (uint32_t i = 0; i < 16; i++)
		l4[i] = (uint8_t)(n * 16 + i);
	k->in_len = 14 + 40 + plen + (kind == PADDED ? 8 : 0);
	if (kind == HLIM1 || kind == LOCAL || kind == NOROUTE)
		return;
	k->out_len = 14 + 40 + plen;
	memcpy(k->out, k->in, k->out_len);
	memcpy(k->out, kind == FWD_C ? mac_c : mac_r, 6);
	memcpy(k->out + 6, mac_b, 6);
	k->out[14 + 7] = (uint8_t)(ip[7] - 1);
	k->out_dev = dev_b;
}

/* Send kinds[0..n) as one burst; every forwarded packet leaves b exactly
 * as built, in order, and the others as their kinds say. */
static void burst(const enum kind *kinds, uint32_t n)
{
	static struct pkt k[64];
	uint32_t n_fwd = 0, n_icmp = 0;
	for (uint32_t i = 0; i < n; i++) {
		build(&k[i], kinds[i], i);
		inject(dev_a, k[i].in, k[i].in_len);
		n_fwd += k[i].out_dev != NULL;
		n_icmp += kinds[i] == HLIM1 || kinds[i] == NOROUTE;
	}
	poll_n(3);
	ck_assert_uint_eq(n_tx, n_fwd + n_icmp);
	uint32_t seen_b = 0, seen_a = 0;
	for (uint32_t t = 0; t < n_tx; t++) {
		if (txs[t].if_index == dev_a->index) {
			/* An ICMPv6 error to A: Time Exceeded (3) or Destination
			 * Unreachable (1), from a's address. */
			const uint8_t *ip = txs[t].bytes + 14;
			ck_assert_int_eq(memcmp(txs[t].bytes, mac_ha, 6), 0);
			ck_assert_uint_eq(ip[6], 58);
			ck_assert(ip[40] == 3 || ip[40] == 1);
			seen_a++;
			continue;
		}
		while (seen_b < n && !k[seen_b].out_dev)
			seen_b++;
		ck_assert_uint_lt(seen_b, n);
		expect_tx(t, dev_b, k[seen_b].out, k[seen_b].out_len);
		seen_b++;
	}
	ck_assert_uint_eq(seen_a, n_icmp);
	n_tx = 0;
}

START_TEST(all_common)
{
	enum kind kinds[64];
	for (uint32_t i = 0; i < 64; i++)
		kinds[i] = FWD;
	burst(kinds, 64);
	burst(kinds, 13); /* n % 4 left for the per-packet loops */
}
END_TEST

/* One packet of each uncommon kind at position _i % 4 of a group among
 * common ones, and the next group common again. */
START_TEST(one_uncommon)
{
	static const enum kind odd[] = { FWD_C, PADDED, EXT, HLIM1, LOCAL, NOROUTE };
	for (uint32_t o = 0; o < sizeof(odd) / sizeof(odd[0]); o++) {
		enum kind kinds[16];
		for (uint32_t i = 0; i < 16; i++)
			kinds[i] = FWD;
		kinds[4 + _i] = odd[o];
		burst(kinds, 16);
	}
}
END_TEST

/* The frame's first packet uncommon: the run loops start on the per-packet
 * path; then all of them mixed. */
START_TEST(mixed)
{
	static const enum kind first[] = { NOROUTE, FWD_C, HLIM1, LOCAL };
	for (uint32_t f = 0; f < 4; f++) {
		enum kind kinds[12];
		for (uint32_t i = 0; i < 12; i++)
			kinds[i] = FWD;
		kinds[0] = first[f];
		burst(kinds, 12);
	}
	static const enum kind all[] = { FWD, PADDED, FWD_C, FWD, EXT, FWD, FWD, HLIM1, FWD, LOCAL, FWD, FWD,
					 NOROUTE, FWD, FWD, FWD, PADDED, PADDED, PADDED, PADDED, FWD_C, FWD_C };
	burst(all, sizeof(all) / sizeof(all[0]));
}
END_TEST

/* Drops captured from a burst (ip6-local's "protocol not handled", the
 * packets to sluice) are the frames sent, Ethernet header included,
 * whichever loop dropped them. */
START_TEST(capture_drops)
{
	char dir[] = "/tmp/ip6-burst-XXXXXX", path[64];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/drop.pcap", dir);
	struct dev_capture_params p = { .what = DEV_CAPTURE_DROP, .if_index = DEV_INDEX_INVALID, .max = 3,
					.path = path };
	ck_assert_msg(dev_capture_start(&p, err, sizeof(err)) == 0, "%s", err);
	graph_set_drop_tap(g, dev_capture_drop_tap, NULL);
	static const enum kind kinds[] = { FWD, LOCAL, FWD, FWD, FWD, FWD, LOCAL, FWD, LOCAL };
	static struct pkt k[9];
	for (uint32_t i = 0; i < 9; i++) {
		build(&k[i], kinds[i], i);
		inject(dev_a, k[i].in, k[i].in_len);
	}
	poll_n(3);
	uint64_t n = 0;
	char got_path[256];
	ck_assert_int_eq(dev_capture_stop(&n, got_path, sizeof(got_path)), 0);
	graph_set_drop_tap(g, NULL, NULL);
	ck_assert_uint_eq(n, 3);
	char pe[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, pe);
	ck_assert_msg(pc, "%s", pe);
	ck_assert_int_eq(pcap_datalink(pc), DLT_EN10MB);
	struct pcap_pkthdr *h;
	const u_char *data;
	/* Each of the three once, in any order: the last one took ip6-input's
	 * per-packet path straight to ip6-local, the others ip6-lookup. */
	const uint32_t want[] = { 1, 6, 8 };
	bool seen[3] = { false };
	uint32_t got = 0;
	while (pcap_next_ex(pc, &h, &data) == 1) {
		ck_assert_uint_lt(got, 3);
		bool found = false;
		for (uint32_t w = 0; w < 3 && !found; w++) {
			const struct pkt *x = &k[want[w]];
			found = !seen[w] && h->caplen == x->in_len && !memcmp(data, x->in, x->in_len);
			seen[w] |= found;
		}
		ck_assert_msg(found, "captured drop %u (%u bytes) is not a packet to sluice as it was sent", got,
			      h->caplen);
		got++;
	}
	pcap_close(pc);
	ck_assert_uint_eq(got, 3);
	unlink(path);
	rmdir(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ip6_burst");
	TCase *tc = tcase_create("burst");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, all_common);
	tcase_add_loop_test(tc, one_uncommon, 0, 4);
	tcase_add_test(tc, mixed);
	tcase_add_test(tc, capture_drops);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
