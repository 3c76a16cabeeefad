/* The IPv4 nodes end to end, through the whole registered graph: a test
 * input node hands exact frames to ethernet-input on interface a or b, and
 * a test driver under both interfaces records the exact frames
 * interface-output gives it. Checksums of expected packets are computed
 * here with a plain reference sum, independent of nodes/ip4/ip4.h.
 *
 *   host A 10.1.0.2 (02:aa:..) -- a 10.1.0.1/24 [sluice] b 10.2.0.1/24 -- host B 10.2.0.2 (02:bb:..)
 *
 * Every test ends with no buffer in use. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bytes.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/ip4/ip4.h"
#include "nodes/ip4/ip4_fib.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"
#include "tests/check_run.h"
#include "tests/pkt_build.h"

static struct graph *g;
#include "tests/l3_harness.h"

/* ---- addresses and packets ---- */

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a }; /* sluice's a */
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0b }; /* sluice's b */
static const uint8_t mac_ha[6] = { 0x02, 0xaa, 0, 0, 0, 0x01 }; /* host A */
static const uint8_t mac_hb[6] = { 0x02, 0xbb, 0, 0, 0, 0x01 }; /* host B */
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
#define IP_A1 0x0a010001u /* 10.1.0.1 */
#define IP_HA 0x0a010002u /* 10.1.0.2 */
#define IP_B1 0x0a020001u /* 10.2.0.1 */
#define IP_HB 0x0a020002u /* 10.2.0.2 */

static struct device *dev_a, *dev_b;
static char err[256];

/* An IPv4 header (20 bytes, host-order addresses) at p with its checksum. */
static void iphdr(uint8_t *p, uint32_t src, uint32_t dst, uint8_t ttl, uint8_t proto, uint16_t total, uint16_t frag,
		  uint8_t tos, uint16_t id)
{
	p[0] = 0x45;
	p[1] = tos;
	put16(p + 2, total);
	put16(p + 4, id);
	put16(p + 6, frag);
	p[8] = ttl;
	p[9] = proto;
	put16(p + 10, 0);
	put32(p + 12, src);
	put32(p + 16, dst);
	put16(p + 10, ref_csum(p, 20));
}

/* Ethernet + IPv4 + payload of `payload` bytes (UDP-ish pattern). */
static uint32_t udp_frame(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], uint32_t src, uint32_t dst,
			  uint8_t ttl, uint32_t payload, uint16_t frag)
{
	uint32_t n = eth(p, dmac, smac, 0x0800);
	iphdr(p + n, src, dst, ttl, 17, (uint16_t)(20 + payload), frag, 0, 0x1234);
	for (uint32_t i = 0; i < payload; i++)
		p[n + 20 + i] = (uint8_t)(i * 7 + 1);
	return n + 20 + payload;
}

/* An echo request (or reply with type 0) with `data` bytes of payload. */
static uint32_t echo_frame(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], uint32_t src, uint32_t dst,
			   uint8_t ttl, uint8_t type, uint16_t id, uint16_t seq, uint32_t data)
{
	uint32_t n = eth(p, dmac, smac, 0x0800);
	iphdr(p + n, src, dst, ttl, 1, (uint16_t)(20 + 8 + data), 0x4000, 0, 0x4321);
	uint8_t *icmp = p + n + 20;
	icmp[0] = type;
	icmp[1] = 0;
	put16(icmp + 2, 0);
	put16(icmp + 4, id);
	put16(icmp + 6, seq);
	for (uint32_t i = 0; i < data; i++)
		icmp[8 + i] = (uint8_t)(0x10 + i);
	put16(icmp + 2, ref_csum(icmp, 8 + data));
	return n + 28 + data;
}

/* Poll (the ip4-neighbor process node runs every millisecond) until n_tx
 * reaches want or a second has passed. */
static void poll_until_tx(uint32_t want)
{
	uint64_t end = time_now_ns() + 1000000000ull;
	while (n_tx < want && time_now_ns() < end) {
		graph_main_poll(g);
		usleep(100);
	}
	poll_n(3);
}

static uint64_t errors_of(const char *node, uint16_t code)
{
	int i = graph_node_index(g, node);
	ck_assert_int_ge(i, 0);
	return graph_node_error_count(g, (uint32_t)i, code);
}

/* ---- fixture ---- */

static void addr(struct device *d, uint32_t a, uint8_t plen)
{
	ck_assert_msg(ip4_if_addr_add(d->index, htonl(a), plen, err, sizeof(err)) == 0, "%s", err);
}

