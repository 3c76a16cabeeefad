/* graph/pkt_filter and `trace add ... filter`: libpcap's expressions on
 * buffers (one and chained), and a filtered trace on a running graph whose
 * input emits a known mix of UDP 53 and TCP frames. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "tests/check_run.h"
#include "tests/graph/test_nodes.h"
#include "graph/pkt_filter.h"

#define PCAP_ERRBUF_SIZE_TEST 512

/* Ethernet + IPv4 (no checksum: a filter does not read it) + UDP or TCP
 * ports, 64 bytes, port dport; byte 63 is 0x55. */
static void frame(uint8_t *p, bool udp, uint16_t dport)
{
	memset(p, 0, 64);
	memcpy(p, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00", 14);
	uint8_t *ip = p + 14;
	ip[0] = 0x45;
	ip[3] = 50; /* total length */
	ip[8] = 64;
	ip[9] = udp ? 17 : 6;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	uint8_t *l4 = ip + 20;
	l4[0] = 0x30; /* sport 12345 */
	l4[1] = 0x39;
	l4[2] = (uint8_t)(dport >> 8);
	l4[3] = (uint8_t)dport;
	if (!udp)
		l4[12] = 0x50;
	p[63] = 0x55;
}

static uint32_t one_buffer(bool udp, uint16_t dport)
{
	uint32_t bi;
	ck_assert_uint_eq(buffer_alloc(&bi, 1, -1), 1);
	struct buffer *b = buffer_get(bi);
	frame(buffer_data(b), udp, dport);
	b->current_length = 64;
	return bi;
}

START_TEST(test_compile_and_match)
{
	tn_buffers(64);
	char err[PCAP_ERRBUF_SIZE_TEST];
	ck_assert_ptr_null(pkt_filter_compile("udp port", err, sizeof(err)));
	ck_assert_msg(strstr(err, "syntax error"), "libpcap's message: %s", err);
	ck_assert_ptr_null(pkt_filter_compile("ip broadcast", err, sizeof(err))); /* needs a netmask */
	ck_assert_msg(err[0], "a message for ip broadcast");
	struct pkt_filter *f = pkt_filter_compile("udp port 53", err, sizeof(err));
	ck_assert_msg(f, "%s", err);
	ck_assert_str_eq(pkt_filter_expr(f), "udp port 53");
	uint32_t dns = one_buffer(true, 53), ntp = one_buffer(true, 123), web = one_buffer(false, 53);
	ck_assert(pkt_filter_match(f, buffer_get(dns)));
	ck_assert(!pkt_filter_match(f, buffer_get(ntp)));
	ck_assert(!pkt_filter_match(f, buffer_get(web)));
	/* The packet starts at current_data, as the input node left it. */
	buffer_advance(buffer_get(dns), 14);
	ck_assert(!pkt_filter_match(f, buffer_get(dns)));
	uint32_t all[] = { dns, ntp, web };
	buffer_free(all, 3);
	pkt_filter_free(f);
	pkt_filter_free(NULL);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}
END_TEST

/* A chain: the first buffer's bytes are read, the length is the chain's. */
START_TEST(test_chain_first_buffer)
{
	tn_buffers(64);
	char err[PCAP_ERRBUF_SIZE_TEST];
	uint32_t head = one_buffer(true, 53), tail;
	ck_assert_uint_eq(buffer_alloc(&tail, 1, -1), 1);
	struct buffer *h = buffer_get(head), *t = buffer_get(tail);
	h->current_length = 40; /* the frame's bytes 40..63 are in tail */
	memcpy(buffer_data(t), buffer_data(h) + 40, 24);
	t->current_length = 24;
	h->flags |= BUFFER_F_NEXT_PRESENT;
	h->next_buffer = tail;
	h->total_length_not_including_first = 24;
	struct pkt_filter *in_first = pkt_filter_compile("udp dst port 53", err, sizeof(err));
	struct pkt_filter *beyond = pkt_filter_compile("ether[63] = 0x55", err, sizeof(err));
	struct pkt_filter *len = pkt_filter_compile("len = 64", err, sizeof(err));
	ck_assert(in_first && beyond && len);
	ck_assert(pkt_filter_match(in_first, h));
	ck_assert(!pkt_filter_match(beyond, h)); /* byte 63 lies in the second buffer */
	ck_assert(pkt_filter_match(len, h));
	h->flags &= ~BUFFER_F_NEXT_PRESENT;
	ck_assert(!pkt_filter_match(len, h));
	h->current_length = 64;
	ck_assert(pkt_filter_match(beyond, h));
	pkt_filter_free(in_first);
	pkt_filter_free(beyond);
	pkt_filter_free(len);
	uint32_t all[] = { head, tail };
	buffer_free(all, 2);
	buffer_main_free();
}
END_TEST

/* ---- a running graph: pf-source emits seq 0, 1, 2...; every fourth is UDP
 * 53, the others TCP 53 (a port filter alone would take them) ---- */

#define PF_TOTAL 64u
static uint32_t pf_next_seq;

static uint32_t pf_source_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	uint32_t bi[16];
	uint32_t want = MIN(16u, PF_TOTAL - pf_next_seq);
	uint32_t n = want ? buffer_alloc(bi, want, -1) : 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t seq = pf_next_seq++;
		struct buffer *b = buffer_get(bi[i]);
		frame(buffer_data(b), seq % 4 == 0, 53);
		b->current_length = 64;
		tn_set_seq(bi[i], seq);
	}
	node_trace_input(rt, bi, n);
	node_enqueue(rt, 0, bi, n);
	return n;
}

