/* Toeplitz suite: Microsoft's published RSS verification rows (IPv4 and
 * IPv6, 2-tuple and 4-tuple; the 82599 datasheet section 7.1.2.8.4's
 * verification table), exact, by
 * the bitwise reference, the tables and the packet-pointer helpers. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/toeplitz.h"
#include "tests/check_run.h"

struct row4 {
	const char *dst, *src;
	uint16_t dport, sport;
	uint32_t h2, h4;
};

/* Destination first, as the published table lists them. */
static const struct row4 rows4[] = {
	{ "161.142.100.80", "66.9.149.187", 1766, 2794, 0x323e8fc2, 0x51ccc178 },
	{ "65.69.140.83", "199.92.111.2", 4739, 14230, 0xd718262a, 0xc626b0ea },
	{ "12.22.207.184", "24.19.198.95", 38024, 12898, 0xd2d0a5de, 0x5c2b394a },
	{ "209.142.163.6", "38.27.205.30", 2217, 48228, 0x82989176, 0xafc7327f },
	{ "202.188.127.2", "153.39.163.191", 1303, 44251, 0x5d1809c5, 0x10e828a2 },
};

static const struct row4 rows6[] = {
	{ "3ffe:2501:200:3::1", "3ffe:2501:200:1fff::7", 1766, 2794, 0x2cc18cd5, 0x40207d3d },
	{ "ff02::1", "3ffe:501:8::260:97ff:fe40:efab", 4739, 14230, 0x0f0c461c, 0xdde51bbf },
	{ "fe80::200:f8ff:fe21:67cf", "3ffe:1900:4545:3:200:f8ff:fe21:67cf", 38024, 44251, 0x4b61e985,
	  0x02d1feef },
};

static uint32_t ip4(const char *s)
{
	struct in_addr a;
	ck_assert_int_eq(inet_pton(AF_INET, s, &a), 1);
	return ntohl(a.s_addr);
}

static void ip6(const char *s, uint8_t out[16])
{
	ck_assert_int_eq(inet_pton(AF_INET6, s, out), 1);
}

START_TEST(test_ip4_rows)
{
	const struct toeplitz_table *t = toeplitz_default_table();
	const uint8_t *k = toeplitz_default_key;
	for (size_t i = 0; i < sizeof(rows4) / sizeof(rows4[0]); i++) {
		const struct row4 *r = &rows4[i];
		uint8_t in[TOEPLITZ_INPUT_MAX];
		size_t n = toeplitz_ip4_input(in, ip4(r->src), ip4(r->dst), r->sport, r->dport, 0);
		ck_assert_uint_eq(n, 8);
		ck_assert_uint_eq(toeplitz_hash(k, 40, in, n), r->h2);
		ck_assert_uint_eq(toeplitz_hash_table(t, in, n), r->h2);
		ck_assert_uint_eq(toeplitz_hash_ip4(t, in, NULL), r->h2);
		n = toeplitz_ip4_input(in, ip4(r->src), ip4(r->dst), r->sport, r->dport, 1);
		ck_assert_uint_eq(n, 12);
		ck_assert_uint_eq(toeplitz_hash(k, 40, in, n), r->h4);
		ck_assert_uint_eq(toeplitz_hash_table(t, in, n), r->h4);
		ck_assert_uint_eq(toeplitz_hash_ip4(t, in, in + 8), r->h4);
	}
}
END_TEST

START_TEST(test_ip6_rows)
{
	const struct toeplitz_table *t = toeplitz_default_table();
	const uint8_t *k = toeplitz_default_key;
	for (size_t i = 0; i < sizeof(rows6) / sizeof(rows6[0]); i++) {
		const struct row4 *r = &rows6[i];
		uint8_t src[16], dst[16], in[TOEPLITZ_INPUT_MAX];
		ip6(r->src, src);
		ip6(r->dst, dst);
		size_t n = toeplitz_ip6_input(in, src, dst, r->sport, r->dport, 0);
		ck_assert_uint_eq(n, 32);
		ck_assert_uint_eq(toeplitz_hash(k, 40, in, n), r->h2);
		ck_assert_uint_eq(toeplitz_hash_table(t, in, n), r->h2);
		ck_assert_uint_eq(toeplitz_hash_ip6(t, in, NULL), r->h2);
		n = toeplitz_ip6_input(in, src, dst, r->sport, r->dport, 1);
		ck_assert_uint_eq(n, 36);
		ck_assert_uint_eq(toeplitz_hash(k, 40, in, n), r->h4);
		ck_assert_uint_eq(toeplitz_hash_table(t, in, n), r->h4);
		ck_assert_uint_eq(toeplitz_hash_ip6(t, in, in + 32), r->h4);
	}
}
END_TEST

/* The worked byte string, the derived RETA indices and the byte-order
 * mistakes that published implementations made, so a wrong field order cannot pass. */