static void setup(void)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 4096;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	txs = calloc(TX_MAX, sizeof(*txs));
	n_tx = n_inq = 0;
	g = graph_create(NULL, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_msg(graph_add_registered(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(dev_graph_attach(g, err, sizeof(err)) == 0, "%s", err);
	dev_a = tdev_create("a", mac_a);
	dev_b = tdev_create("b", mac_b);
	addr(dev_a, IP_A1, 24);
	addr(dev_b, IP_B1, 24);
}

static void teardown(void)
{
	dev_graph_detach(g);
	graph_destroy(g);
	g = NULL;
	ip4_main_free();
	ip4_nbr_resolve_timeout_ns = 3000000000ull;
	ip4_nbr_request_interval_ns = 1000000000ull;
	ip4_nbr_reachable_timeout_ns = 300000000000ull;
	ip4_nbr_clock = NULL;
	dev_delete_all();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_thread_unregister();
	buffer_main_free();
	free(txs);
}

/* Host B answers sluice's request: B is then resolved on b. */
static void resolve_hb(void)
{
	uint8_t f[64];
	uint64_t applied = errors_of("ip4-neighbor", 1);
	uint32_t n = arp_frame(f, mac_b, mac_hb, 2, mac_hb, IP_HB, mac_b, IP_B1, 60);
	inject(dev_b, f, n);
	poll_n(1);
	uint64_t end = time_now_ns() + 1000000000ull;
	while (errors_of("ip4-neighbor", 1) == applied && time_now_ns() < end) {
		graph_main_poll(g);
		usleep(100);
	}
}

/* Host A asks for 10.1.0.1: sluice answers and learns A. */
static void resolve_ha(void)
{
	uint8_t f[64];
	uint64_t applied = errors_of("ip4-neighbor", 1);
	uint32_t n = arp_frame(f, bcast, mac_ha, 1, mac_ha, IP_HA, (const uint8_t[6]){ 0 }, IP_A1, 60);
	inject(dev_a, f, n);
	uint32_t before = n_tx;
	poll_until_tx(before + 1);
	uint64_t end = time_now_ns() + 1000000000ull;
	while (errors_of("ip4-neighbor", 1) == applied && time_now_ns() < end) {
		graph_main_poll(g);
		usleep(100);
	}
	n_tx = before; /* the reply was checked by arp_request_answered */
}

/* ---- checksums ---- */

START_TEST(checksum_examples)
{
	/* A header whose checksum is well known: 0xb861. */
	uint8_t h[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			  0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
	ck_assert_uint_eq(ntohs(ip4_csum(h, 20)), 0xb861);
	put16(h + 10, 0xb861);
	ck_assert(ip4_header_csum_ok((struct ip4_header *)h));
	/* TTL 64 -> 63: the sum drops by 0x0100, the checksum rises by it. */
	ip4_ttl_decrement((struct ip4_header *)h);
	ck_assert_uint_eq(h[8], 0x3f);
	ck_assert_uint_eq(h[10] << 8 | h[11], 0xb961);
	ck_assert(ip4_header_csum_ok((struct ip4_header *)h));
	/* RFC 1624 §4: HC 0xdd2f, m 0x5555 -> m' 0x3285 gives 0x0000 with
	 * eqn. 3 (eqn. 2 would give 0xffff). Order independent: host order
	 * and network order agree. */
	ck_assert_uint_eq(ip4_csum_update16(0xdd2f, 0x5555, 0x3285), 0x0000);
	ck_assert_uint_eq(ip4_csum_update16(htons(0xdd2f), htons(0x5555), htons(0x3285)), 0x0000);
	/* Odd length: the last byte is padded with zero. */
	const uint8_t odd[3] = { 0x12, 0x34, 0x56 };
	ck_assert_uint_eq(ntohs(ip4_csum(odd, 3)), ref_csum(odd, 3));
	/* Incremental equals recomputed, for every TTL and many headers. */
	uint32_t x = 12345;
	for (uint32_t i = 0; i < 20000; i++) {
		for (int k = 0; k < 20; k++) {
			x = x * 1103515245u + 12345u;
			h[k] = (uint8_t)(x >> 16);
		}
		h[0] = 0x45;
		if (h[8] < 2)
			h[8] = 2;
		put16(h + 10, 0);
		put16(h + 10, ref_csum(h, 20));
		ip4_ttl_decrement((struct ip4_header *)h);
		uint16_t inc = (uint16_t)(h[10] << 8 | h[11]);
		put16(h + 10, 0);
		uint16_t full = ref_csum(h, 20);
		/* Equal as one's-complement numbers (0x0000 and 0xffff are both zero). */
		ck_assert_msg(inc == full || (inc == 0xffff && full == 0) || (inc == 0 && full == 0xffff),
			      "incremental %04x full %04x", inc, full);
		put16(h + 10, inc);
		ck_assert(ip4_header_csum_ok((struct ip4_header *)h));
	}
}
END_TEST

/* ---- ethernet-input ---- */

START_TEST(ethernet_l3_dispatch)
{
	uint8_t f[128];
	uint32_t n = udp_frame(f, mac_hb, mac_ha, IP_HA, IP_HB, 64, 30, 0); /* not our MAC */
	inject(dev_a, f, n);
	inject(dev_a, f, n);
	n = eth(f, mac_a, mac_ha, 0x88cc);
	memset(f + n, 0, 50);
	inject(dev_a, f, n + 50); /* LLDP: unknown here (IPv6 goes to ip6-input) */
	poll_n(3);
	ck_assert_uint_eq(errors_of("ethernet-input", 1), 2); /* not for us */
	ck_assert_uint_eq(errors_of("ethernet-input", 2), 1); /* unknown type */
	ck_assert_uint_eq(n_tx, 0);
}
END_TEST

/* One vector that leaves ethernet-input's four-at-a-time run in the
 * middle (an ARP request, another rx interface, a runt) and ends in a tail
 * of three: every frame still goes where it would alone. */
START_TEST(ethernet_mixed_vector)
{
	uint8_t f[128];
	uint32_t n = udp_frame(f, mac_a, mac_ha, IP_HA, IP_A1, 64, 30, 0);
	for (int k = 0; k < 4; k++)
		inject(dev_a, f, n);
	uint8_t a[64];
	uint32_t an = arp_frame(a, bcast, mac_ha, 1, mac_ha, IP_HA, (const uint8_t[6]){ 0 }, IP_A1, 60);
	inject(dev_a, a, an);
	for (int k = 0; k < 3; k++)
		inject(dev_a, f, n);
	uint8_t fb[128];
	uint32_t nb = udp_frame(fb, mac_b, mac_hb, IP_HB, IP_B1, 64, 30, 0);
	inject(dev_b, fb, nb);
	inject(dev_a, f, 10); /* runt */
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("ip4-local", 0), 9);
	ck_assert_uint_eq(errors_of("arp-input", 0), 1); /* answered */
	ck_assert_uint_eq(errors_of("ethernet-input", 0), 1); /* runt */
	ck_assert_uint_eq(n_tx, 1);
}
END_TEST

/* ---- ip4-input ---- */

START_TEST(ip4_input_malformed_counted)
{
	uint8_t f[256], v[256];
	uint32_t n = udp_frame(v, mac_a, mac_ha, IP_HA, IP_A1, 64, 30, 0); /* valid, to us: punted */
	/* code: how many of it */
	static const uint32_t count[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	for (uint32_t c = 0; c < 8; c++) {
		for (uint32_t k = 0; k < count[c]; k++) {
			memcpy(f, v, n);
			uint32_t len = n;
			uint8_t *ip = f + 14;
			switch (c) {
			case 0: len = 14 + 19; break;                         /* too short */
			case 1: ip[0] = 0x65; break;                          /* version 6 */
			case 2: ip[0] = 0x44; break;                          /* IHL 4 */
			case 3: ip[0] = 0x4f; len = 14 + 40; break;           /* 60-byte header, 40-byte frame */
			case 4: put16(ip + 2, (uint16_t)(n - 14 + 1)); break; /* total beyond the frame */
			case 5: put16(ip + 2, 19); break;                     /* total below the header */
			case 6: ip[10] ^= 0x55; break;                        /* checksum */
			case 7: put32(ip + 16, 0xe0000001u); break;           /* 224.0.0.1 */
			}
			if (c == 4 || c == 5 || c == 7) {
				put16(ip + 10, 0);
				put16(ip + 10, ref_csum(ip, 20));
			}
			inject(dev_a, f, len);
		}
	}
	poll_n(3);
	for (uint16_t c = 0; c < 8; c++)
		ck_assert_msg(errors_of("ip4-input", c) == count[c], "ip4-input error %u: %llu, want %u", c,
			      (unsigned long long)errors_of("ip4-input", c), count[c]);
	ck_assert_uint_eq(errors_of("ip4-local", 0), 0);
	/* Valid: a UDP packet to the router, padded to 90 bytes, is punted
	 * (after ip4-input trimmed the padding). */
	memcpy(f, v, n);
	memset(f + n, 0xee, 90 - n);
	inject(dev_a, f, 90);
	poll_n(3);
	ck_assert_uint_eq(errors_of("ip4-local", 0), 1);
	ck_assert_uint_eq(n_tx, 0);
}
END_TEST

/* Unicast IP in a broadcast or multicast frame (ethernet-input flags the
 * frame, ip4-input drops it, RFC 1812 §5.3.4); the same packet in a frame
 * to our MAC is punted. */
START_TEST(ip4_input_l2_group_dropped)
{
	static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	uint8_t f[128];
	uint32_t n = udp_frame(f, bcast, mac_ha, IP_HA, IP_A1, 64, 30, 0);
	inject(dev_a, f, n);
	n = udp_frame(f, mcast, mac_ha, IP_HA, IP_A1, 64, 30, 0);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("ip4-input", 9), 2);
	ck_assert_uint_eq(errors_of("ip4-local", 0), 0);
	n = udp_frame(f, mac_a, mac_ha, IP_HA, IP_A1, 64, 30, 0);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("ip4-input", 9), 2);
	ck_assert_uint_eq(errors_of("ip4-local", 0), 1);
	ck_assert_uint_eq(n_tx, 0);
}
END_TEST

/* ---- arp ---- */

START_TEST(arp_request_answered)
{
	uint8_t f[64], want[64];
	uint32_t n = arp_frame(f, bcast, mac_ha, 1, mac_ha, IP_HA, (const uint8_t[6]){ 0 }, IP_A1, 60);
	inject(dev_a, f, n);
	/* A request for someone else: not answered, not learnt. */
	n = arp_frame(f, bcast, mac_hb, 1, mac_hb, 0x0a010063u, (const uint8_t[6]){ 0 }, 0x0a010064u, 60);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 1);
	/* The reply keeps the request's padding. */
	uint32_t wn = arp_frame(want, mac_ha, mac_a, 2, mac_a, IP_A1, mac_ha, IP_HA, 60);
	expect_tx(0, dev_a, want, wn);
	ck_assert_uint_eq(errors_of("arp-input", 0), 1); /* answered */
	ck_assert_uint_eq(errors_of("arp-input", 2), 1); /* not for us */
	ip4_nbr_lock();
	struct ip4_nbr *nb = ip4_nbr_lookup(dev_a->index, htonl(IP_HA));
	ck_assert_ptr_nonnull(nb);
	ck_assert_int_eq(nb->state, IP4_NBR_REACHABLE);
	ck_assert_mem_eq(nb->mac, mac_ha, 6);
	ck_assert_ptr_null(ip4_nbr_lookup(dev_a->index, htonl(0x0a010063u)));
	ip4_nbr_unlock();
	/* Malformed: too short, not IPv4, bad opcode. */
	n = arp_frame(f, bcast, mac_ha, 1, mac_ha, IP_HA, (const uint8_t[6]){ 0 }, IP_A1, 0);
	inject(dev_a, f, 14 + 20);
	f[14 + 3] = 0x01; /* ptype 0x0801 */
	inject(dev_a, f, n);
	f[14 + 3] = 0x00;
	f[14 + 7] = 9; /* op 9 */
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("arp-input", 3), 1);
	ck_assert_uint_eq(errors_of("arp-input", 4), 1);
	ck_assert_uint_eq(errors_of("arp-input", 5), 1);
	ck_assert_uint_eq(n_tx, 1);
}
END_TEST

