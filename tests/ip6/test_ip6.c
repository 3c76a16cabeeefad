/* The IPv6 nodes end to end, through the whole registered graph: a test
 * input node hands exact frames to ethernet-input on interface a or b, and
 * a test driver under both interfaces records the exact frames
 * interface-output gives it. Expected packets are written byte by byte
 * here with a plain reference checksum, independent of nodes/ip6/ip6.h.
 *
 *   host A 2001:db8:1::2 (02:aa:..) -- a 2001:db8:1::1/64 [sluice] b (IPv6 off)
 *
 * Error counters are found by their strings. Every test ends with no
 * buffer in use. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bytes.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_dad.h"
#include "nodes/ip6/ip6_ra.h"
#include "nodes/ip6/ip6_route.h"
#include "tests/check_run.h"
#include "tests/ip6/ip6_frames.h"

static struct graph *g;
#include "tests/l3_harness.h"

/* ---- addresses and packets ---- */

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };     /* sluice's a */
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0b };     /* sluice's b */
static const uint8_t mac_ha[6] = { 0x02, 0xaa, 0, 0, 0, 0x01 }; /* host A */
static uint8_t A1[16], HA[16], LL_A[16], LL_HA[16], SN_A1[16], B9[16];

static struct device *dev_a, *dev_b;
static char err[256];

/* An echo request (type 128) or reply (129) with data bytes. */
static uint32_t echo6(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], const uint8_t src[16],
		      const uint8_t dst[16], uint8_t hlim, uint8_t type, uint32_t data)
{
	uint8_t *m = p + 54;
	m[0] = type;
	m[1] = 0;
	put16(m + 4, 0x1234);
	put16(m + 6, 7);
	for (uint32_t i = 0; i < data; i++)
		m[8 + i] = (uint8_t)(0x20 + i);
	return icmp6_frame(p, dmac, smac, src, dst, hlim, 8 + data);
}

/* A Neighbor Solicitation for target, with a source link-layer option
 * when sll is not NULL. */
static uint32_t ns6(uint8_t *p, const uint8_t dmac[6], const uint8_t src[16], const uint8_t dst[16], uint8_t hlim,
		    const uint8_t target[16], const uint8_t *sll)
{
	return icmp6_frame(p, dmac, mac_ha, src, dst, hlim, icmp6_ns_msg(p + 54, target, sll));
}

/* A Neighbor Advertisement for target with flags (R 0x80, S 0x40, O 0x20)
 * and a target link-layer option. */
static uint32_t na6(uint8_t *p, const uint8_t dmac[6], const uint8_t src[16], const uint8_t dst[16], uint8_t hlim,
		    uint8_t flags, const uint8_t target[16], const uint8_t tll[6])
{
	return icmp6_frame(p, dmac, mac_ha, src, dst, hlim, icmp6_na_msg(p + 54, flags, target, tll));
}


/* ---- fixture ---- */

static void setup(void)
{
	ip6_dad_transmits = 0; /* no probes among the frames counted (dad_probe_and_duplicate turns it on) */
	memset(ip6_dad_ifs, 0, sizeof(ip6_dad_ifs));
	l3_graph_up(4096, err, sizeof(err));
	dev_a = tdev_create("a", mac_a);
	dev_b = tdev_create("b", mac_b);
	a6(A1, "2001:db8:1::1");
	a6(HA, "2001:db8:1::2");
	a6(LL_A, "fe80::ff:fe00:a"); /* EUI-64 of 02:00:00:00:00:0a */
	a6(LL_HA, "fe80::aa:ff:fe00:1");
	a6(SN_A1, "ff02::1:ff00:1");
	a6(B9, "2001:db8:9::9");
	struct in6_addr a;
	memcpy(&a, A1, 16);
	ck_assert_msg(ip6_if_addr_add(dev_a->index, &a, 64, err, sizeof(err)) == 0, "%s", err);
}

static void teardown(void)
{
	dev_graph_detach(g);
	graph_destroy(g);
	g = NULL;
	ip6_nbr_flush(DEV_INDEX_INVALID, NULL, 0);
	dev_delete_all();
	ip6_main_free();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_thread_unregister();
	buffer_main_free();
	free(txs);
}

/* ---- addresses ---- */

START_TEST(link_local_and_groups)
{
	struct in6_addr ll, sn, a;
	ip6_link_local_from_mac(&ll, (const uint8_t[6]){ 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 });
	char s[INET6_ADDRSTRLEN];
	ck_assert_str_eq(ip6_format_addr(s, &ll), "fe80::5054:ff:fe12:3456"); /* the U/L bit inverted */
	ck_assert_int_eq(memcmp(&ip6_interfaces[dev_a->index].link_local, LL_A, 16), 0);
	memcpy(&a, A1, 16);
	ip6_solicited_node(&sn, &a);
	ck_assert_int_eq(memcmp(&sn, SN_A1, 16), 0);
	ck_assert(ip6_if_is_joined(dev_a->index, &sn));
	ck_assert(ip6_if_is_local(dev_a->index, &a));
	memcpy(&a, LL_A, 16);
	ck_assert(ip6_if_is_local(dev_a->index, &a));
	ck_assert(!ip6_if(dev_b->index));
	/* b: enabled with its link-local only, then an address, then without. */
	ck_assert_int_eq(ip6_if_enable(dev_b->index, err, sizeof(err)), 0);
	ck_assert(ip6_if(dev_b->index));
	ck_assert_uint_eq(ip6_interfaces[dev_b->index].n_addrs, 0);
	memcpy(&a, B9, 16);
	ck_assert_int_eq(ip6_if_addr_add(dev_b->index, &a, 48, err, sizeof(err)), 0);
	ck_assert_int_eq(ip6_if_addr_add(dev_b->index, &a, 48, err, sizeof(err)), -EEXIST);
	ck_assert_int_eq(ip6_if_addr_add(dev_a->index, &a, 48, err, sizeof(err)), -EEXIST);
	ck_assert_int_eq(ip6_if_addr_del(dev_b->index, &a, 64, err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(ip6_if_addr_del(dev_b->index, &a, 48, err, sizeof(err)), 0);
	ck_assert_uint_eq(ip6_interfaces[dev_b->index].n_addrs, 0);
	a6(a.s6_addr, "ff02::5");
	ck_assert_int_eq(ip6_if_addr_add(dev_b->index, &a, 64, err, sizeof(err)), -EINVAL);
	a6(a.s6_addr, "::ffff:10.0.0.1");
	ck_assert_int_eq(ip6_if_addr_add(dev_b->index, &a, 64, err, sizeof(err)), -EINVAL);
	/* A configured link-local replaces the EUI-64 one, and back. */
	a6(a.s6_addr, "fe80::1");
	ck_assert_int_eq(ip6_if_addr_add(dev_b->index, &a, 64, err, sizeof(err)), 0);
	ck_assert_str_eq(ip6_format_addr(s, &ip6_interfaces[dev_b->index].link_local), "fe80::1");
	ck_assert_int_eq(ip6_if_addr_del(dev_b->index, &a, 64, err, sizeof(err)), 0);
	ck_assert_str_eq(ip6_format_addr(s, &ip6_interfaces[dev_b->index].link_local), "fe80::ff:fe00:b");
	uint8_t plen;
	ck_assert(ip6_parse_prefix("2001:db8::/32", &a, &plen, false) && plen == 32);
	ck_assert(!ip6_parse_prefix("2001:db8::/129", &a, &plen, false));
	ck_assert(!ip6_parse_prefix("2001:db8::", &a, &plen, false));
	ck_assert(!ip6_parse_prefix("2001:db8::/-1", &a, &plen, false));
}
END_TEST

/* ---- echo ---- */

/* The reply to an echo request, byte by byte. */
static uint32_t want_reply(uint8_t *w, const uint8_t src[16], const uint8_t dst[16], uint32_t data)
{
	return echo6(w, mac_ha, mac_a, src, dst, 64, 129, data);
}

START_TEST(echo_reply_exact)
{
	uint8_t f[256], w[256];
	uint32_t n = echo6(f, mac_a, mac_ha, HA, A1, 64, 128, 56);
	memset(f + n, 0xee, 10); /* Ethernet padding: trimmed */
	inject(dev_a, f, n + 10);
	n = echo6(f, mac_a, mac_ha, LL_HA, LL_A, 64, 128, 3); /* link-local, odd length */
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 2);
	uint32_t wn = want_reply(w, A1, HA, 56);
	expect_tx(0, dev_a, w, wn);
	wn = want_reply(w, LL_A, LL_HA, 3);
	expect_tx(1, dev_a, w, wn);
	ck_assert_uint_eq(l3_error_count("icmp6-echo", "echo replies sent"), 2);
}
END_TEST

/* To all-nodes: answered from the link-local address (RFC 4443 §4.2). */
START_TEST(echo_multicast_from_link_local)
{
	uint8_t f[256], w[256], all[16];
	a6(all, "ff02::1");
	uint8_t mmac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	uint32_t n = echo6(f, mmac, mac_ha, LL_HA, all, 1, 128, 8);
	inject(dev_a, f, n);
	poll_n(3);
	uint32_t wn = want_reply(w, LL_A, LL_HA, 8);
	expect_tx(0, dev_a, w, wn);
}
END_TEST

START_TEST(icmp6_bad_checksum_counted)
{
	uint8_t f[256];
	uint32_t n = echo6(f, mac_a, mac_ha, HA, A1, 64, 128, 20);
	f[60] ^= 1;
	inject(dev_a, f, n);
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 0);
	ck_assert_uint_eq(l3_error_count("ip6-local", "bad ICMPv6 checksum"), 2);
}
END_TEST

