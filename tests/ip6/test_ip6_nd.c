/* Neighbor Discovery's state machine (RFC 4861 §7.2, §7.3) through the
 * whole registered graph, with a simulated clock: thread 0 gets a timer
 * service on that clock (the loop hook advances it), and the neighbour
 * table reads the same clock. Exact frames out, state sequences, NS
 * counts, the hold bound and the drop counters.
 *
 *   host A 2001:db8:1::2 -- a 2001:db8:1::1/64 [sluice] b 2001:db8:2::1/64 -- H 2001:db8:2::7 (02:cc:..:07)
 *
 * Every step advances the simulated clock and then polls the graph for a
 * few real milliseconds (the ip6-nd-timer process node, which arms the
 * timers, wakes every millisecond of real time). Every test ends with no
 * buffer in use. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bytes.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "graph/node.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_dad.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_ra.h"
#include "nodes/ip6/ip6_route.h"
#include "sched/timer.h"
#include "tests/check_run.h"
#include "tests/ip6/ip6_frames.h"

static struct graph *g;
#include "tests/l3_harness.h"

#define MS 1000000ull
#define SEC 1000000000ull

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0b };
static const uint8_t mac_ha[6] = { 0x02, 0xaa, 0, 0, 0, 0x01 };
static const uint8_t mac_h[6] = { 0x02, 0xcc, 0, 0, 0, 0x07 };
static const uint8_t mac_h2[6] = { 0x02, 0xcc, 0, 0, 0, 0x08 };
static uint8_t A1[16] __attribute__((aligned(4))), HA[16], B1[16] __attribute__((aligned(4))),
	H[16] __attribute__((aligned(4))), SN_H[16];
static struct device *dev_a, *dev_b;
static struct timer_service *ts;
static uint64_t sim_ns;
static char err[256];

/* ---- frames (tests/ip6/ip6_frames.h) ---- */

/* An echo request from A to dst with sequence seq and 8 data bytes. */
static uint32_t echo(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], const uint8_t dst[16], uint8_t hlim,
		     uint16_t seq)
{
	uint8_t *m = p + 54;
	m[0] = 128;
	m[1] = 0;
	put16(m + 4, 0x4242);
	put16(m + 6, seq);
	for (uint32_t i = 0; i < 8; i++)
		m[8 + i] = (uint8_t)(0x30 + i);
	return icmp6_frame(p, dmac, smac, HA, dst, hlim, 16);
}

/* The NS sluice sends for H out of b: multicast to H's solicited-node
 * group, or unicast to H at dmac (a probe). */
static uint32_t want_ns(uint8_t *w, bool unicast, const uint8_t dmac[6])
{
	uint8_t sn_mac[6] = { 0x33, 0x33, 0xff, H[13], H[14], H[15] };
	uint32_t l4 = icmp6_ns_msg(w + 54, H, mac_b);
	return icmp6_frame(w, unicast ? dmac : sn_mac, mac_b, B1, unicast ? H : SN_H, 255, l4);
}

/* An NA from H about itself (flags: R 0x80, S 0x40, O 0x20) with a target
 * link-layer option tll, to sluice's b address. */
static uint32_t na_from_h(uint8_t *p, uint8_t flags, const uint8_t tll[6])
{
	return icmp6_frame(p, mac_b, tll, H, B1, 255, icmp6_na_msg(p + 54, flags, H, tll));
}

/* The echo request of seq as forwarded to H (hop limit one less). */
static uint32_t want_fwd(uint8_t *w, uint16_t seq)
{
	return echo(w, mac_h, mac_b, H, 63, seq);
}

/* Destination Unreachable code 3 to A about the echo of seq (RFC 4443
 * §3.1), from a's address, quoting the packet as received. */
static uint32_t want_unreach(uint8_t *w, uint16_t seq)
{
	uint8_t orig[128];
	uint32_t n = echo(orig, mac_a, mac_ha, H, 64, seq);
	uint8_t *m = w + 54;
	memset(m, 0, 8);
	m[0] = 1;
	m[1] = 3;
	memcpy(m + 8, orig + 14, n - 14);
	uint32_t l4 = 8 + n - 14;
	return icmp6_frame(w, mac_ha, mac_a, A1, HA, 64, l4);
}


