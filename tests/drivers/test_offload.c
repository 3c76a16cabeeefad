/* drivers/af_packet/offload.c: checksum completion and TCP segmentation.
 *
 * Every expected frame is built here from scratch, field by field, with its
 * checksums computed by a plain byte-pair sum (RFC 1071, big-endian words),
 * independent of offload.c's 64-bit host-order method; the code under test
 * must produce exactly those bytes. GSO super-frames of 3,000 payload bytes
 * are cut at an MTU of 1,500: IPv4 into 1460 + 1460 + 80 (ids +0/+1/+2),
 * IPv6 into 1440 + 1440 + 120; FIN and PSH stay on the last segment only,
 * CWR on the first only. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_run.h"
#include "base/bytes.h"
#include "drivers/af_packet/offload.h"

#define ETH 14
#define MTU 1500
#define PAYLOAD 3000
#define MAX_FRAME (ETH + 60 + 60 + PAYLOAD)

#define TCP_FIN 0x01
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define TCP_CWR 0x80

static const uint8_t src4[4] = { 10, 0, 0, 1 }, dst4[4] = { 10, 0, 0, 2 };
static const uint8_t src6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };

/* One's-complement sum of big-endian 16-bit words, odd byte padded. */
static uint32_t sum16(uint32_t s, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i + 1 < n; i += 2)
		s += get16(p + i);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t finish(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* The L4 checksum over the pseudo-header and l4[0..len). */
static uint16_t l4_csum(bool v6, uint8_t proto, const uint8_t *l4, uint32_t len)
{
	uint32_t s = 0;
	if (v6) {
		s = sum16(s, src6, 16);
		s = sum16(s, dst6, 16);
		s += len >> 16;
		s += len & 0xffff;
	} else {
		s = sum16(s, src4, 4);
		s = sum16(s, dst4, 4);
		s += len;
	}
	s += proto;
	return finish(sum16(s, l4, len));
}

static uint8_t payload[PAYLOAD];

/* Ethernet + IPv4 or IPv6 + TCP (20 bytes, or 32 with a timestamp option)
 * + payload[off .. off+n), checksums filled as a correct stack would. */
static uint32_t build_tcp(uint8_t *f, bool v6, uint32_t off, uint32_t n, uint32_t seq, uint16_t ip_id, uint8_t flags,
			  uint32_t thl)
{
	static const uint8_t eth[ETH] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00 };
	memcpy(f, eth, ETH);
	uint32_t l3 = ETH, l3_len = v6 ? 40 : 20, l4 = l3 + l3_len;
	uint8_t *ip = f + l3;
	memset(ip, 0, l3_len);
	if (v6) {
		f[12] = 0x86;
		f[13] = 0xdd;
		ip[0] = 0x60;
		put16(ip + 4, thl + n);
		ip[6] = 6;
		ip[7] = 64;
		memcpy(ip + 8, src6, 16);
		memcpy(ip + 24, dst6, 16);
	} else {
		ip[0] = 0x45;
		put16(ip + 2, l3_len + thl + n);
		put16(ip + 4, ip_id);
		put16(ip + 6, 0x4000); /* DF */
		ip[8] = 64;
		ip[9] = 6;
		memcpy(ip + 12, src4, 4);
		memcpy(ip + 16, dst4, 4);
		put16(ip + 10, finish(sum16(0, ip, 20)));
	}
	uint8_t *tcp = f + l4;
	memset(tcp, 0, thl);
	put16(tcp, 40000);
	put16(tcp + 2, 5201);
	put32(tcp + 4, seq);
	put32(tcp + 8, 0x01020304);
	tcp[12] = (uint8_t)(thl / 4 << 4);
	tcp[13] = flags;
	put16(tcp + 14, 64240);
	if (thl == 32) { /* NOP NOP timestamp */
		tcp[20] = 1;
		tcp[21] = 1;
		tcp[22] = 8;
		tcp[23] = 10;
		put32(tcp + 24, 0xaabbccdd);
		put32(tcp + 28, 0x11223344);
	}
	memcpy(tcp + thl, payload + off, n);
	put16(tcp + 16, l4_csum(v6, 6, tcp, thl + n));
	return l4 + thl + n;
}

static void setup(void)
{
	for (uint32_t i = 0; i < PAYLOAD; i++)
		payload[i] = (uint8_t)(i * 7 + (i >> 8));
}