/* ---- Neighbor Discovery ---- */

/* sluice's advertisement for target to dst (flags R S O), byte by byte. */
static uint32_t want_na(uint8_t *w, const uint8_t emac[6], const uint8_t dst[16], uint8_t flags,
			const uint8_t target[16])
{
	return icmp6_frame(w, emac, mac_a, target, dst, 255, icmp6_na_msg(w + 54, flags, target, mac_a));
}

START_TEST(ns_answered_exact)
{
	uint8_t f[256], w[256], smac[6] = { 0x33, 0x33, 0xff, 0, 0, 1 };
	uint32_t n = ns6(f, smac, HA, SN_A1, 255, A1, mac_ha); /* to the solicited-node group */
	inject(dev_a, f, n);
	n = ns6(f, mac_a, LL_HA, LL_A, 255, LL_A, NULL); /* unicast, no option: to the frame's source */
	inject(dev_a, f, n);
	uint8_t unspec[16] = { 0 }, sn_ll[16];
	a6(sn_ll, "ff02::1:ff00:a");
	n = ns6(f, smac, unspec, sn_ll, 255, LL_A, NULL); /* DAD for our address: defended to all-nodes */
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 3);
	uint32_t wn = want_na(w, mac_ha, HA, 0xe0, A1);
	expect_tx(0, dev_a, w, wn);
	wn = want_na(w, mac_ha, LL_HA, 0xe0, LL_A);
	expect_tx(1, dev_a, w, wn);
	uint8_t all[16], amac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	a6(all, "ff02::1");
	wn = want_na(w, amac, all, 0xa0, LL_A);
	expect_tx(2, dev_a, w, wn);
	ck_assert_uint_eq(l3_error_count("ip6-nd", "Neighbor Advertisements sent"), 3);
	/* The solicitation's source option taught host A's MAC: STALE. */
	struct in6_addr ha;
	memcpy(&ha, HA, 16);
	ip6_nbr_lock();
	const struct ip6_nbr *nb = ip6_nbr_lookup(dev_a->index, &ha);
	ck_assert_ptr_nonnull(nb);
	ck_assert_uint_eq(nb->state, IP6_NBR_STALE);
	ck_assert_int_eq(memcmp(nb->mac, mac_ha, 6), 0);
	ip6_nbr_unlock();
	ck_assert_uint_eq(ip6_nbr_count(), 1);
}
END_TEST

START_TEST(nd_hostile_counted)
{
	uint8_t f[256], smac[6] = { 0x33, 0x33, 0xff, 0, 0, 1 };
	for (int k = 0; k < 3; k++) {
		uint32_t n = ns6(f, smac, HA, SN_A1, 254, A1, mac_ha); /* hop limit 254 */
		inject(dev_a, f, n);
	}
	uint32_t n = ns6(f, smac, HA, SN_A1, 255, B9, mac_ha); /* not ours */
	inject(dev_a, f, n);
	uint8_t unspec[16] = { 0 };
	n = ns6(f, smac, unspec, SN_A1, 255, A1, mac_ha); /* DAD with an option */
	inject(dev_a, f, n);
	n = ns6(f, smac, HA, SN_A1, 255, SN_A1, mac_ha); /* multicast target */
	inject(dev_a, f, n);
	uint8_t hx[16];
	a6(hx, "2001:db8:1::77");
	n = na6(f, mac_a, hx, A1, 255, 0x60, hx, mac_ha); /* never solicited */
	inject(dev_a, f, n);
	n = na6(f, mac_a, hx, A1, 255, 0x60, A1, mac_ha); /* for our address */
	inject(dev_a, f, n);
	n = na6(f, mac_a, hx, A1, 64, 0x60, hx, mac_ha); /* hop limit 64 */
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 0);
	ck_assert_uint_eq(l3_error_count("ip6-nd", "ND hop limit not 255"), 4);
	ck_assert_uint_eq(l3_error_count("ip6-nd", "NS target not this interface's address"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-nd", "NS from :: not to a solicited-node group or with a link-layer option"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-nd", "ND target is multicast"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-nd", "NA for an address never solicited"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-nd", "NA for one of our addresses (duplicate?)"), 1);
	ck_assert_uint_eq(ip6_nbr_count(), 0);
}
END_TEST

/* A solicited NA makes an entry REACHABLE; without Override a new MAC is
 * refused; static entries stay. */