/* ---- forwarding with ARP resolution ---- */

START_TEST(forward_resolves_and_rewrites)
{
	uint8_t f[256], want[256];
	resolve_ha();
	/* A -> B: B unknown, so held and a request goes out of b. */
	uint32_t n = udp_frame(f, mac_a, mac_ha, IP_HA, IP_HB, 64, 50, 0x4000);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 1);
	uint32_t wn = arp_frame(want, bcast, mac_b, 1, mac_b, IP_B1, (const uint8_t[6]){ 0 }, IP_HB, 60);
	expect_tx(0, dev_b, want, wn);
	ck_assert_uint_eq(errors_of("ip4-arp", 0), 1); /* held */
	ck_assert_uint_eq(errors_of("ip4-arp", 1), 1); /* request sent */
	/* B answers: the held packet leaves on b, TTL 63, checksum +0x0100. */
	resolve_hb();
	poll_until_tx(2);
	ck_assert_uint_eq(n_tx, 2);
	memcpy(want, f, n);
	memcpy(want, mac_hb, 6);
	memcpy(want + 6, mac_b, 6);
	want[14 + 8] = 63;
	put16(want + 14 + 10, 0);
	put16(want + 14 + 10, ref_csum(want + 14, 20));
	expect_tx(1, dev_b, want, n);
	/* Now resolved: the next one goes straight through, as does B -> A. */
	inject(dev_a, f, n);
	uint8_t r[256], rwant[256];
	uint32_t rn = udp_frame(r, mac_b, mac_hb, IP_HB, IP_HA, 9, 20, 0);
	inject(dev_b, r, rn);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 4);
	expect_tx(2, dev_b, want, n);
	udp_frame(rwant, mac_ha, mac_a, IP_HB, IP_HA, 8, 20, 0);
	expect_tx(3, dev_a, rwant, rn);
	ck_assert_uint_eq(errors_of("ip4-arp", 0), 1);
	/* A static route via B, resolved from the start. */
	ck_assert_msg(ip4_route_add(htonl(0xc0a80000u), 16, htonl(IP_HB), DEV_INDEX_INVALID, err, sizeof(err)) == 0,
		      "%s", err);
	n = udp_frame(f, mac_a, mac_ha, IP_HA, 0xc0a80105u, 2, 10, 0);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 5);
	udp_frame(want, mac_hb, mac_b, IP_HA, 0xc0a80105u, 1, 10, 0);
	expect_tx(4, dev_b, want, n);
	/* Padding trimmed on the way: a 60-byte frame of a 28-byte packet
	 * leaves as 42 bytes. */
	n = udp_frame(f, mac_a, mac_ha, IP_HA, IP_HB, 64, 8, 0);
	memset(f + n, 0, 60 - n);
	inject(dev_a, f, 60);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 6);
	ck_assert_uint_eq(txs[5].len, 42);
	/* No route: dropped under ip4-lookup. */
	n = udp_frame(f, mac_a, mac_ha, IP_HA, 0x08080808u, 64, 8, 0);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("ip4-lookup", 0), 1);
	ck_assert_uint_eq(n_tx, 6);
}
END_TEST

START_TEST(arp_hold_bounded_and_timeout)
{
	uint8_t f[256];
	ip4_nbr_resolve_timeout_ns = 30000000ull; /* 30 ms */
	uint32_t n = udp_frame(f, mac_a, mac_ha, IP_HA, 0x0a020009u, 64, 50, 0);
	for (int i = 0; i < 6; i++)
		inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("ip4-arp", 0), IP4_NBR_HOLD); /* held */
	ck_assert_uint_eq(errors_of("ip4-arp", 1), 1);            /* one request */
	ck_assert_uint_eq(errors_of("ip4-arp", 2), 6 - IP4_NBR_HOLD); /* hold full */
	ck_assert_uint_eq(ip4_nbr_count(), 1);
	/* Subnet broadcast: never resolved. */
	n = udp_frame(f, mac_a, mac_ha, IP_HA, 0x0a0200ffu, 64, 10, 0);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("ip4-arp", 4), 1);
	uint64_t end = time_now_ns() + 1000000000ull;
	while (errors_of("ip4-neighbor", 0) < IP4_NBR_HOLD && time_now_ns() < end) {
		graph_main_poll(g);
		usleep(1000);
	}
	ck_assert_uint_eq(errors_of("ip4-neighbor", 0), IP4_NBR_HOLD); /* timed out */
	ck_assert_uint_eq(ip4_nbr_count(), 0);
	ck_assert_uint_eq(n_tx, 1); /* the request */
}
END_TEST

