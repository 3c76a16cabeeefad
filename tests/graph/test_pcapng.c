/* base/pcapng: the exact bytes of each block for a known input (little
 * endian host, as buffer.h already requires), and a file libpcap 1.10
 * reads back with pcap_open_offline. */
#include <check.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pcapng.h"
#include "tests/check_run.h"

START_TEST(shb_bytes)
{
	uint8_t buf[64];
	size_t n = pcapng_shb(buf, sizeof(buf), "ab");
	static const uint8_t want[] = {
		0x0a, 0x0d, 0x0d, 0x0a, 40, 0, 0, 0,		/* type, total length */
		0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0,		/* magic, 1.0 */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* section length -1 */
		4, 0, 2, 0, 'a', 'b', 0, 0,			/* shb_userappl "ab", padded */
		0, 0, 0, 0,					/* opt_endofopt */
		40, 0, 0, 0,					/* total length again */
	};
	ck_assert_uint_eq(n, sizeof(want));
	ck_assert_mem_eq(buf, want, sizeof(want));
	ck_assert_uint_eq(pcapng_shb(buf, 39, "ab"), 0); /* does not fit */
}
END_TEST

START_TEST(idb_bytes)
{
	uint8_t buf[64];
	size_t n = pcapng_idb(buf, sizeof(buf), 1, 256, "ip4-input", "n", 9);
	static const uint8_t want[] = {
		1, 0, 0, 0, 56, 0, 0, 0,				/* IDB, 56 */
		1, 0, 0, 0, 0, 1, 0, 0,					/* Ethernet, reserved, snaplen 256 */
		2, 0, 9, 0, 'i', 'p', '4', '-', 'i', 'n', 'p', 'u', 't', 0, 0, 0, /* if_name, 9 + 3 pad */
		3, 0, 1, 0, 'n', 0, 0, 0,				/* if_description */
		9, 0, 1, 0, 9, 0, 0, 0,					/* if_tsresol 10^-9 */
		0, 0, 0, 0, 56, 0, 0, 0,
	};
	ck_assert_uint_eq(n, sizeof(want));
	ck_assert_mem_eq(buf, want, sizeof(want));
}
END_TEST

START_TEST(epb_bytes)
{
	uint8_t buf[128];
	const uint8_t pkt[5] = { 0xde, 0xad, 0xbe, 0xef, 0x01 };
	size_t n = pcapng_epb(buf, sizeof(buf), 3, 0x0000000100000002ull, pkt, 5, 60, "hi!");
	static const uint8_t want[] = {
		6, 0, 0, 0, 52, 0, 0, 0,	/* EPB, 52 */
		3, 0, 0, 0,			/* interface 3 */
		1, 0, 0, 0, 2, 0, 0, 0,		/* timestamp high, low */
		5, 0, 0, 0, 60, 0, 0, 0,	/* captured 5 of 60 */
		0xde, 0xad, 0xbe, 0xef, 0x01, 0, 0, 0, /* data padded to 32 bits */
		1, 0, 3, 0, 'h', 'i', '!', 0,	/* opt_comment */
		0, 0, 0, 0, 52, 0, 0, 0,
	};
	ck_assert_uint_eq(n, sizeof(want));
	ck_assert_mem_eq(buf, want, sizeof(want));
	/* No comment: no options at all, not even opt_endofopt. */
	ck_assert_uint_eq(pcapng_epb(buf, sizeof(buf), 0, 0, pkt, 4, 4, NULL), 36);
	ck_assert_uint_eq(buf[4], 36);
	ck_assert_uint_eq(buf[32], 36);
}
END_TEST

/* A file with two interfaces and three packets; libpcap reads the packets
 * back with their lengths, bytes and nanosecond times. */
START_TEST(libpcap_reads_back)
{
	char path[] = "/tmp/sluice-pcapng-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	struct pcapng_file p;
	ck_assert_int_eq(pcapng_open(&p, fdopen(fd, "w"), 4096, "test"), 0);
	ck_assert_int_eq(pcapng_add_interface(&p, "a", "first", 128), 0);
	ck_assert_int_eq(pcapng_add_interface(&p, "b", NULL, 128), 1);
	uint8_t frame[60];
	for (uint32_t i = 0; i < 3; i++) {
		memset(frame, (int)i + 1, sizeof(frame));
		ck_assert_int_eq(pcapng_write_packet(&p, i & 1, 1700000000123456789ull + i, frame, 60 - i, 60,
						     i ? "node x" : NULL),
				 0);
	}
	ck_assert_int_eq(pcapng_close(&p), 0);

	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	ck_assert_msg(pc != NULL, "%s", err);
	ck_assert_int_eq(pcap_datalink(pc), DLT_EN10MB);
	struct pcap_pkthdr *h;
	const u_char *data;
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_int_eq(pcap_next_ex(pc, &h, &data), 1);
		ck_assert_uint_eq(h->caplen, 60 - i);
		ck_assert_uint_eq(h->len, 60);
		ck_assert_int_eq(h->ts.tv_sec, 1700000000);
		ck_assert_int_eq(h->ts.tv_usec, 123456789 + i); /* nanoseconds with _NANO */
		ck_assert_uint_eq(data[0], i + 1);
	}
	ck_assert_int_eq(pcap_next_ex(pc, &h, &data), PCAP_ERROR_BREAK);
	pcap_close(pc);
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pcapng");
	TCase *tc = tcase_create("blocks");
	tcase_add_test(tc, shb_bytes);
	tcase_add_test(tc, idb_bytes);
	tcase_add_test(tc, epb_bytes);
	tcase_add_test(tc, libpcap_reads_back);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