START_TEST(na_updates_neighbor)
{
	uint8_t f[256], smac[6] = { 0x33, 0x33, 0xff, 0, 0, 1 }, other[6] = { 0x02, 0xcc, 0, 0, 0, 2 };
	uint32_t n = ns6(f, smac, HA, SN_A1, 255, A1, mac_ha);
	inject(dev_a, f, n);
	poll_n(2);
	n = na6(f, mac_a, HA, A1, 255, 0x40, HA, mac_ha); /* solicited */
	inject(dev_a, f, n);
	n = na6(f, mac_a, HA, A1, 255, 0x40, HA, other); /* solicited, another MAC, no override */
	inject(dev_a, f, n);
	poll_n(2);
	ck_assert_uint_eq(l3_error_count("ip6-nd", "Neighbor Advertisement consumed (neighbour updated)"), 2);
	struct in6_addr ha, b9;
	memcpy(&ha, HA, 16);
	ip6_nbr_lock();
	const struct ip6_nbr *nb = ip6_nbr_lookup(dev_a->index, &ha);
	ck_assert_uint_eq(nb->state, IP6_NBR_STALE);
	ck_assert_int_eq(memcmp(nb->mac, mac_ha, 6), 0);
	ip6_nbr_unlock();
	n = na6(f, mac_a, HA, A1, 255, 0x60, HA, other); /* with override */
	inject(dev_a, f, n);
	poll_n(2);
	ip6_nbr_lock();
	nb = ip6_nbr_lookup(dev_a->index, &ha);
	ck_assert_uint_eq(nb->state, IP6_NBR_REACHABLE);
	ck_assert_int_eq(memcmp(nb->mac, other, 6), 0);
	ip6_nbr_unlock();
	memcpy(&b9, B9, 16);
	ck_assert_int_eq(ip6_nbr_set(dev_a->index, &b9, mac_ha, true, err, sizeof(err)), 0);
	n = na6(f, mac_a, B9, A1, 255, 0x60, B9, other);
	inject(dev_a, f, n);
	poll_n(2);
	ip6_nbr_lock();
	nb = ip6_nbr_lookup(dev_a->index, &b9);
	ck_assert_str_eq(ip6_nbr_state_name(nb), "static");
	ck_assert_int_eq(memcmp(nb->mac, mac_ha, 6), 0);
	ip6_nbr_unlock();
	/* Removing the address forgets the neighbours on its prefix. */
	struct in6_addr a1;
	memcpy(&a1, A1, 16);
	ck_assert_int_eq(ip6_if_addr_del(dev_a->index, &a1, 64, err, sizeof(err)), 0);
	ck_assert_uint_eq(ip6_nbr_count(), 1); /* 2001:db8:9::9 stays */
}
END_TEST

/* ---- ip6-input ---- */

/* A frame to sluice with a chain of extension headers: n headers of type
 * nh (8 bytes each) before ICMPv6 echo. */
static uint32_t ext_frame(uint8_t *f, uint8_t nh, uint32_t n_ext, const uint8_t dst[16], const uint8_t dmac[6])
{
	uint32_t n = eth(f, dmac, mac_ha, 0x86dd);
	uint32_t plen = n_ext * 8 + 8;
	n += ip6hdr(f + n, HA, dst, n_ext ? nh : 58, 64, (uint16_t)plen);
	for (uint32_t i = 0; i < n_ext; i++) {
		uint8_t *e = f + n + i * 8;
		memset(e, 0, 8);
		e[0] = i + 1 < n_ext ? nh : 58;
		e[2] = 1; /* options: PadN of 4 (a routing header: type 1, segments left 4) */
		e[3] = 4;
	}
	uint8_t *m = f + n + n_ext * 8;
	memset(m, 0, 8);
	m[0] = 128;
	put16(m + 2, ref_csum6(HA, dst, 58, m, 8));
	return n + plen;
}