/* ---- ICMP ---- */

START_TEST(echo_reply_exact)
{
	uint8_t f[256], want[256];
	resolve_ha();
	uint32_t n = echo_frame(f, mac_a, mac_ha, IP_HA, IP_A1, 64, 8, 0x77, 3, 56);
	inject(dev_a, f, n);
	/* The address of the other interface answers too. */
	uint32_t n2 = echo_frame(f + 128, mac_a, mac_ha, IP_HA, IP_B1, 5, 8, 0x77, 4, 10);
	inject(dev_a, f + 128, n2);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 2);
	uint32_t wn = echo_frame(want, mac_ha, mac_a, IP_A1, IP_HA, 64, 0, 0x77, 3, 56);
	expect_tx(0, dev_a, want, wn);
	wn = echo_frame(want, mac_ha, mac_a, IP_B1, IP_HA, 64, 0, 0x77, 4, 10);
	expect_tx(1, dev_a, want, wn);
	ck_assert_uint_eq(errors_of("icmp4-echo", 0), 2);
	/* Bad ICMP checksum: dropped and counted; other ICMP punted. */
	n = echo_frame(f, mac_a, mac_ha, IP_HA, IP_A1, 64, 8, 0x77, 5, 20);
	f[14 + 20 + 8] ^= 1;
	inject(dev_a, f, n);
	n = echo_frame(f, mac_a, mac_ha, IP_HA, IP_A1, 64, 13, 0x77, 6, 20);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("icmp4-echo", 1), 1);
	ck_assert_uint_eq(errors_of("ip4-local", 1), 1);
	ck_assert_uint_eq(n_tx, 2);
}
END_TEST

/* A request in two buffers split at an odd byte of the ICMP message (the
 * chained checksum's hard case), to an interface whose MTU takes the
 * reply: answered, the reply chained and byte-exact. A flipped byte in
 * the second buffer: the checksum catches it. */
START_TEST(echo_reply_chained)
{
	static uint8_t f[3100], want[3100];
	resolve_ha();
	dev_a->mtu = 9000;
	for (int bad = 0; bad < 2; bad++) {
		uint32_t n = echo_frame(f, mac_a, mac_ha, IP_HA, IP_A1, 64, 8, 0x99, 7, 3000);
		if (bad)
			f[2500] ^= 0x40;
		uint32_t split = 14 + 20 + 8 + 1001;
		uint32_t bi = buffer_from_bytes(f, split, -1), b2 = buffer_from_bytes(f + split, n - split, -1);
		ck_assert_uint_ne(bi, BUFFER_INVALID);
		ck_assert_uint_ne(b2, BUFFER_INVALID);
		struct buffer *b = buffer_get(bi);
		b->flags |= BUFFER_F_NEXT_PRESENT;
		b->next_buffer = b2;
		b->total_length_not_including_first = n - split;
		b->rx_if = dev_a->index;
		inq[n_inq++] = bi;
		poll_n(3);
	}
	ck_assert_uint_eq(n_tx, 1);
	uint32_t wn = echo_frame(want, mac_ha, mac_a, IP_A1, IP_HA, 64, 0, 0x99, 7, 3000);
	ck_assert_uint_eq(txs[0].len, wn);
	ck_assert_int_eq(memcmp(txs[0].bytes, want, wn), 0);
	ck_assert_uint_eq(errors_of("icmp4-echo", 0), 1);
	ck_assert_uint_eq(errors_of("icmp4-echo", 1), 1);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
}
END_TEST

/* The time-exceeded sluice sends about the frame f (n bytes, from A). */
static uint32_t icmp_error_want(uint8_t *want, const uint8_t *f, uint32_t n, uint8_t type, uint8_t code,
				uint16_t mtu)
{
	uint32_t quote = MIN(n - 14, 28u);
	uint32_t w = eth(want, mac_ha, mac_a, 0x0800);
	iphdr(want + w, IP_A1, IP_HA, 64, 1, (uint16_t)(28 + quote), 0, 0xc0, 0);
	uint8_t *icmp = want + w + 20;
	memset(icmp, 0, 8);
	icmp[0] = type;
	icmp[1] = code;
	put16(icmp + 6, mtu);
	memcpy(icmp + 8, f + 14, quote);
	put16(icmp + 2, ref_csum(icmp, 8 + quote));
	return w + 28 + quote;
}

START_TEST(time_exceeded_exact_and_rate_limited)
{
	uint8_t f[256], want[256];
	resolve_ha();
	resolve_hb();
	n_tx = 0;
	uint32_t n = udp_frame(f, mac_a, mac_ha, IP_HA, IP_HB, 1, 40, 0);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 1);
	uint32_t wn = icmp_error_want(want, f, n, 11, 0, 0);
	expect_tx(0, dev_a, want, wn);
	ck_assert_uint_eq(errors_of("ip4-rewrite", 0), 1);
	/* TTL 0 too; to the router itself TTL 1 is fine (answered). */
	n = udp_frame(f, mac_a, mac_ha, IP_HA, IP_HB, 0, 40, 0);
	inject(dev_a, f, n);
	uint32_t en = echo_frame(f + 128, mac_a, mac_ha, IP_HA, IP_A1, 1, 8, 1, 1, 8);
	inject(dev_a, f + 128, en);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 3);
	ck_assert_uint_eq(errors_of("ip4-rewrite", 0), 2);
	ck_assert_uint_eq(errors_of("icmp4-echo", 0), 1);
	/* The bucket held 10 and 2 are spent: of 15 more, 8 are answered
	 * (refill within the burst is far below one token: 10 ms each). */
	n = udp_frame(f, mac_a, mac_ha, IP_HA, IP_HB, 1, 40, 0);
	for (int i = 0; i < 15; i++)
		inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("ip4-rewrite", 0), 10);
	ck_assert_uint_eq(errors_of("ip4-rewrite", 2), 7); /* rate-limited */
	ck_assert_uint_eq(n_tx, 3 + 8);
	/* Never about an ICMP error (checked before the bucket). */
	n = echo_frame(f, mac_a, mac_ha, IP_HA, IP_HB, 1, 3, 0, 0, 20);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("ip4-rewrite", 3), 1); /* not allowed */
	ck_assert_uint_eq(n_tx, 11);
}
END_TEST

