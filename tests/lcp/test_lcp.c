/* linux-cp's punt and inject decisions through the whole registered
 * graph: testdrv interfaces stand for the port "a" and for its TAP "t"
 * (paired with lcp_pair, as lcp create does), frames injected on them and
 * the exact frames each sends read back, with the counters of every node
 * on the way. Three cases make a real TAP in the test's own namespace
 * (root only: without /dev/net/tun they are not registered, and the run
 * says so, rather than passing without checking anything): its tx ring
 * filled, and one frame each way between a packet socket on the TAP's
 * Linux side and a, through the control thread and the rings.
 *
 *   host 10.1.0.2 (02:aa:..) -- a 10.1.0.1/24 [sluice] t -- Linux
 *
 * Every test ends with no buffer in use. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bytes.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/ip4/ip4.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/lcp/lcp.h"
#include "tests/check_run.h"
#include "tests/graph_fixture.h"
#include "tests/pkt_build.h"
#include "tests/drivers/testdrv/testdrv.h"

/* error codes, as the nodes number them */
enum { PUNT_FULL = 0, PUNT_NO_PAIR, PUNT_ARP, PUNT_MCAST, PUNT_LOCAL, PUNT_NA6, PUNT_MCAST6, PUNT_LOCAL6 };
enum { XC_NO_PAIR = 0, XC_ARP, XC_IP4, XC_OTHER };
enum { LOCAL_PROTOCOL = 0 };
enum { INPUT_MULTICAST = 7 };

static const uint8_t mac_h[6] = { 0x02, 0xaa, 0, 0, 0, 0x01 };
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
#define IP_A1 0x0a010001u /* 10.1.0.1, sluice's (and Linux's) */
#define IP_H 0x0a010002u  /* 10.1.0.2, the host */

static struct graph *g;
static struct device *dev_a, *dev_tap;
static char err[256];

/* Ethernet + IPv4 (protocol proto) + 8 bytes of l4 (first byte l4_0). */
static uint32_t ip_frame(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], uint32_t src, uint32_t dst,
			 uint8_t proto, uint8_t l4_0)
{
	uint32_t n = eth(p, dmac, smac, 0x0800);
	uint8_t *h = p + n;
	memset(h, 0, 28);
	h[0] = 0x45;
	put16(h + 2, 28);
	put16(h + 6, 0x4000);
	h[8] = 64;
	h[9] = proto;
	put32(h + 12, src);
	put32(h + 16, dst);
	put16(h + 10, ref_csum(h, 20));
	h[20] = l4_0;
	if (proto == 1) /* ICMP: a good checksum over the 8 bytes */
		put16(h + 22, ref_csum(h + 20, 8));
	return n + 28;
}

static void poll_n(uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		graph_main_poll(g);
}

static uint64_t count(const char *node, uint16_t code)
{
	int i = graph_node_index(g, node);
	ck_assert_int_ge(i, 0);
	return graph_node_error_count(g, (uint32_t)i, code);
}

static void expect_sent(struct device *d, uint32_t i, const uint8_t *want, uint32_t len)
{
	uint16_t got_len;
	const uint8_t *got = testdrv_sent(d, i, &got_len);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(got_len, len);
	for (uint32_t k = 0; k < len; k++)
		ck_assert_msg(got[k] == want[k], "%s frame %u byte %u: %02x, want %02x", d->name, i, k, got[k], want[k]);
}

/* d sent a frame equal to want (in any order: the graph runs ip4-input's
 * punts before ip4-local's). */
static void expect_sent_any(struct device *d, const uint8_t *want, uint32_t len)
{
	uint16_t got_len;
	const uint8_t *got;
	for (uint32_t i = 0; (got = testdrv_sent(d, i, &got_len)) != NULL; i++)
		if (got_len == len && memcmp(got, want, len) == 0)
			return;
	ck_abort_msg("%s did not send the frame", d->name);
}

static void setup(void)
{
	fixture_buffers_up(4096);
	g = fixture_graph_up();
	dev_a = fixture_testdrv("a");
	dev_tap = fixture_testdrv("t");
	memcpy(dev_tap->mac, dev_a->mac, 6); /* a TAP has its port's MAC */
	ck_assert_msg(ip4_if_addr_add(dev_a->index, htonl(IP_A1), 24, err, sizeof(err)) == 0, "%s", err);
}