START_TEST(ip6_input_hostile_counted)
{
	uint8_t f[2048], v[256];
	uint32_t vn = echo6(v, mac_a, mac_ha, HA, A1, 64, 128, 8);
	uint8_t mmac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	struct {
		const char *what;
		uint32_t n;
	} want[] = {
		{ "shorter than an IPv6 header", 1 },
		{ "IP version not 6", 2 },
		{ "payload length beyond the frame", 1 },
		{ "multicast source address", 1 },
		{ "loopback source or destination address", 2 },
		{ "unspecified destination address", 1 },
		{ "IPv4-mapped or -compatible address", 1 },
		{ "multicast of interface-local or reserved scope", 1 },
		{ "link-scope multicast group not joined", 1 },
		{ "multicast beyond link scope (not forwarded)", 1 },
		{ "unicast IPv6 in a link-layer broadcast or multicast", 1 },
		{ "link-local source or destination in transit", 1 },
		{ "more than 8 extension headers", 1 },
		{ "extension header beyond the packet", 1 },
		{ "IPv6 not enabled on the interface", 1 },
		{ "transit: no IPv6 FIB wired (ip6-lookup missing)", 0 }, /* wired: ip6-lookup's "no route" */
	};
#define V(off, val) do { memcpy(f, v, vn); f[off] = (val); inject(dev_a, f, vn); } while (0)
	memcpy(f, v, vn);
	inject(dev_a, f, 14 + 39);
	V(14, 0x40);
	V(14, 0x00);
	memcpy(f, v, vn);
	inject(dev_a, f, vn - 1); /* payload length one beyond */
	V(22, 0xff);              /* source ff.. */
	memcpy(f, v, vn);
	memset(f + 22, 0, 16);
	f[37] = 1; /* source ::1 */
	inject(dev_a, f, vn);
	memcpy(f, v, vn);
	memset(f + 38, 0, 16);
	f[53] = 1; /* destination ::1 */
	inject(dev_a, f, vn);
	memcpy(f, v, vn);
	memset(f + 38, 0, 16); /* destination :: */
	inject(dev_a, f, vn);
	memcpy(f, v, vn);
	a6(f + 38, "::ffff:10.1.0.1");
	inject(dev_a, f, vn);
	memcpy(f, v, vn);
	a6(f + 38, "ff01::1");
	inject(dev_a, f, vn);
	memcpy(f, v, vn);
	a6(f + 38, "ff02::99");
	inject(dev_a, f, vn);
	memcpy(f, v, vn);
	a6(f + 38, "ff0e::1");
	inject(dev_a, f, vn);
	memcpy(f, v, vn);
	memcpy(f, mmac, 6); /* unicast to us in a multicast frame */
	inject(dev_a, f, vn);
	memcpy(f, v, vn);
	a6(f + 38, "fe80::99");
	inject(dev_a, f, vn);
	uint32_t n = ext_frame(f, 60, 100, A1, mac_a); /* 100 destination options headers */
	inject(dev_a, f, n);
	n = ext_frame(f, 60, 2, A1, mac_a);
	put16(f + 18, 12); /* the second header ends beyond the payload */
	inject(dev_a, f, n - 12);
	memcpy(f, v, vn);
	memcpy(f, mac_b, 6);
	inject(dev_b, f, vn); /* b has no IPv6 */
	memcpy(f, v, vn);
	memcpy(f + 38, B9, 16); /* transit */
	inject(dev_a, f, vn);
#undef V
	poll_n(3);
	ck_assert_uint_eq(n_tx, 1); /* the transit one: ICMPv6 destination unreachable (no route) */
	ck_assert_uint_eq(txs[0].bytes[54], 1);
	ck_assert_uint_eq(txs[0].bytes[55], 0);
	for (uint32_t i = 0; i < ARRAY_LEN(want); i++)
		ck_assert_msg(l3_error_count("ip6-input", want[i].what) == want[i].n, "%s: %llu, want %u", want[i].what,
			      (unsigned long long)l3_error_count("ip6-input", want[i].what), want[i].n);
	ck_assert_uint_eq(l3_error_count("ip6-local", "ICMPv6 shorter than its header"), 0);
	ck_assert_uint_eq(l3_error_count("ip6-lookup", "no route"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-lookup", "no route: ICMPv6 destination unreachable sent"), 1);
}
END_TEST

/* Extension headers sluice accepts: a Hop-by-Hop with PadN then a
 * Destination Options header; the echo is answered without them. */
START_TEST(ext_headers_walked_to_echo)
{
	uint8_t f[256], w[256];
	uint32_t n = eth(f, mac_a, mac_ha, 0x86dd);
	n += ip6hdr(f + n, HA, A1, 0, 64, 16 + 8);
	uint8_t *e = f + n;
	memset(e, 0, 16);
	e[0] = 60;
	e[2] = 1;
	e[3] = 4;
	e[8] = 58;
	e[10] = 1;
	e[11] = 4;
	uint8_t *m = e + 16;
	memset(m, 0, 8);
	m[0] = 128;
	put16(m + 4, 0x1234);
	put16(m + 6, 7);
	put16(m + 2, ref_csum6(HA, A1, 58, m, 8));
	inject(dev_a, f, n + 24);
	poll_n(3);
	uint32_t wn = want_reply(w, A1, HA, 0);
	expect_tx(0, dev_a, w, wn);
}
END_TEST

/* RH0 with segments left to us: Parameter Problem code 0 pointing at the
 * routing type (RFC 5095 §3), exact; in transit: dropped by policy; the
 * errors are rate-limited: a burst of 10, the rest counted. */
START_TEST(rh0_param_problem_exact_and_rate_limited)
{
	uint8_t f[256], w[512];
	uint32_t n = ext_frame(f, 43, 1, A1, mac_a);
	f[54 + 2] = 0; /* type 0, segments left 4 */
	for (int k = 0; k < 12; k++)
		inject(dev_a, f, n);
	n = ext_frame(f, 43, 1, B9, mac_a);
	f[54 + 2] = 0;
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 10);
	ck_assert_uint_eq(l3_error_count("ip6-input", "Routing Header type 0 with segments left (RFC 5095)"), 12);
	ck_assert_uint_eq(l3_error_count("ip6-input", "ICMPv6 error sent"), 10);
	ck_assert_uint_eq(l3_error_count("ip6-input", "ICMPv6 error rate-limited (packet dropped)"), 2);
	ck_assert_uint_eq(l3_error_count("ip6-input", "Routing Header type 0 in transit (dropped: policy)"), 1);
	n = ext_frame(f, 43, 1, A1, mac_a);
	f[54 + 2] = 0;
	uint32_t wn = eth(w, mac_ha, mac_a, 0x86dd);
	uint32_t q = n - 14;
	wn += ip6hdr(w + wn, A1, HA, 58, 64, (uint16_t)(8 + q));
	uint8_t *m = w + wn;
	memset(m, 0, 8);
	m[0] = 4;
	put32(m + 4, 42); /* 40 + 2: the routing type */
	memcpy(m + 8, f + 14, q);
	put16(m + 2, ref_csum6(A1, HA, 58, m, 8 + q));
	expect_tx(0, dev_a, w, wn + 8 + q);
}
END_TEST

/* Transit with hop limit 1: Time Exceeded from the address facing the
 * source; an unknown option of action 10 to us: Parameter Problem 2. */
START_TEST(time_exceeded_and_option_problem)
{
	uint8_t f[256];
	uint32_t n = echo6(f, mac_a, mac_ha, HA, B9, 1, 128, 8);
	inject(dev_a, f, n);
	n = ext_frame(f, 0, 1, A1, mac_a);
	f[54 + 2] = 0x80; /* option 0x80: action 10 */
	f[54 + 3] = 4;
	inject(dev_a, f, n);
	n = ext_frame(f, 0, 1, A1, mac_a);
	f[54 + 2] = 0x40; /* action 01: silently */
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 2);
	ck_assert_uint_eq(txs[0].bytes[54], 3); /* Time Exceeded */
	ck_assert_int_eq(memcmp(txs[0].bytes + 22, A1, 16), 0);
	ck_assert_uint_eq(txs[1].bytes[54], 4); /* Parameter Problem */
	ck_assert_uint_eq(txs[1].bytes[55], 2);
	ck_assert_uint_eq(get32(txs[1].bytes + 58), 42);
	ck_assert_uint_eq(l3_error_count("ip6-input", "hop limit exceeded in transit"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-input", "unrecognized option (Parameter Problem)"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-input", "unrecognized option (discard silently)"), 1);
}
END_TEST