START_TEST(frag_needed_for_df)
{
	uint8_t f[1400], want[256];
	resolve_ha();
	resolve_hb();
	n_tx = 0;
	dev_b->mtu = 1000;
	uint32_t n = udp_frame(f, mac_a, mac_ha, IP_HA, IP_HB, 64, 1200 - 20, 0x4000);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 1);
	uint32_t wn = icmp_error_want(want, f, n, 3, 4, 1000);
	expect_tx(0, dev_a, want, wn);
	ck_assert_uint_eq(errors_of("ip4-rewrite", 1), 1);
	/* Without DF: dropped (no fragmentation). Exactly the MTU: sent. */
	n = udp_frame(f, mac_a, mac_ha, IP_HA, IP_HB, 64, 1200 - 20, 0);
	inject(dev_a, f, n);
	n = udp_frame(f, mac_a, mac_ha, IP_HA, IP_HB, 64, 1000 - 20, 0x4000);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("ip4-rewrite", 4), 1);
	ck_assert_uint_eq(n_tx, 2);
	ck_assert_uint_eq(txs[1].if_index, dev_b->index);
	ck_assert_uint_eq(txs[1].len, 14 + 1000);
}
END_TEST


/* ---- ECMP and the route kinds ---- */

/* Buckets of LB adjacency lb_adj holding adjacency adj. */
static uint32_t buckets_of(const struct ip4_fib *fib, uint32_t lb_adj, uint32_t adj, uint32_t *n_buckets)
{
	const struct ip4_adj *a = ip4_adj_get(fib, lb_adj);
	uint32_t n = 0;
	*n_buckets = a->next_hop + 1;
	for (uint32_t k = 0; k < *n_buckets; k++)
		n += ip4_lb_of(fib, a)->buckets[k] == adj;
	return n;
}

/* Shares exact by weight; an update keeps every flow of the paths that
 * stay; a growing table moves no flow. On a FIB of its own. */
START_TEST(lb_buckets_by_weight)
{
	struct ip4_fib *fib = ip4_fib_create(NULL, err, sizeof(err));
	ck_assert_msg(fib, "%s", err);
	int x = ip4_adj_add(fib, IP4_ADJ_REWRITE, 0, 1), y = ip4_adj_add(fib, IP4_ADJ_REWRITE, 0, 2);
	int z = ip4_adj_add(fib, IP4_ADJ_REWRITE, 1, 3);
	ck_assert(x > 0 && y > 0 && z > 0);
	uint32_t X = (uint32_t)x, Y = (uint32_t)y, Z = (uint32_t)z, nb;
	/* 1:3 -> 4 and 12 of 16 */
	ip4_adj_add(fib, IP4_ADJ_REWRITE, 0, 1), ip4_adj_add(fib, IP4_ADJ_REWRITE, 0, 2);
	int lb = ip4_lb_create(fib, (struct ip4_lb_path[]){ { X, 1 }, { Y, 3 } }, 2);
	ck_assert_int_gt(lb, 0);
	ck_assert_uint_eq(buckets_of(fib, (uint32_t)lb, X, &nb), 4);
	ck_assert_uint_eq(buckets_of(fib, (uint32_t)lb, Y, &nb), 12);
	ck_assert_uint_eq(nb, 16);
	ck_assert_int_eq(ip4_adj_release(fib, (uint32_t)lb), 0);
	ck_assert_uint_eq(ip4_adj_get(fib, X)->n_refs, 1); /* the LB's went with it */
	/* three equal paths: 64 buckets, 22/21/21 */
	ip4_adj_add(fib, IP4_ADJ_REWRITE, 0, 1), ip4_adj_add(fib, IP4_ADJ_REWRITE, 0, 2);
	ip4_adj_add(fib, IP4_ADJ_REWRITE, 1, 3);
	lb = ip4_lb_create(fib, (struct ip4_lb_path[]){ { X, 1 }, { Y, 1 }, { Z, 1 } }, 3);
	ck_assert_int_gt(lb, 0);
	ck_assert_uint_eq(buckets_of(fib, (uint32_t)lb, X, &nb), 22);
	ck_assert_uint_eq(buckets_of(fib, (uint32_t)lb, Y, &nb), 21);
	ck_assert_uint_eq(buckets_of(fib, (uint32_t)lb, Z, &nb), 21);
	ck_assert_uint_eq(nb, 64);
	/* Y removed: X and Z keep every bucket they had, Y's are shared out */
	uint32_t before[IP4_LB_MAX_BUCKETS];
	memcpy(before, ip4_lb_of(fib, ip4_adj_get(fib, (uint32_t)lb))->buckets, sizeof(before));
	ip4_adj_add(fib, IP4_ADJ_REWRITE, 0, 1), ip4_adj_add(fib, IP4_ADJ_REWRITE, 1, 3);
	ck_assert_int_eq(ip4_lb_update(fib, (uint32_t)lb, (struct ip4_lb_path[]){ { X, 1 }, { Z, 1 } }, 2), 0);
	const uint32_t *after = ip4_lb_of(fib, ip4_adj_get(fib, (uint32_t)lb))->buckets;
	for (uint32_t k = 0; k < 64; k++)
		if (before[k] != Y)
			ck_assert_uint_eq(after[k], before[k]);
	ck_assert_uint_eq(buckets_of(fib, (uint32_t)lb, X, &nb), 32);
	ck_assert_uint_eq(buckets_of(fib, (uint32_t)lb, Z, &nb), 32);
	ck_assert_uint_eq(nb, 64); /* never shrinks */
	ck_assert_uint_eq(ip4_adj_get(fib, Y)->n_refs, 1);
	ck_assert_int_eq(ip4_adj_release(fib, (uint32_t)lb), 0);
	/* 16 buckets 1:1 grown to 1:2 (64: 21/43): Y keeps all its flows */
	ip4_adj_add(fib, IP4_ADJ_REWRITE, 0, 1), ip4_adj_add(fib, IP4_ADJ_REWRITE, 0, 2);
	lb = ip4_lb_create(fib, (struct ip4_lb_path[]){ { X, 1 }, { Y, 1 } }, 2);
	memcpy(before, ip4_lb_of(fib, ip4_adj_get(fib, (uint32_t)lb))->buckets, sizeof(before));
	ip4_adj_add(fib, IP4_ADJ_REWRITE, 0, 1), ip4_adj_add(fib, IP4_ADJ_REWRITE, 0, 2);
	ck_assert_int_eq(ip4_lb_update(fib, (uint32_t)lb, (struct ip4_lb_path[]){ { X, 1 }, { Y, 2 } }, 2), 0);
	after = ip4_lb_of(fib, ip4_adj_get(fib, (uint32_t)lb))->buckets;
	for (uint32_t k = 0; k < 64; k++)
		if (before[k % 16] == Y)
			ck_assert_uint_eq(after[k], Y);
	ck_assert_uint_eq(buckets_of(fib, (uint32_t)lb, X, &nb), 21);
	ck_assert_uint_eq(buckets_of(fib, (uint32_t)lb, Y, &nb), 43);
	/* bad paths refused: one path, a drop, a weight above 256 */
	ck_assert_int_eq(ip4_lb_update(fib, (uint32_t)lb, (struct ip4_lb_path[]){ { X, 1 } }, 1), -EINVAL);
	ck_assert_int_eq(ip4_lb_update(fib, (uint32_t)lb, (struct ip4_lb_path[]){ { X, 1 }, { 0, 1 } }, 2), -EINVAL);
	ck_assert_int_eq(ip4_lb_create(fib, (struct ip4_lb_path[]){ { X, 1 }, { Y, 257 } }, 2), -EINVAL);
	ip4_fib_destroy(fib);
}
END_TEST