static void teardown(void)
{
	fixture_graph_down(g);
	g = NULL;
	ip4_main_free();
	ip6_main_free();
	ck_assert_uint_eq(lcp_n_pairs(), 0);
	fixture_buffers_down();
}

/* What the router does not answer goes up the TAP whole, Ethernet header
 * and all; what it answers (echo, ARP requests) does not; other multicast
 * is still dropped. */
START_TEST(punt_decisions)
{
	ck_assert_int_eq(lcp_pair(dev_a, dev_tap), 0);
	ck_assert_uint_eq(dev_tap->mode, DEV_MODE_LCP);
	uint8_t tcp[64], udp[64], ospf[64], mc[64], echo[64], areq[64], arep[64];
	static const uint8_t mac_ospf[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x05 };
	uint32_t n_tcp = ip_frame(tcp, dev_a->mac, mac_h, IP_H, IP_A1, 6, 0xb3);
	uint32_t n_udp = ip_frame(udp, dev_a->mac, mac_h, IP_H, IP_A1, 17, 0x44);
	uint32_t n_ospf = ip_frame(ospf, mac_ospf, mac_h, IP_H, 0xe0000005u, 89, 2);
	uint32_t n_mc = ip_frame(mc, mac_ospf, mac_h, IP_H, 0xef010101u, 17, 0); /* 239.1.1.1 */
	uint32_t n_echo = ip_frame(echo, dev_a->mac, mac_h, IP_H, IP_A1, 1, 8);
	uint32_t n_areq = arp_frame(areq, bcast, mac_h, 1, mac_h, IP_H, (const uint8_t[6]){ 0 }, IP_A1, 60);
	uint32_t n_arep = arp_frame(arep, dev_a->mac, mac_h, 2, mac_h, IP_H, dev_a->mac, IP_A1, 60);
	ck_assert_int_eq(testdrv_inject(dev_a, tcp, (uint16_t)n_tcp), 0);
	ck_assert_int_eq(testdrv_inject(dev_a, udp, (uint16_t)n_udp), 0);
	ck_assert_int_eq(testdrv_inject(dev_a, ospf, (uint16_t)n_ospf), 0);
	ck_assert_int_eq(testdrv_inject(dev_a, mc, (uint16_t)n_mc), 0);
	ck_assert_int_eq(testdrv_inject(dev_a, areq, (uint16_t)n_areq), 0);
	ck_assert_int_eq(testdrv_inject(dev_a, arep, (uint16_t)n_arep), 0);
	ck_assert_int_eq(testdrv_inject(dev_a, echo, (uint16_t)n_echo), 0);
	poll_n(3);

	/* Up the TAP, byte for byte: TCP, UDP, OSPF, the ARP reply. */
	ck_assert_uint_eq(testdrv_n_sent(dev_tap), 4);
	expect_sent_any(dev_tap, tcp, n_tcp);
	expect_sent_any(dev_tap, udp, n_udp);
	expect_sent_any(dev_tap, ospf, n_ospf);
	expect_sent_any(dev_tap, arep, n_arep);
	ck_assert_uint_eq(count("lcp-punt", PUNT_LOCAL), 2);
	ck_assert_uint_eq(count("lcp-punt", PUNT_MCAST), 1);
	ck_assert_uint_eq(count("lcp-punt", PUNT_ARP), 1);
	ck_assert_uint_eq(count("lcp-punt", PUNT_FULL), 0);
	ck_assert_uint_eq(count("ip4-local", LOCAL_PROTOCOL), 0);
	ck_assert_uint_eq(count("ip4-input", INPUT_MULTICAST), 1); /* 239.1.1.1 */
	/* sluice answered the ARP request and the echo itself, on a. */
	ck_assert_uint_eq(testdrv_n_sent(dev_a), 2);
	uint16_t len;
	const uint8_t *f = testdrv_sent(dev_a, 0, &len);
	ck_assert_uint_eq(get16(f + 14 + 6), 2); /* ARP reply */
	f = testdrv_sent(dev_a, 1, &len);
	ck_assert_uint_eq(f[14 + 20], 0); /* echo reply */
	/* and learnt the host from its reply as well */
	ip4_nbr_lock();
	ck_assert_ptr_nonnull(ip4_nbr_lookup(dev_a->index, htonl(IP_H)));
	ip4_nbr_unlock();
}
END_TEST