/* Segment a super-frame and compare every segment with the one built here. */
static void segment_case(bool v6, uint32_t thl, const uint32_t *sizes, uint32_t n_sizes)
{
	static uint8_t super[MAX_FRAME], seg[MAX_FRAME], want[MAX_FRAME];
	const uint32_t seq0 = 0xfffff000; /* wraps inside the third segment */
	const uint16_t id0 = 0xfffe;      /* wraps too */
	const uint8_t flags = TCP_CWR | TCP_ACK | TCP_PSH | TCP_FIN;
	uint32_t len = build_tcp(super, v6, 0, PAYLOAD, seq0, id0, flags, thl);
	/* A GSO frame as the kernel hands it: the checksum is not final. */
	put16(super + ETH + (v6 ? 40 : 20) + 16, 0x1234);

	struct afp_tso t;
	ck_assert_int_eq(afp_tso_plan(super, len, ETH, MTU, &t), 0);
	uint32_t l3_len = v6 ? 40 : 20;
	ck_assert_uint_eq(t.l3, ETH);
	ck_assert_uint_eq(t.l4, ETH + l3_len);
	ck_assert_uint_eq(t.hdr_len, ETH + l3_len + thl);
	ck_assert_uint_eq(t.payload, PAYLOAD);
	ck_assert_uint_eq(t.mss, MTU - l3_len - thl);
	ck_assert_uint_eq(t.n_segs, n_sizes);
	ck_assert_uint_eq(t.ip_version, v6 ? 6 : 4);

	uint32_t off = 0;
	for (uint32_t i = 0; i < n_sizes; i++) {
		memset(seg, 0xee, sizeof(seg));
		uint32_t got = afp_tso_segment(super, &t, i, seg);
		uint8_t f = flags;
		if (i + 1 < n_sizes)
			f &= (uint8_t)~(TCP_FIN | TCP_PSH);
		if (i > 0)
			f &= (uint8_t)~TCP_CWR;
		uint32_t wlen = build_tcp(want, v6, off, sizes[i], seq0 + off, (uint16_t)(id0 + i), f, thl);
		ck_assert_uint_eq(got, wlen);
		ck_assert_uint_le(got - ETH, MTU);
		/* The fields one by one (clearer failures), then every byte. */
		const uint8_t *ip = seg + ETH, *tcp = seg + ETH + l3_len;
		if (v6) {
			ck_assert_uint_eq(get16(ip + 4), thl + sizes[i]);
		} else {
			ck_assert_uint_eq(get16(ip + 2), 20 + thl + sizes[i]);
			ck_assert_uint_eq(get16(ip + 4), (uint16_t)(id0 + i));
			ck_assert_uint_eq(get16(ip + 10), get16(want + ETH + 10));
		}
		ck_assert_uint_eq(get32(tcp + 4), seq0 + off);
		ck_assert_uint_eq(tcp[13], f);
		ck_assert_uint_eq(get16(tcp + 16), get16(want + ETH + l3_len + 16));
		ck_assert_msg(memcmp(seg, want, wlen) == 0, "segment %u differs", i);
		ck_assert_uint_eq(seg[wlen], 0xee); /* nothing written past it */
		/* A correct checksum sums to all ones over pseudo-header and segment. */
		ck_assert_uint_eq(l4_csum(v6, 6, tcp, thl + sizes[i]), 0);
		off += sizes[i];
	}
	ck_assert_uint_eq(off, PAYLOAD);
}

START_TEST(tso_ipv4)
{
	static const uint32_t sizes[] = { 1460, 1460, 80 };
	segment_case(false, 20, sizes, 3);
}
END_TEST

START_TEST(tso_ipv4_options)
{
	static const uint32_t sizes[] = { 1448, 1448, 104 };
	segment_case(false, 32, sizes, 3);
}
END_TEST

START_TEST(tso_ipv6)
{
	static const uint32_t sizes[] = { 1440, 1440, 120 };
	segment_case(true, 20, sizes, 3);
}
END_TEST

START_TEST(tso_refused)
{
	static uint8_t f[MAX_FRAME];
	struct afp_tso t;
	uint32_t len = build_tcp(f, false, 0, PAYLOAD, 1, 1, TCP_ACK, 20);
	ck_assert_int_eq(afp_tso_plan(f, len - 1, ETH, MTU, &t), -1); /* shorter than the IP length */
	ck_assert_int_eq(afp_tso_plan(f, len, ETH, 40, &t), -1);     /* no room for payload */
	put16(f + ETH + 6, 0x2000);                                  /* a fragment (MF) */
	ck_assert_int_eq(afp_tso_plan(f, len, ETH, MTU, &t), -1);
	len = build_tcp(f, false, 0, PAYLOAD, 1, 1, TCP_ACK, 20);
	f[ETH + 9] = 17; /* UDP */
	ck_assert_int_eq(afp_tso_plan(f, len, ETH, MTU, &t), -1);
}
END_TEST

/* ---- checksum completion ---- */