/* A UDP frame from A to dst with source port sport (a real UDP header). */
static uint32_t flow_frame(uint8_t *f, uint32_t dst, uint16_t sport)
{
	uint32_t n = udp_frame(f, mac_a, mac_ha, IP_HA, dst, 64, 16, 0);
	put16(f + 34, sport);
	put16(f + 36, 5201);
	put16(f + 38, 16);
	put16(f + 40, 0);
	return n;
}

/* The interface each of n flows (source ports 40000 + i) left by, each
 * seen once. */
static void send_flows(uint32_t n, uint32_t *out_if)
{
	uint8_t f[128];
	n_tx = 0;
	for (uint32_t i = 0; i < n; i++)
		inject(dev_a, f, flow_frame(f, 0x0a090001u, (uint16_t)(40000 + i)));
	poll_n(3);
	ck_assert_uint_eq(n_tx, n);
	for (uint32_t i = 0; i < n; i++)
		out_if[i] = DEV_INDEX_INVALID;
	for (uint32_t i = 0; i < n; i++) { /* in order per interface only */
		uint32_t k = get16(txs[i].bytes + 34) - 40000u;
		ck_assert_uint_lt(k, n);
		ck_assert_uint_eq(out_if[k], DEV_INDEX_INVALID);
		out_if[k] = txs[i].if_index;
	}
}

/* 10.9.0.0/16 via A (on a) and via B (on b): each flow on one path, both
 * used; removing B moves only B's flows. */
START_TEST(ecmp_per_flow)
{
	resolve_ha();
	resolve_hb();
	const struct ip4_route_path p[2] = {
		{ .kind = IP4_ADJ_REWRITE, .next_hop = htonl(IP_HA), .if_index = DEV_INDEX_INVALID },
		{ .kind = IP4_ADJ_REWRITE, .next_hop = htonl(IP_HB), .if_index = DEV_INDEX_INVALID },
	};
	ck_assert_msg(ip4_route_src_set(IP4_SRC_CLI, htonl(0x0a090000u), 16, p, 2, err, sizeof(err)) == 0, "%s", err);
	uint32_t first[24], again[24], n_b = 0;
	send_flows(24, first);
	send_flows(24, again);
	for (uint32_t i = 0; i < 24; i++) {
		ck_assert_uint_eq(first[i], again[i]);
		n_b += first[i] == dev_b->index;
	}
	ck_assert_uint_gt(n_b, 0);
	ck_assert_uint_lt(n_b, 24);
	/* the destination MAC is the path's neighbour's */
	ck_assert_mem_eq(txs[0].bytes, txs[0].if_index == dev_b->index ? mac_hb : mac_ha, 6);
	ck_assert_int_eq(ip4_route_src_path_del(IP4_SRC_CLI, htonl(0x0a090000u), 16, htonl(IP_HB), DEV_INDEX_INVALID,
						err, sizeof(err)), 0);
	send_flows(24, again);
	for (uint32_t i = 0; i < 24; i++)
		ck_assert_uint_eq(again[i], dev_a->index);
	/* back to two: B's share returns (a fresh load balance) */
	ck_assert_int_eq(ip4_route_src_path_add(IP4_SRC_CLI, htonl(0x0a090000u), 16, &p[1], 1, err, sizeof(err)), 0);
	struct ip4_route_path got[4];
	ck_assert_uint_eq(ip4_route_src_paths(0x0a090000u, 16, got, 4), 2);
	send_flows(24, again);
	for (uint32_t i = 0; i < 24; i++)
		ck_assert_uint_eq(again[i], first[i]);
	ck_assert_int_eq(ip4_route_del(htonl(0x0a090000u), 16, err, sizeof(err)), 0);
}
END_TEST

/* unreachable -> ICMP 3/1, prohibit -> 3/13, exact bytes and counters;
 * blackhole -> dropped and counted apart from "no route". */
START_TEST(route_kinds_exact)
{
	uint8_t f[256], want[256];
	resolve_ha();
	n_tx = 0;
	const uint8_t kinds[3] = { IP4_ADJ_UNREACH, IP4_ADJ_PROHIBIT, IP4_ADJ_BLACKHOLE };
	for (uint32_t k = 0; k < 3; k++) {
		struct ip4_route_path p = { .kind = kinds[k] };
		ck_assert_msg(ip4_route_src_add(IP4_SRC_CLI, htonl(0x0a420000u + (k << 16)), 16, &p, err, sizeof(err)) == 0,
			      "%s", err);
	}
	uint32_t n = udp_frame(f, mac_a, mac_ha, IP_HA, 0x0a420001u, 64, 40, 0);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 1);
	uint32_t wn = icmp_error_want(want, f, n, 3, 1, 0);
	expect_tx(0, dev_a, want, wn);
	n = udp_frame(f, mac_a, mac_ha, IP_HA, 0x0a430001u, 64, 40, 0);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 2);
	wn = icmp_error_want(want, f, n, 3, 13, 0);
	expect_tx(1, dev_a, want, wn);
	n = udp_frame(f, mac_a, mac_ha, IP_HA, 0x0a440001u, 64, 40, 0);
	inject(dev_a, f, n);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 2);
	ck_assert_uint_eq(errors_of("ip4-lookup", 1), 2); /* blackhole route */
	ck_assert_uint_eq(errors_of("ip4-lookup", 0), 0); /* not "no route" */
	ck_assert_uint_eq(errors_of("ip4-rewrite", 6), 1); /* unreachable sent */
	ck_assert_uint_eq(errors_of("ip4-rewrite", 7), 1); /* prohibit sent */
	/* the same bucket as the other ICMP errors: 8 more of 12 get one */
	n = udp_frame(f, mac_a, mac_ha, IP_HA, 0x0a420001u, 64, 40, 0);
	for (int i = 0; i < 12; i++)
		inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(errors_of("ip4-rewrite", 6), 9);
	ck_assert_uint_eq(errors_of("ip4-rewrite", 2), 4); /* rate-limited */
}
END_TEST

/* A device route (`ip route add 10.5.0.0/24 via b`): the destination is
 * resolved by ARP on b, as on a connected subnet. */
START_TEST(device_route_gleans)
{
	uint8_t f[256], want[256];
	resolve_ha();
	n_tx = 0;
	struct ip4_route_path p = { .kind = IP4_ADJ_GLEAN, .if_index = dev_b->index };
	ck_assert_msg(ip4_route_src_add(IP4_SRC_CLI, htonl(0x0a050000u), 24, &p, err, sizeof(err)) == 0, "%s", err);
	uint32_t n = udp_frame(f, mac_a, mac_ha, IP_HA, 0x0a050007u, 64, 20, 0);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 1);
	uint32_t wn = arp_frame(want, bcast, mac_b, 1, mac_b, IP_B1, (const uint8_t[6]){ 0 }, 0x0a050007u, 60);
	expect_tx(0, dev_b, want, wn);
	/* a device route is the CLI's, not an address's: it can go */
	ck_assert_int_eq(ip4_route_del(htonl(0x0a050000u), 24, err, sizeof(err)), 0);
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, 0x0a050000u, 24, &n), -ENOENT);
}
END_TEST