static const struct node_reg pf_source_node = {
	.name = "pf-source",
	.type = NODE_TYPE_INPUT,
	.fn = pf_source_fn,
	.n_next = 1,
	.next_nodes = { "error-drop" },
};

static struct graph *pf_graph(void)
{
	tn_buffers(1024);
	pf_next_seq = 0;
	static const struct node_reg *const regs[] = { &pf_source_node };
	return tn_graph(regs, 1);
}

static void pf_done(struct graph *g)
{
	graph_destroy(g);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}

static void pf_run(struct graph *g)
{
	for (uint32_t i = 0; i < 2 * PF_TOTAL / 16 && pf_next_seq < PF_TOTAL; i++)
		graph_main_poll(g);
	ck_assert_uint_eq(pf_next_seq, PF_TOTAL);
}

/* Traced packets are the first 10 UDP ones, each with its input record. */
START_TEST(test_trace_filtered_exact)
{
	struct graph *g = pf_graph();
	char err[PCAP_ERRBUF_SIZE_TEST];
	int src = graph_node_index(g, "pf-source");
	ck_assert_int_eq(graph_trace_add_filtered(g, "pf-source", 10, "udp port 53", err, sizeof(err)), 0);
	ck_assert_str_eq(graph_trace_filter(g, (uint32_t)src), "udp port 53");
	pf_run(g);
	/* 16 UDP packets in 64: the 10 first are traced, the TCP ones not at
	 * all and without using up any of the 10. */
	ck_assert_uint_eq(graph_trace_n_packets(g), 10);
	for (uint32_t p = 0; p < 10; p++) {
		const struct trace_record *r;
		ck_assert_uint_eq(graph_trace_packet(g, p, &r, NULL), 2);
		ck_assert_int_eq(r[0].node_index, src);
	}
	graph_trace_clear(g);
	ck_assert_ptr_null(graph_trace_filter(g, (uint32_t)src));
	ck_assert_uint_eq(graph_trace_n_packets(g), 0);
	pf_done(g);
}
END_TEST

/* More budget than matches: exactly the matching ones; a later add without
 * a filter replaces it. */
START_TEST(test_trace_filter_all_matches_then_unfiltered)
{
	struct graph *g = pf_graph();
	char err[PCAP_ERRBUF_SIZE_TEST];
	ck_assert_int_eq(graph_trace_add_filtered(g, "pf-source", 1000, "udp", err, sizeof(err)), 0);
	pf_run(g);
	ck_assert_uint_eq(graph_trace_n_packets(g), PF_TOTAL / 4);
	graph_trace_clear(g);
	pf_next_seq = 0;
	ck_assert_int_eq(graph_trace_add_filtered(g, "pf-source", 7, "tcp", err, sizeof(err)), 0);
	ck_assert_int_eq(graph_trace_add(g, "pf-source", 5, err, sizeof(err)), 0);
	ck_assert_ptr_null(graph_trace_filter(g, (uint32_t)graph_node_index(g, "pf-source")));
	pf_run(g);
	ck_assert_uint_eq(graph_trace_n_packets(g), 12); /* the first 12, any protocol */
	pf_done(g); /* with the trace still armed: its filter is freed once */
}
END_TEST

/* A bad expression: libpcap's message, nothing armed, the old filter kept. */
START_TEST(test_trace_bad_expression)
{
	struct graph *g = pf_graph();
	char err[PCAP_ERRBUF_SIZE_TEST];
	int src = graph_node_index(g, "pf-source");
	ck_assert_int_eq(graph_trace_add_filtered(g, "pf-source", 10, "udp port 53 and", err, sizeof(err)), -EBADMSG);
	ck_assert_msg(strstr(err, "syntax error"), "%s", err);
	ck_assert_ptr_null(graph_trace_filter(g, (uint32_t)src));
	ck_assert_int_eq(graph_trace_add_filtered(g, "tn-nosuch", 10, "udp", err, sizeof(err)), -ENOENT);
	pf_run(g);
	ck_assert_uint_eq(graph_trace_n_packets(g), 0);
	pf_done(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pkt_filter");
	TCase *tc = tcase_create("pkt_filter");
	tcase_add_test(tc, test_compile_and_match);
	tcase_add_test(tc, test_chain_first_buffer);
	tcase_add_test(tc, test_trace_filtered_exact);
	tcase_add_test(tc, test_trace_filter_all_matches_then_unfiltered);
	tcase_add_test(tc, test_trace_bad_expression);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
