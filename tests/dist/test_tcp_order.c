/* tcp-order, the iperf3 test's judge, on captures written here: it must
 * pass a stream with segments left out and fail one reordered, duplicated
 * or invented, and keep streams and directions apart.
 *
 *   test_tcp_order TCP_ORDER
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/check_run.h"

static const char *tcp_order;
static char dir[64];

struct seg {
	uint16_t sport; /* client port; the stream is 10.1.0.2:sport > 10.2.0.2:5201 */
	uint32_t seq;
	uint16_t len;
	uint16_t id;
	int vlan;
};

/* An Ethernet + IPv4 + TCP frame with len payload bytes (captured as 96). */
static uint32_t build(uint8_t *f, const struct seg *s)
{
	memset(f, 0, 128);
	uint32_t off = 12;
	if (s->vlan) {
		f[off] = 0x81;
		f[off + 2] = 0;
		f[off + 3] = 7;
		off += 4;
	}
	f[off] = 0x08;
	off += 2;
	uint8_t *ip = f + off;
	uint16_t total = (uint16_t)(40 + s->len);
	ip[0] = 0x45;
	ip[2] = (uint8_t)(total >> 8);
	ip[3] = (uint8_t)total;
	ip[4] = (uint8_t)(s->id >> 8);
	ip[5] = (uint8_t)s->id;
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, (uint8_t[]){ 10, 1, 0, 2 }, 4);
	memcpy(ip + 16, (uint8_t[]){ 10, 2, 0, 2 }, 4);
	uint8_t *tcp = ip + 20;
	tcp[0] = (uint8_t)(s->sport >> 8);
	tcp[1] = (uint8_t)s->sport;
	tcp[2] = 5201 >> 8;
	tcp[3] = 5201 & 0xff;
	for (int i = 0; i < 4; i++)
		tcp[4 + i] = (uint8_t)(s->seq >> (24 - 8 * i));
	tcp[12] = 5 << 4;
	return off + 40 + s->len;
}

static void write_pcap(const char *name, const struct seg *segs, int n)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 96);
	pcap_dumper_t *d = pcap_dump_open(p, path);
	ck_assert_ptr_nonnull(d);
	for (int i = 0; i < n; i++) {
		uint8_t f[2048];
		uint32_t len = build(f, &segs[i]);
		struct pcap_pkthdr h = { .caplen = len < 96 ? len : 96, .len = len };
		pcap_dump((u_char *)d, &h, f);
	}
	pcap_dump_close(d);
	pcap_close(p);
}

/* Runs tcp-order on in.pcap and out.pcap; returns its exit status, its
 * output in out. */
static int judge(char *out, size_t len)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s %s/in.pcap %s/out.pcap > %s/res 2>&1", tcp_order, dir, dir, dir);
	int rc = system(cmd);
	ck_assert(WIFEXITED(rc));
	snprintf(cmd, sizeof(cmd), "%s/res", dir);
	FILE *f = fopen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(out, 1, len - 1, f);
	out[n] = 0;
	fclose(f);
	return WEXITSTATUS(rc);
}

/* Two streams interleaved: 4 segments of port 1000, 3 of port 2000. */
static const struct seg in[] = {
	{ 1000, 100, 1448, 1, 0 }, { 2000, 7, 1448, 50, 0 }, { 1000, 1548, 1448, 2, 0 },
	{ 1000, 2996, 1448, 3, 0 }, { 2000, 1455, 0, 51, 0 }, { 1000, 4444, 10, 4, 0 },
	{ 2000, 1455, 100, 52, 1 },
};

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-tcp-order-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_pcap("in.pcap", in, 7);
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_identical_passes)
{
	char out[4096];
	write_pcap("out.pcap", in, 7);
	ck_assert_int_eq(judge(out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "ok 10.1.0.2:1000 > 10.2.0.2:5201: ingress 4 egress 4 missing 0"));
	ck_assert_ptr_nonnull(strstr(out, "ok 10.1.0.2:2000 > 10.2.0.2:5201: ingress 3 egress 3 missing 0"));
	ck_assert_ptr_nonnull(strstr(out, "total: streams 2 ingress 7 egress 7 missing 0"));
}
END_TEST