/* ---- control ---- */

START_TEST(addresses_and_routes)
{
	char e[128];
	uint32_t r;
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, IP_A1, 32, &r), 0);
	ck_assert_int_eq(ip4_adj_get(ip4_fib_main, r)->kind, IP4_ADJ_LOCAL);
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, 0x0a010000u, 24, &r), 0);
	ck_assert_int_eq(ip4_adj_get(ip4_fib_main, r)->kind, IP4_ADJ_GLEAN);
	/* Same address again, or b's subnet on a: refused, nothing changes. */
	ck_assert_int_eq(ip4_if_addr_add(dev_a->index, htonl(IP_A1), 24, e, sizeof(e)), -EEXIST);
	ck_assert_int_eq(ip4_if_addr_add(dev_a->index, htonl(0x0a020005u), 24, e, sizeof(e)), -EEXIST);
	ck_assert_uint_eq(ip4_interfaces[dev_a->index].n_addrs, 1);
	/* Routes: via a next hop on no subnet needs a name; connected ones
	 * cannot be deleted as routes. */
	ck_assert_int_eq(ip4_route_add(0, 0, htonl(0x0b000001u), DEV_INDEX_INVALID, e, sizeof(e)), -EINVAL);
	ck_assert_int_eq(ip4_route_add(0, 0, htonl(IP_HB), DEV_INDEX_INVALID, e, sizeof(e)), 0);
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, 0, 0, &r), 0);
	const struct ip4_adj *a = ip4_adj_get(ip4_fib_main, r);
	ck_assert_int_eq(a->kind, IP4_ADJ_REWRITE);
	ck_assert_uint_eq(a->next_hop, IP_HB);
	ck_assert_uint_eq(a->if_index, dev_b->index);
	ck_assert_int_eq(ip4_route_del(htonl(0x0a010000u), 24, e, sizeof(e)), -EPERM);
	ck_assert_int_eq(ip4_route_del(0, 0, e, sizeof(e)), 0);
	ck_assert_int_eq(ip4_route_del(0, 0, e, sizeof(e)), -ENOENT);
	/* Removing the address takes its routes away. */
	ck_assert_int_eq(ip4_if_addr_del(dev_a->index, htonl(IP_A1), 24, e, sizeof(e)), 0);
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, IP_A1, 32, &r), -ENOENT);
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, 0x0a010000u, 24, &r), -ENOENT);
	ck_assert_int_eq(ip4_if_addr_del(dev_a->index, htonl(IP_A1), 24, e, sizeof(e)), -ENOENT);
}
END_TEST

/* ---- neighbours: aging, static entries, clearing, interface deletion ---- */

/* The neighbour table's simulated clock: tests move it by hand; the
 * process node still runs every millisecond of real time. */
static uint64_t sim_ns;

static uint64_t sim_clock(void)
{
	return sim_ns;
}

/* Move the simulated clock to `at` (ns after the start) and let the process
 * node run: it is due again a millisecond (real time) after each run, so
 * polls more than that apart each run it, however loaded the box. */
#define SIM_T0 1000000000000ull
static void sim_at(uint64_t at)
{
	sim_ns = SIM_T0 + at;
	for (int i = 0; i < 3; i++) {
		usleep(1100);
		graph_main_poll(g);
	}
	poll_n(2); /* what the runs sent reaches the test driver */
}

#define SEC 1000000000ull
#define MS 1000000ull

/* Wait (real time) until the process node has applied one more entry. */
static void wait_applied(uint64_t before)
{
	uint64_t end = time_now_ns() + 1000000000ull;
	while (errors_of("ip4-neighbor", 1) == before && time_now_ns() < end) {
		graph_main_poll(g);
		usleep(100);
	}
	ck_assert_uint_gt(errors_of("ip4-neighbor", 1), before);
}

static const struct ip4_nbr *nbr_get(struct device *d, uint32_t ip_h)
{
	ip4_nbr_lock();
	const struct ip4_nbr *n = ip4_nbr_lookup(d->index, htonl(ip_h));
	ip4_nbr_unlock();
	return n;
}

START_TEST(neighbor_ages_with_reprobes)
{
	uint8_t f[128], want[64];
	uint32_t r;
	sim_ns = SIM_T0;
	ip4_nbr_clock = sim_clock;
	ip4_nbr_reachable_timeout_ns = 10 * SEC;
	ip4_nbr_request_interval_ns = 1 * SEC;
	resolve_ha(); /* learnt at t = 0 */
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, IP_HA, 32, &r), 0);
	uint32_t wn = arp_frame(want, mac_ha, mac_a, 1, mac_a, IP_A1, (const uint8_t[6]){ 0 }, IP_HA, 60);

	/* Re-ARP starts 3 intervals before the deadline: not at 6.9 s. */
	sim_at(6900 * MS);
	ck_assert_uint_eq(n_tx, 0);
	/* At 7 s a request unicast to the known MAC; none more within 1 s. */
	sim_at(7 * SEC);
	ck_assert_uint_eq(n_tx, 1);
	expect_tx(0, dev_a, want, wn);
	sim_at(7900 * MS);
	ck_assert_uint_eq(n_tx, 1);
	sim_at(8 * SEC);
	ck_assert_uint_eq(n_tx, 2);
	expect_tx(1, dev_a, want, wn);
	/* A answers at 8.2 s: renewed until 18.2 s, no probe before 15.2 s. */
	sim_ns = SIM_T0 + 8200 * MS;
	uint32_t n = arp_frame(f, mac_a, mac_ha, 2, mac_ha, IP_HA, mac_a, IP_A1, 60);
	inject(dev_a, f, n);
	sim_at(8200 * MS);
	sim_at(15100 * MS);
	ck_assert_uint_eq(n_tx, 2);
	ck_assert_ptr_nonnull(nbr_get(dev_a, IP_HA));
	/* Unanswered probes at 15.2, 16.2 and 17.2 s; forgotten at 18.2 s. */
	sim_at(15200 * MS);
	sim_at(16200 * MS);
	sim_at(17200 * MS);
	ck_assert_uint_eq(n_tx, 5);
	for (uint32_t i = 2; i < 5; i++)
		expect_tx(i, dev_a, want, wn);
	ck_assert_ptr_nonnull(nbr_get(dev_a, IP_HA));
	ck_assert_uint_eq(errors_of("ip4-neighbor", 4), 0);
	sim_at(18200 * MS);
	ck_assert_uint_eq(n_tx, 5);
	ck_assert_ptr_null(nbr_get(dev_a, IP_HA));
	ck_assert_uint_eq(errors_of("ip4-neighbor", 3), 5); /* probes */
	ck_assert_uint_eq(errors_of("ip4-neighbor", 4), 1); /* aged out */
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, IP_HA, 32, &r), -ENOENT);
	/* The next packet to A resolves afresh: held, broadcast request. */
	n = udp_frame(f, mac_b, mac_hb, IP_HB, IP_HA, 64, 20, 0);
	inject(dev_b, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 6);
	wn = arp_frame(want, bcast, mac_a, 1, mac_a, IP_A1, (const uint8_t[6]){ 0 }, IP_HA, 60);
	expect_tx(5, dev_a, want, wn);
	ck_assert_uint_eq(errors_of("ip4-arp", 0), 1); /* held */
}
END_TEST