/* ---- IPv6 ---- */

/* Ethernet + IPv6 (next header nh, hop limit hl) + l4 (len bytes); an
 * ICMPv6 payload gets its checksum over the pseudo-header (RFC 8200 §8.1). */
static uint32_t ip6_frame(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], const char *src,
			  const char *dst, uint8_t nh, uint8_t hl, const uint8_t *l4, uint16_t len)
{
	uint32_t n = eth(p, dmac, smac, 0x86dd);
	uint8_t *h = p + n;
	memset(h, 0, 40);
	h[0] = 0x60;
	put16(h + 4, len);
	h[6] = nh;
	h[7] = hl;
	ck_assert_int_eq(inet_pton(AF_INET6, src, h + 8), 1);
	ck_assert_int_eq(inet_pton(AF_INET6, dst, h + 24), 1);
	memcpy(h + 40, l4, len);
	if (nh == 58) {
		uint8_t ps[40 + 256] = { 0 };
		memcpy(ps, h + 8, 32);
		put16(ps + 34, len);
		ps[39] = 58;
		memcpy(ps + 40, l4, len);
		put16(h + 42, 0);
		ps[42] = ps[43] = 0;
		put16(h + 42, ref_csum(ps, 40u + len));
	}
	return n + 40 + len;
}

/* What sluice answers itself for IPv6 stays on the port (echo, NS for its
 * address); the rest for the router goes up the TAP whole: TCP (BGP's 179)
 * to its address, OSPFv3 to ff02::5, copies of Neighbor Advertisements;
 * another's solicited-node group is still dropped. */