/* ---- the clock ---- */

/* Atomic: the cross-thread test reads it from a second thread. */
static uint64_t sim_clock(void)
{
	return __atomic_load_n(&sim_ns, __ATOMIC_RELAXED);
}

static uint64_t sim_clock_ts(void *arg)
{
	(void)arg;
	return sim_clock();
}

static uint32_t hook(struct graph_thread *t, void *arg)
{
	(void)t, (void)arg;
	return timer_advance(ts, sim_clock());
}

/* Poll for a few real milliseconds: ip6-nd-timer arms what was asked,
 * due timers fire, their packets leave. */
static void settle(void)
{
	for (int i = 0; i < 4; i++) {
		graph_main_poll(g);
		usleep(1200);
	}
	poll_n(1);
}

static void advance(uint64_t ns)
{
	__atomic_add_fetch(&sim_ns, ns, __ATOMIC_RELAXED);
	settle();
}

/* H's entry's state, IP6_NBR_FREE when none. */
static uint8_t h_state(void)
{
	ip6_nbr_lock();
	const struct ip6_nbr *n = ip6_nbr_lookup(dev_b->index, (const ip6_addr_a2 *)H);
	uint8_t s = n ? n->state : IP6_NBR_FREE;
	ip6_nbr_unlock();
	return s;
}

static uint32_t h_held(void)
{
	ip6_nbr_lock();
	const struct ip6_nbr *n = ip6_nbr_lookup(dev_b->index, (const ip6_addr_a2 *)H);
	uint32_t k = n ? n->n_held : 0;
	ip6_nbr_unlock();
	return k;
}

/* ---- fixture ---- */