START_TEST(neighbor_static_and_clear)
{
	uint8_t f[128], want[128];
	const uint8_t other[6] = { 0x02, 0xcc, 0, 0, 0, 0x09 };
	sim_ns = SIM_T0;
	ip4_nbr_clock = sim_clock;
	ip4_nbr_reachable_timeout_ns = 10 * SEC;
	uint64_t applied = errors_of("ip4-neighbor", 1);
	ck_assert_int_eq(ip4_nbr_set(dev_b->index, htonl(IP_HB), mac_hb, true, err, sizeof(err)), 0);
	wait_applied(applied);
	/* A -> B leaves at once, no ARP. */
	uint32_t n = udp_frame(f, mac_a, mac_ha, IP_HA, IP_HB, 64, 30, 0);
	memcpy(want, f, n);
	memcpy(want, mac_hb, 6);
	memcpy(want + 6, mac_b, 6);
	want[14 + 8] = 63;
	put16(want + 14 + 10, 0);
	put16(want + 14 + 10, ref_csum(want + 14, 20));
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 1);
	expect_tx(0, dev_b, want, n);
	/* ARP claiming another MAC for B does not change a static entry, nor
	 * does time: no probe, no aging. */
	uint8_t a[64];
	uint32_t an = arp_frame(a, mac_b, other, 2, other, IP_HB, mac_b, IP_B1, 60);
	inject(dev_b, a, an);
	sim_at(100 * SEC);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 2);
	expect_tx(1, dev_b, want, n);
	ck_assert_uint_eq(errors_of("ip4-neighbor", 3), 0);
	ck_assert_uint_eq(errors_of("ip4-neighbor", 4), 0);
	const struct ip4_nbr *e = nbr_get(dev_b, IP_HB);
	ck_assert_ptr_nonnull(e);
	ck_assert(e->flags & IP4_NBR_F_STATIC);
	ck_assert_mem_eq(e->mac, mac_hb, 6);

	/* clear ip neighbors: the dynamic A goes (its host route too), the
	 * static B stays. */
	n_tx = 0;
	resolve_ha();
	uint32_t r;
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, IP_HA, 32, &r), 0);
	ck_assert_uint_eq(ip4_nbr_count(), 2);
	ck_assert_uint_eq(ip4_nbr_clear_dynamic(), 1);
	ck_assert_uint_eq(ip4_nbr_count(), 1);
	ck_assert_ptr_nonnull(nbr_get(dev_b, IP_HB));
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, IP_HA, 32, &r), -ENOENT);
	n = udp_frame(f, mac_b, mac_hb, IP_HB, IP_HA, 64, 20, 0);
	inject(dev_b, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 1);
	uint32_t wn = arp_frame(want, bcast, mac_a, 1, mac_a, IP_A1, (const uint8_t[6]){ 0 }, IP_HA, 60);
	expect_tx(0, dev_a, want, wn);

	/* set ip neighbor without static: dynamic again, so it ages. */
	applied = errors_of("ip4-neighbor", 1);
	ck_assert_int_eq(ip4_nbr_set(dev_b->index, htonl(IP_HB), other, false, err, sizeof(err)), 0);
	wait_applied(applied);
	e = nbr_get(dev_b, IP_HB);
	ck_assert(!(e->flags & IP4_NBR_F_STATIC));
	ck_assert_mem_eq(e->mac, other, 6);
	sim_at(111 * SEC);
	ck_assert_ptr_null(nbr_get(dev_b, IP_HB));
	ck_assert_uint_eq(errors_of("ip4-neighbor", 4), 1);
}
END_TEST

START_TEST(delete_interface_clears_ip4)
{
	uint8_t f[128];
	uint32_t r;
	uint32_t b_index = dev_b->index;
	uint64_t applied = errors_of("ip4-neighbor", 1);
	ck_assert_int_eq(ip4_nbr_set(b_index, htonl(IP_HB), mac_hb, true, err, sizeof(err)), 0);
	wait_applied(applied);
	ck_assert_msg(ip4_route_add(htonl(0xc0a80000u), 16, htonl(IP_HB), DEV_INDEX_INVALID, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_msg(ip4_route_add(htonl(0x0b000000u), 8, htonl(IP_HA), DEV_INDEX_INVALID, err, sizeof(err)) == 0,
		      "%s", err);
	/* The delete path (as `delete interface b` takes it). */
	dev_delete(dev_b);
	dev_b = NULL;
	ck_assert_uint_eq(ip4_interfaces[b_index].n_addrs, 0);
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, IP_B1, 32, &r), -ENOENT);
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, 0x0a020000u, 24, &r), -ENOENT);
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, 0xc0a80000u, 16, &r), -ENOENT);
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, IP_HB, 32, &r), -ENOENT);
	ck_assert_uint_eq(ip4_nbr_count(), 0);
	/* a's state is untouched. */
	ck_assert_int_eq(ip4_fib_get(ip4_fib_main, 0x0b000000u, 8, &r), 0);
	ck_assert_uint_eq(ip4_interfaces[dev_a->index].n_addrs, 1);
	/* Packets for what was behind b: no route. */
	uint32_t n = udp_frame(f, mac_a, mac_ha, IP_HA, 0xc0a80105u, 64, 20, 0);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 0);
	ck_assert_uint_eq(errors_of("ip4-lookup", 0), 1);
}
END_TEST

static Suite *ip4_suite(void)
{
	Suite *s = suite_create("ip4");
	TCase *tc = tcase_create("nodes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, checksum_examples);
	tcase_add_test(tc, ethernet_l3_dispatch);
	tcase_add_test(tc, ethernet_mixed_vector);
	tcase_add_test(tc, ip4_input_malformed_counted);
	tcase_add_test(tc, ip4_input_l2_group_dropped);
	tcase_add_test(tc, arp_request_answered);
	tcase_add_test(tc, forward_resolves_and_rewrites);
	tcase_add_test(tc, arp_hold_bounded_and_timeout);
	tcase_add_test(tc, echo_reply_exact);
	tcase_add_test(tc, echo_reply_chained);
	tcase_add_test(tc, time_exceeded_exact_and_rate_limited);
	tcase_add_test(tc, frag_needed_for_df);
	tcase_add_test(tc, lb_buckets_by_weight);
	tcase_add_test(tc, ecmp_per_flow);
	tcase_add_test(tc, route_kinds_exact);
	tcase_add_test(tc, device_route_gleans);
	tcase_add_test(tc, addresses_and_routes);
	tcase_add_test(tc, neighbor_ages_with_reprobes);
	tcase_add_test(tc, neighbor_static_and_clear);
	tcase_add_test(tc, delete_interface_clears_ip4);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(ip4_suite());
}