/* UDP over IPv4 or IPv6 with n payload bytes; checksum right. */
static uint32_t build_udp(uint8_t *f, bool v6, uint32_t n)
{
	uint32_t len = build_tcp(f, v6, 0, 0, 0, 7, 0, 20); /* headers, then make it UDP */
	(void)len;
	uint32_t l3_len = v6 ? 40 : 20;
	uint8_t *ip = f + ETH, *udp = f + ETH + l3_len;
	if (v6) {
		ip[6] = 17;
		put16(ip + 4, 8 + n);
	} else {
		ip[9] = 17;
		put16(ip + 2, 20 + 8 + n);
		put16(ip + 10, 0);
		put16(ip + 10, finish(sum16(0, ip, 20)));
	}
	put16(udp, 5353);
	put16(udp + 2, 53);
	put16(udp + 4, 8 + n);
	put16(udp + 6, 0);
	memcpy(udp + 8, payload + 11, n);
	put16(udp + 6, l4_csum(v6, 17, udp, 8 + n));
	return ETH + l3_len + 8 + n;
}

START_TEST(csum_complete)
{
	static uint8_t f[MAX_FRAME], want[MAX_FRAME];
	for (int v6 = 0; v6 <= 1; v6++) {
		uint32_t l3_len = v6 ? 40 : 20;
		/* TCP with an odd payload, a partial checksum left in the field. */
		uint32_t len = build_tcp(want, v6, 5, 999, 77, 9, TCP_ACK | TCP_PSH, 32);
		memcpy(f, want, len);
		put16(f + ETH + l3_len + 16, 0xbeef);
		ck_assert_int_eq(afp_l4_csum_complete(f, len, ETH), 0);
		ck_assert_msg(memcmp(f, want, len) == 0, "TCP/IPv%d", v6 ? 6 : 4);
		/* UDP, even and odd lengths. */
		for (uint32_t n = 100; n <= 101; n++) {
			len = build_udp(want, v6, n);
			memcpy(f, want, len);
			put16(f + ETH + l3_len + 6, 0);
			ck_assert_int_eq(afp_l4_csum_complete(f, len, ETH), 0);
			ck_assert_msg(memcmp(f, want, len) == 0, "UDP/IPv%d, %u bytes", v6 ? 6 : 4, n);
		}
	}
}
END_TEST

/* A UDP checksum that comes out 0 is sent as 0xffff (0 means none). */
START_TEST(csum_udp_zero)
{
	static uint8_t f[MAX_FRAME];
	uint32_t len = build_udp(f, false, 2);
	uint8_t *udp = f + ETH + 20;
	/* Choose the two payload bytes so that the sum is all ones. */
	put16(udp + 8, 0);
	put16(udp + 6, 0);
	uint16_t c = l4_csum(false, 17, udp, 10); /* ~sum with zero payload */
	put16(udp + 8, c);
	ck_assert_uint_eq(l4_csum(false, 17, udp, 10), 0);
	put16(udp + 6, 0x5555);
	ck_assert_int_eq(afp_l4_csum_complete(f, len, ETH), 0);
	ck_assert_uint_eq(get16(udp + 6), 0xffff);
}
END_TEST

START_TEST(csum_refused)
{
	static uint8_t f[MAX_FRAME], before[MAX_FRAME];
	uint32_t len = build_tcp(f, false, 0, 200, 1, 1, TCP_ACK, 20);
	put16(f + ETH + 6, 0x0010); /* a fragment offset */
	memcpy(before, f, len);
	ck_assert_int_eq(afp_l4_csum_complete(f, len, ETH), -1);
	ck_assert_int_eq(memcmp(f, before, len), 0);
	len = build_tcp(f, false, 0, 200, 1, 1, TCP_ACK, 20);
	f[ETH + 9] = 1; /* ICMP */
	memcpy(before, f, len);
	ck_assert_int_eq(afp_l4_csum_complete(f, len, ETH), -1);
	ck_assert_int_eq(memcmp(f, before, len), 0);
	len = build_tcp(f, true, 0, 200, 1, 1, TCP_ACK, 20);
	ck_assert_int_eq(afp_l4_csum_complete(f, len - 1, ETH), -1); /* IPv6 length past the frame */
	f[ETH] = 0x50; /* IP version 5 */
	ck_assert_int_eq(afp_l4_csum_complete(f, len, ETH), -1);
}
END_TEST

static Suite *offload_suite(void)
{
	Suite *s = suite_create("offload");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, tso_ipv4);
	tcase_add_test(tc, tso_ipv4_options);
	tcase_add_test(tc, tso_ipv6);
	tcase_add_test(tc, tso_refused);
	tcase_add_test(tc, csum_complete);
	tcase_add_test(tc, csum_udp_zero);
	tcase_add_test(tc, csum_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(offload_suite());
}