START_TEST(punt_decisions6)
{
	ck_assert_int_eq(lcp_pair(dev_a, dev_tap), 0);
	struct in6_addr a1;
	inet_pton(AF_INET6, "2001:db8:1::1", &a1);
	ck_assert_msg(ip6_if_addr_add(dev_a->index, &a1, 64, err, sizeof(err)) == 0, "%s", err);
	poll_n(2);
	uint32_t a_before = testdrv_n_sent(dev_a); /* DAD's probe */
	static const uint8_t mac_ospf6[6] = { 0x33, 0x33, 0, 0, 0, 5 }, mac_sn[6] = { 0x33, 0x33, 0xff, 0, 0, 0x99 };
	uint8_t tcp[128], ospf[128], other[128], echo[128], ns[128], na[128];
	uint8_t l4[32] = { 0xc3, 0x50, 0x00, 0xb3 }; /* TCP 50000 -> 179 */
	uint32_t n_tcp = ip6_frame(tcp, dev_a->mac, mac_h, "2001:db8:1::2", "2001:db8:1::1", 6, 1, l4, 20);
	uint8_t hello[16] = { 3, 1, 0, 16 }; /* OSPFv3 hello */
	uint32_t n_ospf = ip6_frame(ospf, mac_ospf6, mac_h, "fe80::2", "ff02::5", 89, 1, hello, 16);
	uint32_t n_other = ip6_frame(other, mac_sn, mac_h, "fe80::2", "ff02::1:ff00:99", 17, 255, l4, 8);
	uint8_t er[8] = { 128, 0, 0, 0, 0, 1, 0, 1 };
	uint32_t n_echo = ip6_frame(echo, dev_a->mac, mac_h, "2001:db8:1::2", "2001:db8:1::1", 58, 64, er, 8);
	uint8_t nsm[32] = { 135, 0 }, nam[32] = { 136, 0, 0, 0, 0x20 }; /* NA: Override */
	inet_pton(AF_INET6, "2001:db8:1::1", nsm + 8);
	nsm[24] = 1, nsm[25] = 1, memcpy(nsm + 26, mac_h, 6); /* source link-layer address */
	uint32_t n_ns = ip6_frame(ns, dev_a->mac, mac_h, "2001:db8:1::2", "2001:db8:1::1", 58, 255, nsm, 32);
	inet_pton(AF_INET6, "2001:db8:1::2", nam + 8);
	nam[24] = 2, nam[25] = 1, memcpy(nam + 26, mac_h, 6); /* target link-layer address */
	uint32_t n_na = ip6_frame(na, dev_a->mac, mac_h, "2001:db8:1::2", "2001:db8:1::1", 58, 255, nam, 32);
	ck_assert_int_eq(testdrv_inject(dev_a, tcp, (uint16_t)n_tcp), 0);
	ck_assert_int_eq(testdrv_inject(dev_a, ospf, (uint16_t)n_ospf), 0);
	ck_assert_int_eq(testdrv_inject(dev_a, other, (uint16_t)n_other), 0);
	ck_assert_int_eq(testdrv_inject(dev_a, echo, (uint16_t)n_echo), 0);
	ck_assert_int_eq(testdrv_inject(dev_a, ns, (uint16_t)n_ns), 0);
	poll_n(3);
	ck_assert_int_eq(testdrv_inject(dev_a, na, (uint16_t)n_na), 0); /* after the NS made the entry */
	poll_n(3);

	ck_assert_uint_eq(testdrv_n_sent(dev_tap), 3);
	expect_sent_any(dev_tap, tcp, n_tcp);
	expect_sent_any(dev_tap, ospf, n_ospf);
	expect_sent_any(dev_tap, na, n_na);
	ck_assert_uint_eq(count("lcp-punt", PUNT_LOCAL6), 1);
	ck_assert_uint_eq(count("lcp-punt", PUNT_MCAST6), 1);
	ck_assert_uint_eq(count("lcp-punt", PUNT_NA6), 1);
	/* sluice answered the echo and the NS itself, on a: nothing of them up the TAP */
	ck_assert_uint_eq(testdrv_n_sent(dev_a) - a_before, 2);
	uint16_t len;
	const uint8_t *f = testdrv_sent(dev_a, a_before, &len);
	uint8_t t0 = f[14 + 40];
	f = testdrv_sent(dev_a, a_before + 1, &len);
	uint8_t t1 = f[14 + 40];
	ck_assert_uint_eq(t0 + t1, 129 + 136); /* an echo reply and an NA */
	/* the NA updated sluice's own entry first */
	struct in6_addr h;
	inet_pton(AF_INET6, "2001:db8:1::2", &h);
	ip6_nbr_lock();
	ck_assert_ptr_nonnull(ip6_nbr_lookup(dev_a->index, &h));
	ip6_nbr_unlock();
}
END_TEST

/* frame's IPv4 TTL set to ttl, the header checksum made good again. */
static void set_ttl(uint8_t *frame, uint8_t ttl)
{
	uint8_t *h = frame + 14;
	h[8] = ttl;
	put16(h + 10, 0);
	put16(h + 10, ref_csum(h, 20));
}

/* eBGP and OSPF send with TTL 1 (RFC 4271's single-hop eBGP; RFC 2328
 * A.1: OSPF packets never leave the link): to sluice's own address or to
 * 224.0.0.5 they are the router's, punted unchanged, never expired (only
 * forwarding spends a TTL, in ip4-rewrite); what Linux sends with TTL 1
 * leaves as it is. A transit packet with TTL 1 still expires. */
