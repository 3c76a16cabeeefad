/* The distributor's software flow hash (dist_buffer_tag) on whole
 * Ethernet frames: the Toeplitz hash a NIC configured for IPv4/IPv6 with
 * TCP and UDP ports computes (the published verification rows, as
 * tests/graph/test_toeplitz.c has them), read from where each header puts
 * the fields: IPv6 with TCP or UDP takes the 4-tuple, other next headers,
 * extension headers and fragments the 2-tuple (the 82599's TCPIPV6 and
 * UDPIPV6 without the _EX hashes, tests/models/ixgbe_model.c); the same
 * under one 802.1Q tag; a NIC's hash is kept as it came. */
#include <arpa/inet.h>
#include <check.h>
#include <string.h>

#include "base/toeplitz.h"
#include "graph/buffer.h"
#include "graph/handoff.h"
#include "nodes/dist/dist_graph.h"
#include "tests/check_run.h"

struct row6 {
	const char *dst, *src;
	uint16_t dport, sport;
	uint32_t h2, h4;
};

/* Destination first, as the published table lists them. */
static const struct row6 rows6[] = {
	{ "3ffe:2501:200:3::1", "3ffe:2501:200:1fff::7", 1766, 2794, 0x2cc18cd5, 0x40207d3d },
	{ "ff02::1", "3ffe:501:8::260:97ff:fe40:efab", 4739, 14230, 0x0f0c461c, 0xdde51bbf },
	{ "fe80::200:f8ff:fe21:67cf", "3ffe:1900:4545:3:200:f8ff:fe21:67cf", 38024, 44251, 0x4b61e985,
	  0x02d1feef },
};

static void setup(void)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 1024;
	bc.page_size = 4096;
	char err[256];
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
}

static void teardown(void)
{
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_thread_unregister();
	buffer_main_free();
}

/* An IPv6 frame of row r: next header nh, then (after ext_len bytes of
 * extension header whose Next Header is l4) the ports; vlan: one tag. */
static uint32_t frame6(const struct row6 *r, uint8_t nh, uint8_t l4, uint32_t ext_len, bool vlan)
{
	uint8_t p[128] = { 0 };
	uint32_t off = 12;
	memcpy(p, "\x02\0\0\0\0\x01\x02\0\0\0\0\x02", 12);
	if (vlan) {
		p[off] = 0x81, p[off + 2] = 0x00, p[off + 3] = 7;
		off += 4;
	}
	p[off] = 0x86, p[off + 1] = 0xdd;
	off += 2;
	uint8_t *ip = p + off;
	ip[0] = 0x60;
	ip[5] = (uint8_t)(ext_len + 8);
	ip[6] = nh;
	ip[7] = 64;
	ck_assert_int_eq(inet_pton(AF_INET6, r->src, ip + 8), 1);
	ck_assert_int_eq(inet_pton(AF_INET6, r->dst, ip + 24), 1);
	uint8_t *l = ip + 40;
	if (ext_len) {
		l[0] = l4;
		l[1] = (uint8_t)(ext_len / 8 - 1);
		l += ext_len;
	}
	l[0] = (uint8_t)(r->sport >> 8), l[1] = (uint8_t)r->sport;
	l[2] = (uint8_t)(r->dport >> 8), l[3] = (uint8_t)r->dport;
	uint32_t bi = buffer_from_bytes(p, (uint32_t)(l + 8 - p), -1);
	ck_assert_uint_ne(bi, BUFFER_INVALID);
	return bi;
}

static uint32_t hash_of(uint32_t bi)
{
	struct buffer *b = buffer_get(bi);
	uint16_t tag = dist_buffer_tag(b);
	ck_assert(b->flags & BUFFER_F_FLOW_HASH);
	ck_assert_uint_eq(tag, b->flow_hash & HANDOFF_TAG_MASK);
	ck_assert_uint_eq(b->flow_tag, tag);
	uint32_t h = b->flow_hash;
	buffer_free(&bi, 1);
	return h;
}

START_TEST(test_ip6_four_tuple)
{
	const struct row6 *r = &rows6[_i];
	for (int vlan = 0; vlan < 2; vlan++) {
		ck_assert_uint_eq(hash_of(frame6(r, 6, 0, 0, vlan)), r->h4);  /* TCP */
		ck_assert_uint_eq(hash_of(frame6(r, 17, 0, 0, vlan)), r->h4); /* UDP */
	}
}
END_TEST

START_TEST(test_ip6_two_tuple)
{
	const struct row6 *r = &rows6[_i];
	for (int vlan = 0; vlan < 2; vlan++) {
		ck_assert_uint_eq(hash_of(frame6(r, 58, 0, 0, vlan)), r->h2);  /* ICMPv6 */
		ck_assert_uint_eq(hash_of(frame6(r, 0, 6, 8, vlan)), r->h2);   /* Hop-by-Hop, then TCP */
		ck_assert_uint_eq(hash_of(frame6(r, 60, 17, 8, vlan)), r->h2); /* Destination Options, then UDP */
		ck_assert_uint_eq(hash_of(frame6(r, 44, 6, 8, vlan)), r->h2);  /* a fragment of TCP */
	}
}
END_TEST

/* Cut before the ports: the 2-tuple; cut in the addresses, or version 4
 * under 0x86dd: not IP, the MAC pair (the first 12 bytes). */
START_TEST(test_ip6_short_and_bad)
{
	const struct row6 *r = &rows6[0];
	uint8_t p[128];
	uint32_t bi = frame6(r, 6, 0, 0, false);
	memcpy(p, buffer_data(buffer_get(bi)), 14 + 40 + 2);
	buffer_free(&bi, 1);
	bi = buffer_from_bytes(p, 14 + 40 + 2, -1);
	ck_assert_uint_eq(hash_of(bi), r->h2);
	const uint32_t mac_pair = toeplitz_hash_table(toeplitz_default_table(), p, 12);
	bi = buffer_from_bytes(p, 14 + 39, -1);
	ck_assert_uint_eq(hash_of(bi), mac_pair);
	p[14] = 0x46;
	bi = buffer_from_bytes(p, 14 + 40 + 2, -1);
	ck_assert_uint_eq(hash_of(bi), mac_pair);
}
END_TEST

/* A hash the NIC left is the flow's, whatever the headers say. */
START_TEST(test_nic_hash_kept)
{
	uint32_t bi = frame6(&rows6[0], 6, 0, 0, false);
	struct buffer *b = buffer_get(bi);
	b->flow_hash = 0x12345678;
	b->flags |= BUFFER_F_FLOW_HASH;
	ck_assert_uint_eq(hash_of(bi), 0x12345678);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dist_hash");
	TCase *tc = tcase_create("ip6");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_ip6_four_tuple, 0, (int)(sizeof(rows6) / sizeof(rows6[0])));
	tcase_add_loop_test(tc, test_ip6_two_tuple, 0, (int)(sizeof(rows6) / sizeof(rows6[0])));
	tcase_add_test(tc, test_ip6_short_and_bad);
	tcase_add_test(tc, test_nic_hash_kept);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