START_TEST(test_worked_example_and_mistakes)
{
	const struct toeplitz_table *t = toeplitz_default_table();
	static const uint8_t row1[12] = { 0x42, 0x09, 0x95, 0xbb, 0xa1, 0x8e, 0x64, 0x50, 0x0a, 0xea, 0x06, 0xe6 };
	ck_assert_uint_eq(toeplitz_hash_table(t, row1, 12), 0x51ccc178);
	ck_assert_uint_eq(toeplitz_hash_table(t, row1, 12) & 0x7f, 120);
	ck_assert_uint_eq(toeplitz_hash_table(t, row1, 12) & 0x1ff, 376);
	uint8_t in[12];
	toeplitz_ip4_input(in, ip4("66.9.149.187"), ip4("161.142.100.80"), 0xea0a, 0xe606, 1); /* ports LE */
	ck_assert_uint_eq(toeplitz_hash_table(t, in, 12), 0xeb7a28c4);
	toeplitz_ip4_input(in, ip4("66.9.149.187"), ip4("161.142.100.80"), 1766, 2794, 1); /* ports swapped */
	ck_assert_uint_eq(toeplitz_hash_table(t, in, 12), 0x759c4e0e);
	toeplitz_ip4_input(in, ip4("161.142.100.80"), ip4("66.9.149.187"), 2794, 1766, 1); /* addrs swapped */
	ck_assert_uint_eq(toeplitz_hash_table(t, in, 12), 0xd9b716c4);
	ck_assert_uint_eq(toeplitz_hash(toeplitz_default_key, 40, in, 0), 0);
}
END_TEST

/* Symmetric key: both directions hash alike; a 52-byte (i40e) key whose
 * first 40 bytes are the default gives the same IPv4 values. */
START_TEST(test_other_keys)
{
	uint8_t sym[40], k52[52];
	for (int i = 0; i < 40; i += 2) {
		sym[i] = 0x6d;
		sym[i + 1] = 0x5a;
	}
	memcpy(k52, toeplitz_default_key, 40);
	for (int i = 40; i < 52; i++)
		k52[i] = (uint8_t)(i * 37);
	struct toeplitz_table *ts = malloc(sizeof(*ts)), *t52 = malloc(sizeof(*t52));
	ck_assert_int_eq(toeplitz_table_init(ts, sym, sizeof(sym)), 0);
	ck_assert_int_eq(toeplitz_table_init(t52, k52, sizeof(k52)), 0);
	ck_assert_int_eq(toeplitz_table_init(t52, k52, 0), -EINVAL);
	ck_assert_int_eq(toeplitz_table_init(t52, k52, 53), -EINVAL);
	uint8_t a[12], b[12];
	toeplitz_ip4_input(a, ip4("66.9.149.187"), ip4("161.142.100.80"), 2794, 1766, 1);
	toeplitz_ip4_input(b, ip4("161.142.100.80"), ip4("66.9.149.187"), 1766, 2794, 1);
	ck_assert_uint_eq(toeplitz_hash_table(ts, a, 12), 0x9fcc9fcc);
	ck_assert_uint_eq(toeplitz_hash_table(ts, b, 12), 0x9fcc9fcc);
	ck_assert_uint_eq(toeplitz_hash(sym, 40, a, 12), 0x9fcc9fcc);
	for (size_t i = 0; i < sizeof(rows4) / sizeof(rows4[0]); i++) {
		toeplitz_ip4_input(a, ip4(rows4[i].src), ip4(rows4[i].dst), rows4[i].sport, rows4[i].dport, 1);
		ck_assert_uint_eq(toeplitz_hash_table(t52, a, 12), rows4[i].h4);
		ck_assert_uint_eq(toeplitz_hash(k52, 52, a, 12), rows4[i].h4);
	}
	free(ts);
	free(t52);
}
END_TEST

/* Tables and the reference agree on random inputs of every length, and the
 * hash is linear: h(a ^ b) = h(a) ^ h(b). */
START_TEST(test_table_matches_reference)
{
	const struct toeplitz_table *t = toeplitz_default_table();
	srand(7);
	for (int it = 0; it < 2000; it++) {
		uint8_t a[TOEPLITZ_INPUT_MAX], b[TOEPLITZ_INPUT_MAX], x[TOEPLITZ_INPUT_MAX];
		size_t n = (size_t)rand() % (TOEPLITZ_INPUT_MAX + 1);
		for (size_t i = 0; i < n; i++) {
			a[i] = (uint8_t)rand();
			b[i] = (uint8_t)rand();
			x[i] = a[i] ^ b[i];
		}
		uint32_t ha = toeplitz_hash(toeplitz_default_key, 40, a, n);
		ck_assert_uint_eq(toeplitz_hash_table(t, a, n), ha);
		ck_assert_uint_eq(toeplitz_hash_table(t, x, n), ha ^ toeplitz_hash_table(t, b, n));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toeplitz");
	TCase *tc = tcase_create("vectors");
	tcase_add_test(tc, test_ip4_rows);
	tcase_add_test(tc, test_ip6_rows);
	tcase_add_test(tc, test_worked_example_and_mistakes);
	tcase_add_test(tc, test_other_keys);
	tcase_add_test(tc, test_table_matches_reference);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