START_TEST(ttl_one_punted_not_expired)
{
	ck_assert_int_eq(lcp_pair(dev_a, dev_tap), 0);
	uint8_t bgp[64], ospf[64], out[64];
	static const uint8_t mac_ospf[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x05 };
	uint32_t n_bgp = ip_frame(bgp, dev_a->mac, mac_h, IP_H, IP_A1, 6, 0x00);
	uint32_t n_ospf = ip_frame(ospf, mac_ospf, mac_h, IP_H, 0xe0000005u, 89, 2);
	uint32_t n_out = ip_frame(out, mac_h, dev_a->mac, IP_A1, IP_H, 6, 0xb3);
	set_ttl(bgp, 1);
	set_ttl(ospf, 1);
	set_ttl(out, 1);
	testdrv_inject(dev_a, bgp, (uint16_t)n_bgp);
	testdrv_inject(dev_a, ospf, (uint16_t)n_ospf);
	testdrv_inject(dev_tap, out, (uint16_t)n_out);
	poll_n(3);
	ck_assert_uint_eq(testdrv_n_sent(dev_tap), 2);
	expect_sent_any(dev_tap, bgp, n_bgp);
	expect_sent_any(dev_tap, ospf, n_ospf);
	ck_assert_uint_eq(testdrv_n_sent(dev_a), 1);
	expect_sent(dev_a, 0, out, n_out);
	ck_assert_uint_eq(count("lcp-punt", PUNT_LOCAL), 1);
	ck_assert_uint_eq(count("lcp-punt", PUNT_MCAST), 1);

	/* Transit: 10.1.0.2 -> 10.9.9.9 via 10.1.0.3 with TTL 1 expires. */
	char e[128];
	ck_assert_int_eq(ip4_nbr_set(dev_a->index, htonl(0x0a010003u), mac_h, true, e, sizeof(e)), 0);
	ck_assert_msg(ip4_route_add(htonl(0x0a090900u), 24, htonl(0x0a010003u), dev_a->index, e, sizeof(e)) == 0, "%s", e);
	uint8_t transit[64];
	uint32_t n_transit = ip_frame(transit, dev_a->mac, mac_h, IP_H, 0x0a090909u, 17, 0);
	set_ttl(transit, 1);
	testdrv_inject(dev_a, transit, (uint16_t)n_transit);
	poll_n(3);
	ck_assert_uint_eq(testdrv_n_sent(dev_tap), 2); /* nothing more punted */
	ck_assert_uint_eq(count("ip4-rewrite", 0), 1); /* TTL expired: ICMP time-exceeded sent */
}
END_TEST

/* No pair: the old drops stand. */
START_TEST(unpaired_drops)
{
	uint8_t tcp[64], arep[64];
	uint32_t n_tcp = ip_frame(tcp, dev_a->mac, mac_h, IP_H, IP_A1, 6, 0xb3);
	uint32_t n_arep = arp_frame(arep, dev_a->mac, mac_h, 2, mac_h, IP_H, dev_a->mac, IP_A1, 60);
	testdrv_inject(dev_a, tcp, (uint16_t)n_tcp);
	testdrv_inject(dev_a, arep, (uint16_t)n_arep);
	poll_n(3);
	ck_assert_uint_eq(testdrv_n_sent(dev_tap), 0);
	ck_assert_uint_eq(count("ip4-local", LOCAL_PROTOCOL), 1);
	ck_assert_uint_eq(count("arp-input", 1), 1); /* consumed */
	ck_assert_uint_eq(count("lcp-punt", PUNT_LOCAL) + count("lcp-punt", PUNT_ARP), 0);
}
END_TEST

/* What Linux writes into the TAP leaves through the port untouched. */
START_TEST(inject_from_linux)
{
	ck_assert_int_eq(lcp_pair(dev_a, dev_tap), 0);
	uint8_t areq[64], ip[64], v6[64];
	uint32_t n_areq = arp_frame(areq, bcast, dev_a->mac, 1, dev_a->mac, IP_A1, (const uint8_t[6]){ 0 }, IP_H, 60);
	uint32_t n_ip = ip_frame(ip, mac_h, dev_a->mac, IP_A1, IP_H, 6, 0x12);
	uint32_t n_v6 = eth(v6, mac_h, dev_a->mac, 0x86dd);
	memset(v6 + n_v6, 0x60, 40);
	n_v6 += 40;
	testdrv_inject(dev_tap, areq, (uint16_t)n_areq);
	testdrv_inject(dev_tap, ip, (uint16_t)n_ip);
	testdrv_inject(dev_tap, v6, (uint16_t)n_v6);
	poll_n(3);
	ck_assert_uint_eq(testdrv_n_sent(dev_a), 3);
	expect_sent(dev_a, 0, areq, n_areq);
	expect_sent(dev_a, 1, ip, n_ip);
	expect_sent(dev_a, 2, v6, n_v6);
	ck_assert_uint_eq(testdrv_n_sent(dev_tap), 0);
	ck_assert_uint_eq(count("lcp-xc", XC_ARP), 1);
	ck_assert_uint_eq(count("lcp-xc", XC_IP4), 1);
	ck_assert_uint_eq(count("lcp-xc", XC_OTHER), 1);
	ck_assert_uint_eq(count("lcp-xc", XC_NO_PAIR), 0);
}
END_TEST