/* No ICMPv6 error about an ICMPv6 error (RFC 4443 §2.4(e.1)). */
START_TEST(no_error_about_error)
{
	uint8_t f[256];
	uint32_t n = echo6(f, mac_a, mac_ha, HA, B9, 1, 1, 8); /* a Destination Unreachable, hop limit 1 */
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 0);
	ck_assert_uint_eq(l3_error_count("ip6-input", "hop limit exceeded in transit"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-input", "ICMPv6 error not allowed (packet dropped)"), 1);
}
END_TEST

/* ---- Router Advertisements ---- */

static uint64_t sim_ns;
static uint64_t sim_clock(void)
{
	return sim_ns;
}

/* Poll (the ip6-ra process node wakes every 50 ms) until want frames left
 * or about 1 s went by. */
static void poll_until_tx(uint32_t want)
{
	for (uint32_t i = 0; i < 400 && n_tx < want; i++) {
		graph_main_poll(g);
		usleep(2500);
	}
}

/* Poll for 150 ms: the ip6-ra process node runs at least twice. */
static void poll_idle(void)
{
	for (int i = 0; i < 60; i++) {
		graph_main_poll(g);
		usleep(2500);
	}
}

/* A Router Solicitation (type 133) from src to ff02::2 with code, hop
 * limit, an optional source link-layer option, or a raw option of length
 * 0 when bad_opt. */
static uint32_t rs6(uint8_t *p, const uint8_t src[16], uint8_t hlim, uint8_t code, const uint8_t *sll, bool bad_opt)
{
	uint8_t all_r[16], rmac[6] = { 0x33, 0x33, 0, 0, 0, 2 };
	a6(all_r, "ff02::2");
	uint8_t *m = p + 54;
	memset(m, 0, 16);
	m[0] = 133;
	m[1] = code;
	if (sll) {
		m[8] = 1;
		m[9] = 1;
		memcpy(m + 10, sll, 6);
	} else if (bad_opt) {
		m[8] = 1; /* length 0 */
	}
	return icmp6_frame(p, rmac, mac_ha, src, all_r, hlim, sll || bad_opt ? 16 : 8);
}

/* The RA sluice's a sends, written out field by field (RFC 4861 §4.2,
 * §4.6.1, §4.6.2, §4.6.4): lifetime 1800, MTU 1500, 2001:db8:1::/64 with
 * L and A, valid 30 days, preferred 7 days. */
static uint32_t want_ra(uint8_t *w)
{
	uint8_t all[16], amac[6] = { 0x33, 0x33, 0, 0, 0, 1 }, pfx[16];
	a6(all, "ff02::1");
	a6(pfx, "2001:db8:1::");
	uint32_t n = eth(w, amac, mac_a, 0x86dd);
	uint8_t *m = w + n + 40;
	memset(m, 0, 64);
	m[0] = 134;
	m[4] = 64;        /* Cur Hop Limit */
	put16(m + 6, 1800); /* router lifetime */
	m[16] = 1;        /* source link-layer address */
	m[17] = 1;
	memcpy(m + 18, mac_a, 6);
	m[24] = 5; /* MTU */
	m[25] = 1;
	put32(m + 28, 1500);
	m[32] = 3; /* prefix information */
	m[33] = 4;
	m[34] = 64;
	m[35] = 0xc0; /* on-link, autonomous */
	put32(m + 36, 2592000);
	put32(m + 40, 604800);
	memcpy(m + 48, pfx, 16);
	n += ip6hdr(w + n, LL_A, all, 58, 255, 64);
	put16(m + 2, ref_csum6(LL_A, all, 58, m, 64));
	return n + 64;
}

static void ra_on(uint32_t interval_s)
{
	memset(ip6_ra_ifs, 0, sizeof(ip6_ra_ifs));
	ip6_nbr_clock = sim_clock;
	sim_ns = 1000 * 1000000000ull;
	dev_a->mtu = 1500;
	struct ip6_ra_config c;
	ip6_ra_config_default(&c);
	c.interval_s = interval_s;
	ck_assert_msg(ip6_ra_enable(dev_a->index, &c, err, sizeof(err)) == 0, "%s", err);
}

static void ra_off(void)
{
	memset(ip6_ra_ifs, 0, sizeof(ip6_ra_ifs));
	ip6_nbr_clock = NULL;
}

START_TEST(rs_answered_exact_and_rate_limited)
{
	ra_on(10);
	/* §6.2.4: the first unsolicited RA within [3.3 s, 10 s]. */
	uint64_t first = ip6_ra_ifs[dev_a->index].next_ns - sim_ns;
	ck_assert_uint_ge(first, 3300000000ull);
	ck_assert_uint_le(first, 10000000000ull);
	uint8_t f[256], w[256];
	inject(dev_a, f, rs6(f, HA, 255, 0, mac_ha, false));
	poll_until_tx(1);
	ck_assert_uint_eq(n_tx, 1);
	uint32_t wn = want_ra(w);
	expect_tx(0, dev_a, w, wn);
	ck_assert_uint_eq(l3_error_count("ip6-rs", "Router Solicitation taken (RA scheduled)"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-ra", "Router Advertisements answering a solicitation"), 1);
	/* The option taught host A's MAC (STALE). */
	struct in6_addr ha;
	memcpy(&ha, HA, 16);
	ip6_nbr_lock();
	const struct ip6_nbr *nb = ip6_nbr_lookup(dev_a->index, &ha);
	ck_assert_ptr_nonnull(nb);
	ck_assert_uint_eq(nb->state, IP6_NBR_STALE);
	ip6_nbr_unlock();
	/* One second later: within MIN_DELAY_BETWEEN_RAS, held back. */
	sim_ns += 1000000000ull;
	inject(dev_a, f, rs6(f, LL_HA, 255, 0, NULL, false));
	poll_idle();
	ck_assert_uint_eq(n_tx, 1);
	ck_assert_uint_eq(ip6_ra_ifs[dev_a->index].next_ns, sim_ns + 2000000000ull);
	sim_ns += 2000000000ull; /* 3 s after the first: sent */
	poll_until_tx(2);
	ck_assert_uint_eq(n_tx, 2);
	expect_tx(1, dev_a, w, wn);
	ck_assert_uint_eq(ip6_ra_ifs[dev_a->index].n_solicited, 2);
	ck_assert_uint_eq(ip6_ra_ifs[dev_a->index].n_rs, 2);
	/* The next unsolicited one: an initial RA, within [3.3 s, 10 s]. */
	uint64_t next = ip6_ra_ifs[dev_a->index].next_ns - sim_ns;
	ck_assert_uint_ge(next, 3300000000ull);
	ck_assert_uint_le(next, 10000000000ull);
	sim_ns += next;
	poll_until_tx(3);
	ck_assert_uint_eq(n_tx, 3);
	expect_tx(2, dev_a, w, wn);
	ck_assert_uint_eq(l3_error_count("ip6-ra", "Router Advertisements sent"), 3);
	ck_assert_uint_eq(ip6_ra_ifs[dev_a->index].n_solicited, 2);
	ra_off();
}
END_TEST

START_TEST(rs_hostile_counted)
{
	ra_on(600);
	uint8_t f[256], unspec[16] = { 0 };
	inject(dev_a, f, rs6(f, HA, 64, 0, mac_ha, false));       /* hop limit 64 */
	inject(dev_a, f, rs6(f, HA, 255, 1, mac_ha, false));      /* code 1 */
	inject(dev_a, f, rs6(f, unspec, 255, 0, mac_ha, false));  /* from :: with an option */
	inject(dev_a, f, rs6(f, HA, 255, 0, NULL, true));         /* option of length 0 */
	ck_assert_int_eq(ip6_if_enable(dev_b->index, err, sizeof(err)), 0);
	inject(dev_b, f, rs6(f, HA, 255, 0, NULL, false)); /* b does not advertise */
	poll_idle();
	ck_assert_uint_eq(n_tx, 0);
	ck_assert_uint_eq(l3_error_count("ip6-rs", "RS hop limit not 255"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-rs", "RS code not 0"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-rs", "RS from :: with a source link-layer option"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-rs", "RS option of length 0 or beyond the message"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-rs", "Router Solicitation on an interface not advertising"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-rs", "Router Solicitation taken (RA scheduled)"), 0);
	ck_assert_uint_eq(ip6_ra_ifs[dev_a->index].n_rs, 0);
	/* From :: without an option: valid (RFC 4861 §6.1.1), answered. */
	inject(dev_a, f, rs6(f, unspec, 255, 0, NULL, false));
	poll_until_tx(1);
	ck_assert_uint_eq(n_tx, 1);
	ck_assert_uint_eq(ip6_nbr_count(), 0);
	/* Bad settings change nothing. */
	struct ip6_ra_config c;
	ip6_ra_config_default(&c);
	c.interval_s = 3;
	ck_assert_int_eq(ip6_ra_enable(dev_a->index, &c, err, sizeof(err)), -EINVAL);
	c.interval_s = 10;
	c.lifetime_s = 5;
	ck_assert_int_eq(ip6_ra_enable(dev_a->index, &c, err, sizeof(err)), -EINVAL);
	ck_assert_uint_eq(ip6_ra_ifs[dev_a->index].cfg.interval_s, 600);
	/* An initial RA's interval is capped at 16 s; a shorter MaxRtrAdvInterval applies at once. */
	ck_assert_uint_eq(ip6_ra_ifs[dev_a->index].next_ns - sim_ns, 16000000000ull);
	c.lifetime_s = 1800;
	ck_assert_int_eq(ip6_ra_enable(dev_a->index, &c, err, sizeof(err)), 0);
	ck_assert_uint_le(ip6_ra_ifs[dev_a->index].next_ns - sim_ns, 10000000000ull);
	ck_assert_uint_ge(ip6_ra_ifs[dev_a->index].next_ns - sim_ns, 3300000000ull);
	ip6_ra_disable(dev_a->index);
	ck_assert(!ip6_ra_ifs[dev_a->index].on);
	ra_off();
}
END_TEST

START_TEST(dad_probe_and_duplicate)
{
	ip6_dad_transmits = 1;
	ip6_nbr_clock = sim_clock;
	sim_ns = 1000 * 1000000000ull;
	/* a's link-local address and 2001:db8:1::1 are probed, each once. */
	poll_until_tx(2);
	ck_assert_uint_eq(n_tx, 2);
	uint8_t w[128], unspec[16] = { 0 }, sn_ll[16];
	a6(sn_ll, "ff02::1:ff00:a");
	const uint8_t *targets[2] = { LL_A, A1 };
	const uint8_t *groups[2] = { sn_ll, SN_A1 };
	for (uint32_t k = 0; k < 2; k++) {
		uint8_t smac[6] = { 0x33, 0x33, 0xff, 0, 0, groups[k][15] };
		uint32_t n = icmp6_frame(w, smac, mac_a, unspec, groups[k], 255, icmp6_ns_msg(w + 54, targets[k], NULL));
		expect_tx(k, dev_a, w, n);
	}
	struct in6_addr a1, ll;
	memcpy(&a1, A1, 16);
	memcpy(&ll, LL_A, 16);
	ck_assert_uint_eq(ip6_dad_state(dev_a->index, &a1), IP6_DAD_TENTATIVE);
	/* Host A advertises 2001:db8:1::1: duplicated; the link-local address
	 * is preferred after RetransTimer. */
	uint8_t f[128], all[16], amac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	a6(all, "ff02::1");
	inject(dev_a, f, na6(f, amac, HA, all, 255, 0x20, A1, mac_ha));
	sim_ns += IP6_DAD_RETRANS_NS;
	poll_idle();
	ck_assert_uint_eq(ip6_dad_state(dev_a->index, &a1), IP6_DAD_DUPLICATE);
	ck_assert_uint_eq(ip6_dad_state(dev_a->index, &ll), IP6_DAD_PREFERRED);
	ck_assert_uint_eq(l3_error_count("ip6-nd", "NA for one of our addresses (duplicate?)"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-ra", "DAD probes sent (NS from ::, ip6_dad.h)"), 2);
	ck_assert_uint_eq(n_tx, 2);
	/* Deleted and added again: probed again. */
	ck_assert_int_eq(ip6_if_addr_del(dev_a->index, &a1, 64, err, sizeof(err)), 0);
	graph_main_poll(g);
	usleep(60000);
	graph_main_poll(g);
	ck_assert_int_eq(ip6_if_addr_add(dev_a->index, &a1, 64, err, sizeof(err)), 0);
	poll_until_tx(3);
	ck_assert_uint_eq(n_tx, 3);
	ck_assert_uint_eq(ip6_dad_state(dev_a->index, &a1), IP6_DAD_TENTATIVE);
	ip6_nbr_clock = NULL;
	ip6_dad_transmits = 0;
}
END_TEST

/* ---- forwarding: ip6-lookup, ip6-rewrite, ip6-glean ----
 *
 *   host A 2001:db8:1::2 -- a [sluice] b 2001:db8:2::1/64 -- router R 2001:db8:2::2 (02:bb:..:02)
 *   2001:db8:9::/48 via R
 */

static const uint8_t mac_r[6] = { 0x02, 0xbb, 0, 0, 0, 0x02 };

static void pa(struct in6_addr *a, const char *s)
{
	a6(a->s6_addr, s);
}

/* b gets 2001:db8:2::1/64, R (static neighbour when known) and the /48. */
static void setup_fwd(bool r_known, const char *via)
{
	struct in6_addr a, p, nh;
	pa(&a, "2001:db8:2::1");
	ck_assert_msg(ip6_if_addr_add(dev_b->index, &a, 64, err, sizeof(err)) == 0, "%s", err);
	pa(&nh, "2001:db8:2::2");
	if (r_known)
		ck_assert_msg(ip6_nbr_set(dev_b->index, &nh, mac_r, true, err, sizeof(err)) == 0, "%s", err);
	pa(&p, "2001:db8:9::");
	pa(&nh, via);
	ck_assert_msg(ip6_route_add(&p, 48, &nh, DEV_INDEX_INVALID, err, sizeof(err)) == 0, "%s", err);
}

START_TEST(forward_exact)
{
	uint8_t f[256], w[256], D[16], R[16];
	setup_fwd(true, "2001:db8:2::2");
	a6(D, "2001:db8:9::5");
	a6(R, "2001:db8:2::2");
	uint32_t n = echo6(f, mac_a, mac_ha, HA, D, 64, 128, 56);
	inject(dev_a, f, n);
	n = echo6(f, mac_a, mac_ha, HA, R, 2, 128, 3); /* on-link, by its host route */
	inject(dev_a, f, n);
	for (uint32_t k = 0; k < 5; k++) { /* four through ip6-rewrite's fast path, one after */
		n = echo6(f, mac_a, mac_ha, HA, D, (uint8_t)(10 + k), 128, 8 + k);
		inject(dev_a, f, n);
	}
	poll_n(3);
	ck_assert_uint_eq(n_tx, 7);
	/* The same packet, hop limit one less (not in the checksum), new MACs. */
	n = echo6(w, mac_r, mac_b, HA, D, 63, 128, 56);
	expect_tx(0, dev_b, w, n);
	n = echo6(w, mac_r, mac_b, HA, R, 1, 128, 3);
	expect_tx(1, dev_b, w, n);
	for (uint32_t k = 0; k < 5; k++) {
		n = echo6(w, mac_r, mac_b, HA, D, (uint8_t)(9 + k), 128, 8 + k);
		expect_tx(2 + k, dev_b, w, n);
	}
	n_tx = 0;
	/* The routes: local, connected, host, via. */
	struct in6_addr x;
	uint32_t r;
	pa(&x, "2001:db8:2::1");
	ck_assert_int_eq(ip6_fib_get(ip6_fib_main, &x, 128, &r), 0);
	ck_assert_uint_eq(ip6_adj_get(r)->kind, IP6_ADJ_LOCAL);
	pa(&x, "2001:db8:2::");
	ck_assert_int_eq(ip6_fib_get(ip6_fib_main, &x, 64, &r), 0);
	ck_assert_uint_eq(ip6_adj_get(r)->kind, IP6_ADJ_GLEAN);
	pa(&x, "2001:db8:2::2");
	ck_assert_int_eq(ip6_fib_get(ip6_fib_main, &x, 128, &r), 0);
	ck_assert_uint_eq(ip6_adj_get(r)->kind, IP6_ADJ_REWRITE);
	/* A connected or local route is the address's; a bad next hop. */
	pa(&x, "2001:db8:2::");
	struct in6_addr nh;
	pa(&nh, "2001:db8:2::2");
	ck_assert_int_eq(ip6_route_add(&x, 64, &nh, DEV_INDEX_INVALID, err, sizeof(err)), -EPERM);
	ck_assert_int_eq(ip6_route_del(&x, 64, err, sizeof(err)), -EPERM);
	pa(&nh, "2001:db8:77::2");
	ck_assert_int_eq(ip6_route_add(&x, 56, &nh, DEV_INDEX_INVALID, err, sizeof(err)), -EINVAL);
	/* Deleting the /48: no route. */
	pa(&x, "2001:db8:9::");
	ck_assert_int_eq(ip6_route_del(&x, 48, err, sizeof(err)), 0);
	ck_assert_int_eq(ip6_route_del(&x, 48, err, sizeof(err)), -ENOENT);
	n = echo6(f, mac_a, mac_ha, HA, D, 64, 128, 56);
	inject(dev_a, f, n);
	poll_n(2);
	/* RFC 4443 §3.1: Destination Unreachable, code 0 (no route), from a's
	 * address, quoting the whole packet. */
	ck_assert_uint_eq(n_tx, 1);
	uint8_t *m = w + 54;
	memset(m, 0, 8);
	m[0] = 1;
	memcpy(m + 8, f + 14, n - 14);
	uint32_t wn = icmp6_frame(w, mac_ha, mac_a, A1, HA, 64, 8 + n - 14);
	expect_tx(0, dev_a, w, wn);
	ck_assert_uint_eq(l3_error_count("ip6-lookup", "no route"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-lookup", "no route: ICMPv6 destination unreachable sent"), 1);
	/* The address gone: its routes too. */
	pa(&x, "2001:db8:2::1");
	ck_assert_int_eq(ip6_if_addr_del(dev_b->index, &x, 64, err, sizeof(err)), 0);
	ck_assert_int_eq(ip6_fib_get(ip6_fib_main, &x, 128, &r), -ENOENT);
	pa(&x, "2001:db8:2::");
	ck_assert_int_eq(ip6_fib_get(ip6_fib_main, &x, 64, &r), -ENOENT);
}
END_TEST

/* 16 echo requests to D from 2001:db8:1::100..10f (16 flows), forwarded. */
static void send_16_flows(const uint8_t D[16])
{
	uint8_t f[256], S[16];
	n_tx = 0;
	for (uint32_t k = 0; k < 16; k++) {
		a6(S, "2001:db8:1::100");
		S[15] = (uint8_t)k;
		uint32_t n = echo6(f, mac_a, mac_ha, S, D, 64, 128, k);
		inject(dev_a, f, n);
	}
	poll_n(3);
	ck_assert_uint_eq(n_tx, 16);
}

/* ECMP: a route with two paths (R and R2 on b) spreads flows by hash,
 * each flow on one path every time; the CLI's `ip route add` of a second
 * path makes the load balance, a path removed moves only its flows. The
 * flows: 16 sources (ICMPv6 hashes by addresses and next header). */
START_TEST(ecmp_per_flow)
{
	static const uint8_t mac_r2[6] = { 0x02, 0xbb, 0, 0, 0, 0x03 };
	uint8_t D[16];
	setup_fwd(true, "2001:db8:2::2");
	struct in6_addr p, r2;
	pa(&r2, "2001:db8:2::3");
	ck_assert_int_eq(ip6_nbr_set(dev_b->index, &r2, mac_r2, true, err, sizeof(err)), 0);
	pa(&p, "2001:db8:9::");
	struct ip6_route_path two = { .kind = IP6_ADJ_REWRITE, .if_index = dev_b->index, .next_hop = r2 };
	ck_assert_msg(ip6_route_src_path_add(IP6_SRC_CLI, &p, 48, &two, 1, err, sizeof(err)) == 0, "%s", err);
	uint32_t r;
	ck_assert_int_eq(ip6_fib_get(ip6_fib_main, &p, 48, &r), 0);
	ck_assert_uint_eq(ip6_adj_get(r)->kind, IP6_ADJ_LB);
	a6(D, "2001:db8:9::5");
	uint8_t first[16];
	for (int round = 0; round < 2; round++) {
		send_16_flows(D);
		uint32_t on_r2 = 0;
		for (uint32_t k = 0; k < 16; k++) {
			ck_assert_uint_eq(txs[k].if_index, dev_b->index);
			uint8_t last = txs[k].bytes[5]; /* the destination MAC: R's or R2's */
			ck_assert(last == 2 || last == 3);
			on_r2 += last == 3;
			if (round == 0)
				first[txs[k].bytes[14 + 8 + 15]] = last; /* by source */
			else
				ck_assert_uint_eq(first[txs[k].bytes[14 + 8 + 15]], last); /* each flow stays */
		}
		ck_assert_uint_gt(on_r2, 0);
		ck_assert_uint_lt(on_r2, 16);
	}
	/* R2 gone from the route: every flow on R, and no flow that was on R moved */
	struct ip6_route_path one = { .kind = IP6_ADJ_REWRITE, .if_index = dev_b->index };
	pa(&one.next_hop, "2001:db8:2::2");
	ck_assert_int_eq(ip6_route_src_set(IP6_SRC_CLI, &p, 48, &one, 1, err, sizeof(err)), 0);
	send_16_flows(D);
	for (uint32_t k = 0; k < 16; k++)
		ck_assert_uint_eq(txs[k].bytes[5], 2);
	n_tx = 0;
}
END_TEST

/* Over b's MTU: Packet Too Big to the source with the MTU and as much of
 * the packet as fits in 1280 bytes (RFC 4443 §3.2), from a's address. */
START_TEST(packet_too_big_exact)
{
	static uint8_t f[2048], w[2048];
	uint8_t D[16];
	setup_fwd(true, "2001:db8:2::2");
	dev_b->mtu = 1280;
	a6(D, "2001:db8:9::5");
	uint32_t n = echo6(f, mac_a, mac_ha, HA, D, 64, 128, 1300 - 48); /* 1300 bytes of IPv6 */
	ck_assert_uint_eq(n, 14 + 1300);
	inject(dev_a, f, n);
	n = echo6(f, mac_a, mac_ha, HA, D, 64, 128, 1280 - 48); /* exactly the MTU: forwarded */
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 2);
	uint8_t *m = w + 54;
	m[0] = 2;
	m[1] = 0;
	put32(m + 4, 1280);
	uint8_t orig[2048];
	echo6(orig, mac_a, mac_ha, HA, D, 64, 128, 1300 - 48);
	memcpy(m + 8, orig + 14, 1280 - 48);
	uint32_t wn = icmp6_frame(w, mac_ha, mac_a, A1, HA, 64, 8 + 1280 - 48);
	ck_assert_uint_eq(wn, 14 + 1280);
	expect_tx(0, dev_a, w, wn);
	ck_assert_uint_eq(txs[1].if_index, dev_b->index);
	ck_assert_uint_eq(txs[1].len, 14 + 1280);
	ck_assert_uint_eq(l3_error_count("ip6-rewrite", "over MTU: ICMPv6 packet too big sent"), 1);
}
END_TEST

/* The Neighbor Solicitation ip6-glean sends for next hop nh out of b. */
static uint32_t want_ns(uint8_t *w, const uint8_t nh[16])
{
	uint8_t src[16], sn[16], dmac[6] = { 0x33, 0x33, 0xff, nh[13], nh[14], nh[15] };
	a6(src, "2001:db8:2::1");
	a6(sn, "ff02::1:ff00:0");
	memcpy(sn + 13, nh + 13, 3);
	return icmp6_frame(w, dmac, mac_b, src, sn, 255, icmp6_ns_msg(w + 54, nh, mac_b));
}

/* An unresolved next hop: one NS (RFC 4861 §7.2.2) and the packets held
 * (tests/ip6/test_ip6_nd.c has the timers); the NA resolves it and the
 * held packets leave. */
START_TEST(unresolved_sends_ns)
{
	uint8_t f[256], w[256], D[16], R3[16], H7[16], B1[16];
	setup_fwd(false, "2001:db8:2::3");
	a6(D, "2001:db8:9::5");
	a6(R3, "2001:db8:2::3");
	a6(H7, "2001:db8:2::7");
	a6(B1, "2001:db8:2::1");
	uint32_t n = echo6(f, mac_a, mac_ha, HA, D, 64, 128, 8);
	inject(dev_a, f, n);
	inject(dev_a, f, n);
	n = echo6(f, mac_a, mac_ha, HA, H7, 64, 128, 8); /* a host on b's prefix: glean */
	inject(dev_a, f, n);
	poll_n(3);
	ck_assert_uint_eq(n_tx, 2);
	n = want_ns(w, R3);
	expect_tx(0, dev_b, w, n);
	n = want_ns(w, H7);
	expect_tx(1, dev_b, w, n);
	ck_assert_uint_eq(l3_error_count("ip6-glean", "NS sent (resolution started)"), 2);
	ck_assert_uint_eq(l3_error_count("ip6-glean", "held for neighbour resolution"), 3);
	/* R answers; its MAC reaches the adjacency; the held packets and the
	 * next one go (ip6-nd-timer runs every millisecond). */
	n = na6(f, mac_b, R3, B1, 255, 0x60, R3, mac_r);
	inject(dev_b, f, n);
	for (uint32_t i = 0; i < 400 && n_tx < 4; i++) {
		graph_main_poll(g);
		usleep(1000);
	}
	ck_assert_uint_eq(n_tx, 4);
	n = echo6(w, mac_r, mac_b, HA, D, 63, 128, 8);
	expect_tx(2, dev_b, w, n);
	expect_tx(3, dev_b, w, n);
	ck_assert_uint_eq(l3_error_count("ip6-nd-timer", "held packets released"), 2);
	n = echo6(f, mac_a, mac_ha, HA, D, 64, 128, 8);
	inject(dev_a, f, n);
	poll_n(2);
	ck_assert_uint_eq(n_tx, 5);
	expect_tx(4, dev_b, w, n);
}
END_TEST

/* A table full of INCOMPLETE entries: none reusable within 3 s of their
 * creation, the oldest after (RFC 4861 §7.3.3), the count unchanged. */
START_TEST(incomplete_entries_recycled)
{
	struct in6_addr x;
	pa(&x, "2001:db8:2::");
	ip6_nbr_lock();
	for (uint32_t i = 0; i < IP6_NBR_MAX; i++) {
		x.s6_addr[14] = (uint8_t)(i >> 8);
		x.s6_addr[15] = (uint8_t)i;
		ck_assert_ptr_nonnull(ip6_nbr_create(dev_b->index, &x, 1000));
	}
	x.s6_addr[13] = 1;
	ck_assert_ptr_null(ip6_nbr_create(dev_b->index, &x, 1000 + 2999999999ull));
	struct ip6_nbr *n = ip6_nbr_create(dev_b->index, &x, 1000 + IP6_NBR_INCOMPLETE_MAX_NS);
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->state, IP6_NBR_INCOMPLETE);
	ck_assert_ptr_eq(ip6_nbr_lookup(dev_b->index, &x), n);
	ip6_nbr_unlock();
	ck_assert_uint_eq(ip6_nbr_count(), IP6_NBR_MAX);
}
END_TEST

static Suite *ip6_suite(void)
{
	Suite *s = suite_create("ip6");
	TCase *tc = tcase_create("nodes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, link_local_and_groups);
	tcase_add_test(tc, echo_reply_exact);
	tcase_add_test(tc, echo_multicast_from_link_local);
	tcase_add_test(tc, icmp6_bad_checksum_counted);
	tcase_add_test(tc, ns_answered_exact);
	tcase_add_test(tc, nd_hostile_counted);
	tcase_add_test(tc, na_updates_neighbor);
	tcase_add_test(tc, ip6_input_hostile_counted);
	tcase_add_test(tc, ext_headers_walked_to_echo);
	tcase_add_test(tc, rh0_param_problem_exact_and_rate_limited);
	tcase_add_test(tc, time_exceeded_and_option_problem);
	tcase_add_test(tc, no_error_about_error);
	tcase_add_test(tc, forward_exact);
	tcase_add_test(tc, ecmp_per_flow);
	tcase_add_test(tc, packet_too_big_exact);
	tcase_add_test(tc, unresolved_sends_ns);
	tcase_add_test(tc, incomplete_entries_recycled);
	suite_add_tcase(s, tc);
	TCase *ra = tcase_create("ra");
	tcase_add_checked_fixture(ra, setup, teardown);
	tcase_add_test(ra, rs_answered_exact_and_rate_limited);
	tcase_add_test(ra, rs_hostile_counted);
	tcase_add_test(ra, dad_probe_and_duplicate);
	suite_add_tcase(s, ra);
	return s;
}

int main(void)
{
	return check_run_suite(ip6_suite());
}