static void setup(void)
{
	ip6_dad_transmits = 0;
	memset(ip6_dad_ifs, 0, sizeof(ip6_dad_ifs));
	ip6_nd_timing = (struct ip6_nd_timing){ IP6_ND_REACHABLE_TIME_NS, IP6_ND_RETRANS_TIMER_NS,
						IP6_ND_DELAY_FIRST_PROBE_NS };
	__atomic_store_n(&sim_ns, 1000 * SEC, __ATOMIC_RELAXED);
	ip6_nbr_clock = sim_clock;
	l3_graph_up(4096, err, sizeof(err));
	struct timer_config tc;
	timer_config_default(&tc);
	tc.max_timers = 4096;
	ts = timer_service_create(&tc, sim_clock_ts, NULL, err, sizeof(err));
	ck_assert_msg(ts, "%s", err);
	ck_assert_int_eq(timer_service_bind(ts, g, 0), 0);
	graph_thread_set_user(graph_thread_get(g, 0), ts);
	graph_set_loop_hook(g, hook, NULL);
	dev_a = tdev_create("a", mac_a);
	dev_b = tdev_create("b", mac_b);
	dev_a->mtu = dev_b->mtu = 1500;
	a6(A1, "2001:db8:1::1");
	a6(HA, "2001:db8:1::2");
	a6(B1, "2001:db8:2::1");
	a6(H, "2001:db8:2::7");
	a6(SN_H, "ff02::1:ff00:7");
	ck_assert_msg(ip6_if_addr_add(dev_a->index, (const ip6_addr_a2 *)A1, 64, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(ip6_if_addr_add(dev_b->index, (const ip6_addr_a2 *)B1, 64, err, sizeof(err)) == 0, "%s", err);
	settle();
	n_tx = 0;
}

static void teardown(void)
{
	graph_set_loop_hook(g, NULL, NULL);
	graph_thread_set_user(graph_thread_get(g, 0), NULL);
	dev_graph_detach(g);
	graph_destroy(g);
	g = NULL;
	timer_service_destroy(ts);
	ts = NULL;
	ip6_nbr_flush(DEV_INDEX_INVALID, NULL, 0);
	ip6_nbr_clock = NULL;
	dev_delete_all();
	ip6_main_free();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_thread_unregister();
	buffer_main_free();
	free(txs);
}

static void send_echo(uint16_t seq)
{
	uint8_t f[128];
	uint32_t n = echo(f, mac_a, mac_ha, H, 64, seq);
	inject(dev_a, f, n);
}

static void expect_ns(uint32_t i, bool unicast)
{
	uint8_t w[128];
	uint32_t n = want_ns(w, unicast, mac_h);
	expect_tx(i, dev_b, w, n);
}

/* H resolved: one packet, the multicast NS, H's solicited NA; the packet
 * leaves. n_tx back to 0. */
static void resolve_h(void)
{
	uint8_t f[128], w[128];
	send_echo(1);
	settle();
	ck_assert_uint_eq(n_tx, 1);
	expect_ns(0, false);
	uint32_t n = na_from_h(f, 0x60, mac_h);
	inject(dev_b, f, n);
	settle();
	ck_assert_uint_eq(n_tx, 2);
	n = want_fwd(w, 1);
	expect_tx(1, dev_b, w, n);
	ck_assert_uint_eq(h_state(), IP6_NBR_REACHABLE);
	n_tx = 0;
}

/* ---- tests ---- */

/* INCOMPLETE: six packets, four held (the oldest two dropped, §7.2.2),
 * MAX_MULTICAST_SOLICIT (3) NS RetransTimer (1 s) apart, then resolution
 * failed: Destination Unreachable code 3 for each held packet, exact, and
 * the entry gone. */
START_TEST(resolution_fails_unreachable_exact)
{
	uint8_t w[256];
	for (uint16_t k = 0; k < 6; k++)
		send_echo(k);
	settle();
	ck_assert_uint_eq(n_tx, 1);
	expect_ns(0, false);
	ck_assert_uint_eq(h_state(), IP6_NBR_INCOMPLETE);
	ck_assert_uint_eq(h_held(), IP6_NBR_HOLD);
	ck_assert_uint_eq(l3_error_count("ip6-glean", "held for neighbour resolution"), 6);
	ck_assert_uint_eq(l3_error_count("ip6-glean", "hold queue full: oldest held packet dropped"), 2);
	ck_assert_uint_eq(l3_error_count("ip6-glean", "NS sent (resolution started)"), 1);
	advance(999 * MS);
	ck_assert_uint_eq(n_tx, 1);
	advance(1 * MS);
	ck_assert_uint_eq(n_tx, 2);
	expect_ns(1, false);
	advance(999 * MS);
	ck_assert_uint_eq(n_tx, 2);
	advance(1 * MS);
	ck_assert_uint_eq(n_tx, 3);
	expect_ns(2, false);
	ck_assert_uint_eq(h_state(), IP6_NBR_INCOMPLETE);
	advance(999 * MS);
	ck_assert_uint_eq(n_tx, 3);
	advance(1 * MS);
	ck_assert_uint_eq(n_tx, 3 + IP6_NBR_HOLD);
	for (uint16_t k = 0; k < IP6_NBR_HOLD; k++) {
		uint32_t n = want_unreach(w, (uint16_t)(2 + k));
		expect_tx(3 + k, dev_a, w, n);
	}
	ck_assert_uint_eq(h_state(), IP6_NBR_FREE);
	ck_assert_uint_eq(l3_error_count("ip6-nd-timer", "multicast NS retransmitted"), 2);
	ck_assert_uint_eq(l3_error_count("ip6-nd-timer", "address resolution failed"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-nd-timer", "held packet: ICMPv6 address unreachable sent"), IP6_NBR_HOLD);
	/* Nothing more: no timer left. */
	advance(10 * SEC);
	ck_assert_uint_eq(n_tx, 3 + IP6_NBR_HOLD);
	/* The next packet starts afresh. */
	send_echo(9);
	settle();
	ck_assert_uint_eq(n_tx, 4 + IP6_NBR_HOLD);
	expect_ns(3 + IP6_NBR_HOLD, false);
	ck_assert_uint_eq(h_state(), IP6_NBR_INCOMPLETE);
}
END_TEST

/* REACHABLE for ReachableTime (30 s x [0.5, 1.5]), STALE, used: DELAY
 * (the packet leaves on the cached MAC), DELAY_FIRST_PROBE_TIME (5 s),
 * PROBE: MAX_UNICAST_SOLICIT (3) unicast NS to the cached MAC 1 s apart,
 * then deleted with its host route; the next packet resolves afresh. */
START_TEST(nud_sequence_exact)
{
	uint8_t w[128];
	resolve_h();
	advance(15 * SEC - 1 * MS);
	ck_assert_uint_eq(h_state(), IP6_NBR_REACHABLE);
	advance(30 * SEC + 2 * MS);
	ck_assert_uint_eq(h_state(), IP6_NBR_STALE);
	ck_assert_uint_eq(n_tx, 0);
	ck_assert_uint_eq(l3_error_count("ip6-nd-timer", "neighbour went STALE (ReachableTime over)"), 1);
	/* STALE stays without traffic. */
	advance(60 * SEC);
	ck_assert_uint_eq(h_state(), IP6_NBR_STALE);
	ck_assert_uint_eq(n_tx, 0);
	/* Used: sent on the cached MAC at once, DELAY. */
	send_echo(2);
	settle();
	ck_assert_uint_eq(n_tx, 1);
	uint32_t n = want_fwd(w, 2);
	expect_tx(0, dev_b, w, n);
	ck_assert_uint_eq(h_state(), IP6_NBR_DELAY);
	ck_assert_uint_eq(l3_error_count("ip6-glean", "STALE neighbour used: DELAY"), 1);
	ck_assert_uint_eq(l3_error_count("ip6-glean", "sent on the neighbour's cached MAC"), 1);
	/* The rewrite is back: the next packet takes ip6-rewrite. */
	send_echo(3);
	settle();
	ck_assert_uint_eq(n_tx, 2);
	n = want_fwd(w, 3);
	expect_tx(1, dev_b, w, n);
	ck_assert_uint_eq(l3_error_count("ip6-glean", "sent on the neighbour's cached MAC"), 1);
	advance(5 * SEC - 5 * MS);
	ck_assert_uint_eq(n_tx, 2);
	ck_assert_uint_eq(h_state(), IP6_NBR_DELAY);
	advance(10 * MS);
	ck_assert_uint_eq(h_state(), IP6_NBR_PROBE);
	ck_assert_uint_eq(n_tx, 3);
	expect_ns(2, true);
	advance(1 * SEC);
	ck_assert_uint_eq(n_tx, 4);
	expect_ns(3, true);
	advance(1 * SEC);
	ck_assert_uint_eq(n_tx, 5);
	expect_ns(4, true);
	ck_assert_uint_eq(h_state(), IP6_NBR_PROBE);
	advance(1 * SEC);
	ck_assert_uint_eq(n_tx, 5);
	ck_assert_uint_eq(h_state(), IP6_NBR_FREE);
	ck_assert_uint_eq(l3_error_count("ip6-nd-timer", "unicast NS probe sent"), 3);
	ck_assert_uint_eq(l3_error_count("ip6-nd-timer", "neighbour unreachable: probes unanswered (deleted)"), 1);
	uint32_t r;
	ck_assert_int_eq(ip6_fib_get(ip6_fib_main, (const ip6_addr_a2 *)H, 128, &r), -ENOENT);
	/* The next packet: INCOMPLETE, a multicast NS, held. */
	send_echo(4);
	settle();
	ck_assert_uint_eq(n_tx, 6);
	expect_ns(5, false);
	ck_assert_uint_eq(h_state(), IP6_NBR_INCOMPLETE);
	ck_assert_uint_eq(h_held(), 1);
}
END_TEST

/* DELAY confirmed by a solicited NA: REACHABLE again, no probe. */
START_TEST(delay_confirmed_by_na)
{
	uint8_t f[128];
	resolve_h();
	advance(46 * SEC);
	ck_assert_uint_eq(h_state(), IP6_NBR_STALE);
	send_echo(2);
	settle();
	ck_assert_uint_eq(h_state(), IP6_NBR_DELAY);
	advance(2 * SEC);
	uint32_t n = na_from_h(f, 0x40, mac_h); /* S, no O: same MAC */
	inject(dev_b, f, n);
	settle();
	ck_assert_uint_eq(h_state(), IP6_NBR_REACHABLE);
	advance(10 * SEC);
	ck_assert_uint_eq(h_state(), IP6_NBR_REACHABLE);
	ck_assert_uint_eq(n_tx, 1); /* the forwarded echo only */
	ck_assert_uint_eq(l3_error_count("ip6-nd-timer", "unicast NS probe sent"), 0);
}
END_TEST

/* RFC 4861 §7.2.5: an NA for an address never solicited is dropped under
 * its counter; an unsolicited NA with Override and a new MAC makes a
 * REACHABLE entry STALE on that MAC; without Override a new MAC is not
 * taken and the entry goes STALE. */
START_TEST(unsolicited_na)
{
	uint8_t f[128], w[128];
	uint32_t n = na_from_h(f, 0x20, mac_h);
	inject(dev_b, f, n);
	settle();
	ck_assert_uint_eq(l3_error_count("ip6-nd", "NA for an address never solicited"), 1);
	ck_assert_uint_eq(h_state(), IP6_NBR_FREE);
	resolve_h();
	n = na_from_h(f, 0x00, mac_h2); /* no O: the MAC stays */
	inject(dev_b, f, n);
	settle();
	ck_assert_uint_eq(h_state(), IP6_NBR_STALE);
	send_echo(5);
	settle();
	n = want_fwd(w, 5);
	expect_tx(0, dev_b, w, n); /* to mac_h */
	n = na_from_h(f, 0x60, mac_h);
	inject(dev_b, f, n);
	settle();
	ck_assert_uint_eq(h_state(), IP6_NBR_REACHABLE);
	n = na_from_h(f, 0x20, mac_h2); /* O: the new MAC, STALE */
	inject(dev_b, f, n);
	settle();
	ck_assert_uint_eq(h_state(), IP6_NBR_STALE);
	send_echo(6);
	settle();
	ck_assert_uint_eq(n_tx, 2);
	n = echo(w, mac_h2, mac_b, H, 63, 6);
	expect_tx(1, dev_b, w, n);
	ck_assert_uint_eq(h_state(), IP6_NBR_DELAY);
	ck_assert_uint_eq(l3_error_count("ip6-nd", "Neighbor Advertisement consumed (neighbour updated)"), 4); /* resolve_h's too */
}
END_TEST

/* A static neighbour never ages and sends no NS; a dynamic one set by
 * hand is REACHABLE and ages like a learnt one. */
START_TEST(static_never_ages)
{
	uint8_t w[128];
	ck_assert_int_eq(ip6_nbr_set(dev_b->index, (const ip6_addr_a2 *)H, mac_h, true, err, sizeof(err)), 0);
	for (int i = 0; i < 10; i++)
		advance(100 * SEC);
	ck_assert_uint_eq(h_state(), IP6_NBR_REACHABLE);
	send_echo(7);
	settle();
	ck_assert_uint_eq(n_tx, 1);
	uint32_t n = want_fwd(w, 7);
	expect_tx(0, dev_b, w, n);
	ck_assert_uint_eq(l3_error_count("ip6-nd-timer", "neighbour went STALE (ReachableTime over)"), 0);
	ck_assert_int_eq(ip6_nbr_set(dev_b->index, (const ip6_addr_a2 *)H, mac_h, false, err, sizeof(err)), 0);
	settle();
	advance(46 * SEC);
	ck_assert_uint_eq(h_state(), IP6_NBR_STALE);
}
END_TEST

/* An NS from H with its source link-layer option makes a STALE entry
 * (§7.2.3); the first packet to H leaves on that MAC and starts DELAY. */
START_TEST(ns_learnt_stale_then_delay)
{
	uint8_t f[128], w[128];
	uint8_t sn_b[16], sn_mac[6] = { 0x33, 0x33, 0xff, 0, 0, 1 };
	a6(sn_b, "ff02::1:ff00:1");
	uint32_t n = icmp6_frame(f, sn_mac, mac_h, H, sn_b, 255, icmp6_ns_msg(f + 54, B1, mac_h));
	inject(dev_b, f, n);
	settle();
	ck_assert_uint_eq(n_tx, 1); /* the NA */
	ck_assert_uint_eq(h_state(), IP6_NBR_STALE);
	send_echo(8);
	settle();
	ck_assert_uint_eq(n_tx, 2);
	n = want_fwd(w, 8);
	expect_tx(1, dev_b, w, n);
	ck_assert_uint_eq(h_state(), IP6_NBR_DELAY);
	ck_assert_uint_eq(l3_error_count("ip6-glean", "NS sent (resolution started)"), 0);
}
END_TEST

/* RA flags M and O (RFC 4861 §4.2) and an RDNSS option (RFC 8106 §5.1)
 * as configured with `ip6 nd interface NAME ra ... managed other rdnss`;
 * bad words refused. */
START_TEST(ra_flags_and_rdnss_exact)
{
	char w0[] = "interval", w1[] = "10", w2[] = "managed", w3[] = "other", w4[] = "rdnss", w5[] = "2001:db8::53",
	     w6[] = "rdnss", w7[] = "2001:db8::54";
	char *argv[] = { w0, w1, w2, w3, w4, w5, w6, w7 };
	struct ip6_ra_config c;
	bool off = false;
	const char *bad = NULL;
	ck_assert(ip6_ra_parse(8, argv, &c, &off, &bad));
	ck_assert(!off);
	ck_assert_uint_eq(c.flags, 0xc0);
	ck_assert_uint_eq(c.n_rdnss, 2);
	memset(ip6_ra_ifs, 0, sizeof(ip6_ra_ifs));
	ck_assert_msg(ip6_ra_enable(dev_a->index, &c, err, sizeof(err)) == 0, "%s", err);
	static uint8_t f[IP6_RA_FRAME_MAX];
	uint32_t n = ip6_ra_frame(dev_a->index, f);
	/* RA 16, source link-layer 8, MTU 8, prefix 32, RDNSS 8 + 2 x 16. */
	ck_assert_uint_eq(n, 14 + 40 + 16 + 8 + 8 + 32 + 40);
	const uint8_t *m = f + 54;
	ck_assert_uint_eq(m[0], 134);
	ck_assert_uint_eq(m[5], 0xc0); /* M and O */
	const uint8_t *o = m + 64;
	uint8_t want[40] = { 25, 5, 0, 0, 0, 0, 0, 30 }; /* lifetime 3 x 10 s */
	a6(want + 8, "2001:db8::53");
	a6(want + 24, "2001:db8::54");
	ck_assert_int_eq(memcmp(o, want, 40), 0);
	uint8_t copy[128];
	memcpy(copy, m, n - 54);
	put16(copy + 2, 0);
	ck_assert_uint_eq(get16(m + 2), ref_csum6(f + 22, f + 38, 58, copy, n - 54));
	/* Refused: a multicast RDNSS, a fourth one, "rdnss" alone. */
	char m5[] = "ff02::1";
	argv[5] = m5;
	ck_assert(ip6_ra_parse(8, argv, &c, &off, &bad));
	ck_assert_int_eq(ip6_ra_config_check(&c, err, sizeof(err)), -EINVAL);
	char *four[] = { w4, w5, w4, w5, w4, w5, w4, w5 };
	ck_assert(!ip6_ra_parse(8, four, &c, &off, &bad));
	ck_assert(!ip6_ra_parse(1, four, &c, &off, &bad));
	memset(ip6_ra_ifs, 0, sizeof(ip6_ra_ifs));
}
END_TEST

/* A full table: an INCOMPLETE entry is reused only once 3 s old (§7.3.3),
 * its held packet freed, and a timer event for its former occupant no
 * longer finds it (the generation). */
START_TEST(full_table_recycles_with_held)
{
	struct in6_addr x = { 0 };
	memcpy(&x, H, 16);
	uint32_t bi;
	ck_assert_uint_eq(buffer_alloc(&bi, 1, -1), 1);
	uint32_t in_use = buffer_n_in_use();
	ip6_nbr_lock();
	uint64_t cookie0 = 0;
	for (uint32_t i = 0; i < IP6_NBR_MAX; i++) {
		x.s6_addr[14] = (uint8_t)(i >> 8);
		x.s6_addr[15] = (uint8_t)i;
		struct ip6_nbr *n = ip6_nbr_create(dev_b->index, &x, sim_ns);
		ck_assert_ptr_nonnull(n);
		if (i == 0) {
			uint32_t out;
			ip6_nbr_hold(n, bi, &out);
			ck_assert_uint_eq(out, BUFFER_INVALID);
			cookie0 = ip6_nbr_cookie(n);
		}
	}
	ck_assert_ptr_nonnull(ip6_nbr_from_cookie(cookie0));
	x.s6_addr[13] = 1;
	ck_assert_ptr_null(ip6_nbr_create(dev_b->index, &x, sim_ns + 3 * SEC - 1));
	struct ip6_nbr *n = ip6_nbr_create(dev_b->index, &x, sim_ns + 3 * SEC);
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->n_held, 0);
	ck_assert_ptr_null(ip6_nbr_from_cookie(cookie0));
	ip6_nbr_unlock();
	ck_assert_uint_eq(buffer_n_in_use(), in_use - 1);
	ck_assert_uint_eq(ip6_nbr_count(), IP6_NBR_MAX);
}
END_TEST

/* ---- two threads: a datapath thread changing entries, thread 0's timers ---- */

static atomic_bool stop;

/* What ip6-nd and ip6-glean do on a worker, on 16 neighbours of b, under
 * the lock, one per millisecond: make INCOMPLETE entries, confirm each by
 * a solicited NA every 32nd turn, use STALE ones. */
static void *worker(void *arg)
{
	(void)arg;
	static const uint8_t mac[6] = { 0x02, 0xdd, 0, 0, 0, 1 };
	struct in6_addr x;
	memcpy(&x, H, 16);
	for (uint32_t i = 0; !atomic_load(&stop); i++) {
		x.s6_addr[15] = (uint8_t)(0x10 + i % 16);
		uint64_t now = ip6_nbr_now();
		ip6_nbr_lock();
		struct ip6_nbr *n = ip6_nbr_lookup(dev_b->index, &x);
		if (!n && (n = ip6_nbr_create(dev_b->index, &x, now)) != NULL) {
			n->n_probes = 1;
			ip6_nbr_timer_want(n, ip6_nd_timing.retrans_ns);
		}
		if (n && (i / 16) % 32 == 0)
			ip6_nbr_update(n, mac, true, true, false, now); /* a solicited NA */
		else if (n && n->state == IP6_NBR_STALE) {
			ip6_nbr_set_state(n, IP6_NBR_DELAY, now); /* used */
			ip6_nbr_mark_apply(n);
		}
		ip6_nbr_unlock();
		usleep(1000);
	}
	return NULL;
}

/* The two threads, simulated time running 250 ms per poll, until entries
 * went STALE and were probed (about 0.7 s unloaded): timers arm, fire, send NS, delete entries while the other
 * thread revives them. TSan's subject (.ci/run); plain, a run that did
 * move entries through their states. */
START_TEST(datapath_thread_and_timers)
{
	pthread_t t;
	atomic_store(&stop, false);
	ck_assert_int_eq(pthread_create(&t, NULL, worker, NULL), 0);
	/* Until both happened (about 400 polls unloaded), 3000 at most. */
	bool seen = false;
	for (int k = 0; k < 3000 && !seen; k++) {
		__atomic_add_fetch(&sim_ns, 250 * MS, __ATOMIC_RELAXED);
		graph_main_poll(g);
		n_tx = 0; /* NS to the test driver: only their number matters */
		usleep(1500);
		if (k % 50 == 49)
			seen = l3_error_count("ip6-nd-timer", "neighbour went STALE (ReachableTime over)") > 0 &&
			       l3_error_count("ip6-nd-timer", "unicast NS probe sent") > 0;
	}
	atomic_store(&stop, true);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	settle();
	ck_assert_msg(seen, "no STALE or no probe in 750 s of simulated time");
	n_tx = 0;
}
END_TEST

static Suite *nd_suite(void)
{
	Suite *s = suite_create("ip6_nd");
	TCase *tc = tcase_create("nud");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, resolution_fails_unreachable_exact);
	tcase_add_test(tc, nud_sequence_exact);
	tcase_add_test(tc, delay_confirmed_by_na);
	tcase_add_test(tc, unsolicited_na);
	tcase_add_test(tc, static_never_ages);
	tcase_add_test(tc, ns_learnt_stale_then_delay);
	tcase_add_test(tc, ra_flags_and_rdnss_exact);
	tcase_add_test(tc, full_table_recycles_with_held);
	tcase_add_test(tc, datapath_thread_and_timers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(nd_suite());
}