/* Pairs refuse doubles; deleting the TAP unpairs, deleting the port takes
 * its TAP along. */
START_TEST(pair_lifecycle)
{
	ck_assert_int_eq(lcp_pair(dev_a, dev_a), -EINVAL);
	ck_assert_int_eq(lcp_pair(dev_a, dev_tap), 0);
	ck_assert_int_eq(lcp_pair(dev_a, dev_tap), -EINVAL);
	ck_assert_int_eq(lcp_pair(dev_tap, dev_a), -EINVAL);
	ck_assert_uint_eq(lcp_tap_of(dev_a->index), dev_tap->index);
	ck_assert_uint_eq(lcp_phy_of(dev_tap->index), dev_a->index);
	ck_assert_int_eq(lcp_create("a", "x", NULL, err, sizeof(err)), -EEXIST);
	ck_assert_int_eq(lcp_create("nosuch", "x", NULL, err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(lcp_create("t", "x", NULL, err, sizeof(err)), -EINVAL); /* a TAP */
	ck_assert_int_eq(lcp_delete("nosuch", err, sizeof(err)), -ENOENT);
	uint32_t a = dev_a->index;
	dev_delete(dev_tap);
	ck_assert_uint_eq(lcp_tap_of(a), DEV_INDEX_INVALID);
	ck_assert_int_eq(lcp_delete("a", err, sizeof(err)), -ENOENT);
	dev_tap = fixture_testdrv("t");
	ck_assert_int_eq(lcp_pair(dev_a, dev_tap), 0);
	dev_delete(dev_a);
	ck_assert_ptr_null(dev_by_name("t"));
	ck_assert_uint_eq(lcp_n_pairs(), 0);
}
END_TEST

/* Whether a TAP can be made here (root, /dev/net/tun). */
static bool have_tun(void)
{
	return geteuid() == 0 && access("/dev/net/tun", R_OK | W_OK) == 0;
}

/* A real TAP in sluice's namespace (root) with rings of 16: 40 punts in
 * one frame fill its tx ring; the 24 beyond it are lcp-punt's named drop,
 * not the TAP's TX-dropped. */
START_TEST(punt_queue_full)
{
	char name[16];
	snprintf(name, sizeof(name), "slt%d", (int)getpid() % 100000);
	const char *words[] = { "host-if", name, "ring-size", "16" };
	struct device *tap = dev_create("tap0", "tap", words, 4, err, sizeof(err));
	ck_assert_msg(tap, "%s", err);
	ck_assert(tap_is(tap));
	ck_assert_int_eq(dev_set_admin_up(tap, true), 0);
	ck_assert_int_eq(lcp_pair(dev_a, tap), 0);
	for (uint32_t i = 0; i < 40; i++) {
		uint8_t f[64];
		uint32_t n = ip_frame(f, dev_a->mac, mac_h, IP_H, IP_A1, 17, (uint8_t)i);
		ck_assert_int_eq(testdrv_inject(dev_a, f, (uint16_t)n), 0);
	}
	poll_n(2);
	ck_assert_uint_eq(count("lcp-punt", PUNT_LOCAL), 16);
	ck_assert_uint_eq(count("lcp-punt", PUNT_FULL), 24);
	struct dev_counters c;
	dev_counters_get(tap, &c);
	ck_assert_uint_eq(c.tx_packets, 16);
	/* The Linux side is down: the control thread's writes fail, counted. */
	struct tap_host_stats st;
	for (int i = 0; i < 1000; i++) {
		tap_host_stats_get(tap, &st);
		if (st.write_errors + st.to_linux == 16)
			break;
		usleep(1000);
	}
	ck_assert_uint_eq(st.write_errors + st.to_linux, 16);
}
END_TEST

/* ---- a real TAP both ways (root) ---- */

/* A TAP in sluice's own namespace, up on both sides, IPv6 off so that
 * Linux sends nothing of its own, paired with a; returns a packet socket
 * bound to its Linux side. */
static int real_tap_paired(struct device **tap_out)
{
	char name[16], path[64];
	snprintf(name, sizeof(name), "slt%d", (int)getpid() % 100000);
	const char *words[] = { "host-if", name };
	struct device *tap = dev_create("tap0", "tap", words, 2, err, sizeof(err));
	ck_assert_msg(tap, "%s", err);
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", name);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs("1", f);
		fclose(f);
	}
	ck_assert_int_eq(dev_set_admin_up(tap, true), 0);
	ck_assert_int_eq(lcp_pair(dev_a, tap), 0);
	ck_assert_int_eq(tap_host_set_up(tap, true), 0);
	struct tap_host_stats st;
	tap_host_stats_get(tap, &st);
	int s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	ck_assert_int_ge(s, 0);
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = (int)st.host_ifindex };
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sll, sizeof(sll)), 0);
	*tap_out = tap;
	return s;
}