/* Streams interleave differently at egress, one segment of each is lost,
 * the VLAN tag is gone: still in order. */
START_TEST(test_left_out_passes)
{
	char out[4096];
	const struct seg eg[] = { in[1], in[0], in[3], in[6], in[5] };
	struct seg e[5];
	memcpy(e, eg, sizeof(e));
	e[3].vlan = 0;
	write_pcap("out.pcap", e, 5);
	ck_assert_int_eq(judge(out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "ok 10.1.0.2:1000 > 10.2.0.2:5201: ingress 4 egress 3 missing 1"));
	ck_assert_ptr_nonnull(strstr(out, "ok 10.1.0.2:2000 > 10.2.0.2:5201: ingress 3 egress 2 missing 1"));
	ck_assert_ptr_nonnull(strstr(out, "total: streams 2 ingress 7 egress 5 missing 2"));
}
END_TEST

START_TEST(test_reorder_fails)
{
	char out[4096];
	const struct seg e[] = { in[0], in[1], in[3], in[2], in[4], in[5], in[6] };
	write_pcap("out.pcap", e, 7);
	ck_assert_int_eq(judge(out, sizeof(out)), 1);
	ck_assert_ptr_nonnull(strstr(out, "FAIL 10.1.0.2:1000 > 10.2.0.2:5201: egress segment 2 (seq 1548 len 1448 id 2) "
					  "left after a segment that arrived later"));
	ck_assert_ptr_nonnull(strstr(out, "ok 10.1.0.2:2000"));
}
END_TEST

START_TEST(test_duplicate_fails)
{
	char out[4096];
	const struct seg e[] = { in[0], in[1], in[2], in[4], in[4], in[6] };
	write_pcap("out.pcap", e, 6);
	ck_assert_int_eq(judge(out, sizeof(out)), 1);
	ck_assert_ptr_nonnull(strstr(out, "FAIL 10.1.0.2:2000 > 10.2.0.2:5201: egress segment 2 (seq 1455 len 0 id 51)"));
}
END_TEST

/* Same sequence and length with another IP id (a retransmission that never
 * arrived), and a stream that never arrived at all. */
START_TEST(test_invented_fails)
{
	char out[4096];
	struct seg e[] = { in[0], in[2], { 3000, 1, 1, 1, 0 } };
	e[1].id = 9;
	write_pcap("out.pcap", e, 3);
	ck_assert_int_eq(judge(out, sizeof(out)), 1);
	ck_assert_ptr_nonnull(strstr(out, "FAIL 10.1.0.2:1000 > 10.2.0.2:5201: egress segment 1 (seq 1548 len 1448 id 9) "
					  "never arrived at ingress"));
	ck_assert_ptr_nonnull(strstr(out, "FAIL 10.1.0.2:3000 > 10.2.0.2:5201: egress segment 0"));
}
END_TEST

START_TEST(test_bad_input)
{
	char out[4096];
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "%s/out.pcap", dir);
	FILE *f = fopen(cmd, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not a capture", f);
	fclose(f);
	ck_assert_int_eq(judge(out, sizeof(out)), 2);
	ck_assert_ptr_nonnull(strstr(out, "tcp-order: "));
}
END_TEST

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_tcp_order TCP_ORDER\n");
		return 2;
	}
	tcp_order = argv[1];
	Suite *s = suite_create("tcp-order");
	TCase *tc = tcase_create("judge");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_identical_passes);
	tcase_add_test(tc, test_left_out_passes);
	tcase_add_test(tc, test_reorder_fails);
	tcase_add_test(tc, test_duplicate_fails);
	tcase_add_test(tc, test_invented_fails);
	tcase_add_test(tc, test_bad_input);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