/* Linux -> fd -> control thread -> rx ring -> tap-input -> lcp-xc -> a,
 * byte for byte. */
START_TEST(real_tap_to_port)
{
	struct device *tap;
	int s = real_tap_paired(&tap);
	uint8_t f[60];
	uint32_t n = eth(f, mac_h, dev_a->mac, 0x88b5); /* IEEE 802 local experimental */
	for (uint32_t i = n; i < sizeof(f); i++)
		f[i] = (uint8_t)i;
	ck_assert_int_eq(send(s, f, sizeof(f), 0), (ssize_t)sizeof(f));
	uint64_t end = time_now_ns() + 2000000000ull;
	while (count("lcp-xc", XC_OTHER) == 0 && time_now_ns() < end) {
		graph_main_poll(g);
		usleep(200);
	}
	expect_sent_any(dev_a, f, sizeof(f));
	ck_assert_uint_eq(count("lcp-xc", XC_OTHER), 1);
	struct tap_host_stats st;
	tap_host_stats_get(tap, &st);
	ck_assert_uint_eq(st.from_linux, 1);
	close(s);
}
END_TEST

/* a -> ip4-local -> lcp-punt -> tap-tx -> tx ring -> control thread ->
 * write() -> Linux, byte for byte. */
START_TEST(real_port_to_tap)
{
	struct device *tap;
	int s = real_tap_paired(&tap);
	uint8_t f[64], got[256];
	uint32_t n = ip_frame(f, dev_a->mac, mac_h, IP_H, IP_A1, 17, 0x77);
	ck_assert_int_eq(testdrv_inject(dev_a, f, (uint16_t)n), 0);
	poll_n(2);
	struct timeval tv = { .tv_sec = 2 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ssize_t len;
	do /* Linux's own frames (none with IPv6 off, but be sure) are skipped */
		len = recv(s, got, sizeof(got), 0);
	while (len > 0 && ((uint32_t)len != n || memcmp(got, f, n) != 0));
	ck_assert_int_eq(len, (ssize_t)n);
	/* The control thread counts the frame after its write() returns; the
	 * packet socket may see the frame first: wait for the count (1 s at most). */
	struct tap_host_stats st;
	for (int i = 0; i < 100; i++) {
		tap_host_stats_get(tap, &st);
		if (st.to_linux)
			break;
		usleep(10000);
	}
	ck_assert_uint_eq(st.to_linux, 1);
	ck_assert_uint_eq(st.write_errors, 0);
	close(s);
}
END_TEST

static Suite *lcp_suite(void)
{
	Suite *s = suite_create("lcp");
	TCase *tc = tcase_create("punt");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, punt_decisions);
	tcase_add_test(tc, punt_decisions6);
	tcase_add_test(tc, unpaired_drops);
	tcase_add_test(tc, inject_from_linux);
	tcase_add_test(tc, ttl_one_punted_not_expired);
	tcase_add_test(tc, pair_lifecycle);
	if (have_tun()) {
		tcase_add_test(tc, punt_queue_full);
		tcase_add_test(tc, real_tap_to_port);
		tcase_add_test(tc, real_port_to_tap);
	} else
		fprintf(stderr, "lcp: not root or no /dev/net/tun: the 3 real-TAP cases are not run\n");
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(lcp_suite());
}
