/* The hierarchy in the graph, driven through its commands: sched-egress
 * with subscribers on a test device, thread 0's timer service on a
 * simulated clock. Exact departure times per subscriber through the
 * timer, the port (the shaper) over them, queue-limit drops under their
 * named error, held packets in `show buffers`, `show sched subscriber`
 * (text and json), bad commands refused with nothing changed, removal at
 * run time, and the hierarchy off; the pool whole after each case.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cJSON.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/sched/sched_hqos.h"
#include "tests/check_run.h"

#define US 1000ull
#define MS 1000000ull
#define MAX_REC 256

static char err[256];
static struct graph *g;
static struct {
	uint8_t tag, dst;
	uint64_t at;
} sent[MAX_REC];

#include "tests/sched/egress_graph.h"

static void egress_record(uint32_t bi)
{
	const uint8_t *p = buffer_data(buffer_get(bi));
	sent[n_sent].tag = p[60];
	sent[n_sent].dst = p[33];
	sent[n_sent++].at = sim_now;
}

/* A 1000-byte IPv4 frame to 10.0.0.dst; byte 60 is its tag. */
static uint32_t frame(uint8_t tag, uint8_t dst)
{
	uint8_t p[64] = { 0 };
	p[12] = 0x08, p[14] = 0x45, p[23] = 17;
	p[30] = 10, p[33] = dst;
	p[60] = tag;
	uint32_t bi = buffer_from_bytes(p, sizeof(p), -1);
	ck_assert_uint_ne(bi, BUFFER_INVALID);
	buffer_get(bi)->tx_if = dev->index;
	buffer_get(bi)->current_length = 1000;
	return bi;
}

static void setup(void)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 4096;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	egress_graph_up();
	cli_set_graph(g);
}

static void teardown(void)
{
	cli_set_graph(NULL);
	sched_io_free_all();
	dev_delete_all();
	egress_graph_down();
	buffer_thread_unregister();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}

static char *cli(const char *line, int want_ok)
{
	char *out = NULL;
	int rc = cli_exec_line(line, &out);
	ck_assert_msg((rc == 0) == (want_ok != 0), "%s: rc %d: %s", line, rc, out ? out : "");
	return out;
}

static void cli_ok(const char *line)
{
	free(cli(line, 1));
}

static void send_now(uint8_t first_tag, uint32_t n, uint8_t dst)
{
	for (uint32_t i = 0; i < n; i++)
		staged[n_staged++] = frame((uint8_t)(first_tag + i), dst);
	graph_main_poll(g);
}

static cJSON *sub_json(const char *name)
{
	char line[128];
	snprintf(line, sizeof(line), "show sched subscriber %s json", name);
	char *out = cli(line, 1);
	cJSON *root = cJSON_Parse(out);
	ck_assert_msg(root != NULL, "%s", out);
	free(out);
	return root;
}

static double json_num(cJSON *root, const char *field)
{
	cJSON *subs = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "interfaces"), 0), "subscribers");
	cJSON *v = cJSON_GetObjectItem(cJSON_GetArrayItem(subs, 0), field);
	ck_assert_msg(v != NULL, "%s: %s", field, cJSON_PrintUnformatted(root));
	return v->valuedouble;
}

/* Port 16 Mbit/s (the shaper), overhead 24; a at 8.192 Mbit/s and b at
 * 4.096, buckets of one frame: 1024 bytes on the wire a frame, so a's
 * frames leave 1 ms apart, b's 2 ms, each through the timer at its exact
 * time (the timer's 10 us tick divides them). */
START_TEST(test_departures)
{
	cli_ok("sched shaper interface e0 rate 16mbit burst 4k");
	cli_ok("sched hqos interface e0 overhead 24");
	cli_ok("sched subscriber a interface e0 rate 8192kbit burst 1024 match dst 10.0.0.1/32");
	cli_ok("sched subscriber b interface e0 rate 4096kbit burst 1024 match dst 10.0.0.2/32");
	ck_assert_uint_eq(sched_egress_on[dev->index], 1);
	uint64_t t0 = sim_now;
	send_now(0, 4, 1);
	send_now(10, 3, 2);
	ck_assert_uint_eq(n_sent, 2); /* a full bucket each */
	for (uint32_t k = 1; k <= 3; k++) {
		advance(t0 + k * 1000 * US - 1);
		uint32_t before = n_sent;
		advance(t0 + k * 1000 * US);
		ck_assert_uint_ge(n_sent, before + 1);
	}
	for (uint64_t t = t0 + 3 * MS + 100 * US; t <= t0 + 10 * MS; t += 100 * US)
		advance(t);
	ck_assert_uint_eq(n_sent, 7);
	uint64_t want_a[] = { 0, 1000, 2000, 3000 }, want_b[] = { 0, 2000, 4000 };
	uint32_t ka = 0, kb = 0;
	for (uint32_t i = 0; i < n_sent; i++) {
		if (sent[i].dst == 1) {
			ck_assert_uint_eq(sent[i].tag, ka);
			ck_assert_uint_eq(sent[i].at, t0 + want_a[ka++] * US);
		} else {
			ck_assert_uint_eq(sent[i].tag, 10 + kb);
			ck_assert_uint_eq(sent[i].at, t0 + want_b[kb++] * US);
		}
	}
	cJSON *j = sub_json("a");
	ck_assert_double_eq(json_num(j, "departed_packets"), 4);
	ck_assert_double_eq(json_num(j, "departed_bytes"), 4000);
	ck_assert_double_eq(json_num(j, "rate_bps"), 8192e3);
	cJSON_Delete(j);
}
END_TEST

/* Bad commands change nothing; queue-limit drops under their error;
 * held packets in show buffers; removal at run time; off. */
START_TEST(test_commands)
{
	const char *bad[] = {
		"sched subscriber a interface e0 rate 8mbit",                          /* no match */
		"sched subscriber a interface nope rate 8mbit match dst 10.0.0.1/32",  /* no interface */
		"sched subscriber a interface e0 rate 8 match dst 10.0.0.1/32",        /* rate without unit */
		"sched subscriber a interface e0 rate 8mbit ceil 1mbit match dst 10.0.0.1/32", /* ceil < rate */
		"sched subscriber a interface e0 rate 8mbit match dst 10.0.0.1/24",    /* host bits */
		"sched subscriber a interface e0 rate 8mbit weight 0 match dst 10.0.0.0/24",
		"sched subscriber a interface e0 rate 8mbit match vlan 4096",
		"sched subscriber a interface e0 rate 8mbit match dst 10.0.0.0/24 color red",
		"sched subscriber default interface e0 match dst 10.0.0.0/24",
		"sched hqos interface e0 queue-limit 0",
		"sched hqos interface e0 codel target 0ms",
		"no sched subscriber a",
		"no sched subscriber default",
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++)
		free(cli(bad[i], 0));
	ck_assert_ptr_null(sched_io_ifs[dev->index].hq);
	char *out = cli("show sched subscriber", 1);
	ck_assert_ptr_nonnull(strstr(out, "no interface has subscribers"));
	free(out);

	cli_ok("sched hqos interface e0 queue-limit 3");
	cli_ok("sched subscriber a interface e0 rate 1mbit burst 1000 match dst 10.0.0.0/24");
	cli_ok("sched subscriber v interface e0 rate 1mbit ceil 2mbit weight 2 match vlan 7");
	free(cli("sched subscriber a interface e0 rate 1mbit match vlan 7", 0)); /* v has that match */
	send_now(0, 6, 5); /* three taken, three dropped; one leaves */
	ck_assert_uint_eq(n_sent, 1);
	const struct node_reg *reg = node_registry_find("sched-egress");
	int node = graph_node_index(g, "sched-egress");
	for (uint16_t code = 0; code < reg->n_errors; code++) {
		bool mine = strstr(reg->error_strings[code], "subscriber queue full") != NULL;
		ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)node, code), mine ? 3 : 0);
	}
	struct buffer_attribution ba;
	ck_assert_int_eq(buffer_attribute(&ba), 0);
	uint64_t held = UINT64_MAX;
	for (uint32_t i = 0; i < ba.n_holdings; i++)
		if (strcmp(ba.holdings[i].holder, "sched") == 0 && strcmp(ba.holdings[i].where, "e0 hqos held") == 0)
			held = ba.holdings[i].n;
	ck_assert_uint_eq(held, 2);
	ck_assert_int_eq(ba.n_unattributed, 0);
	buffer_attribution_free(&ba);
	cJSON *j = sub_json("a");
	ck_assert_double_eq(json_num(j, "backlog_packets"), 2);
	ck_assert_double_eq(json_num(j, "dropped_limit"), 3);
	cJSON_Delete(j);
	out = cli("show sched subscriber", 1);
	ck_assert_msg(strstr(out, "dst 10.0.0.0/24") && strstr(out, "vlan 7") && strstr(out, "default"), "%s", out);
	free(out);
	/* removal: the two held are freed, the rest carries on */
	out = cli("no sched subscriber a", 1);
	ck_assert_ptr_nonnull(strstr(out, "2 held packets freed"));
	free(out);
	free(cli("show sched subscriber a", 0));
	send_now(20, 1, 5); /* now default's: no match, no port limit */
	ck_assert_uint_eq(n_sent, 2);
	cli_ok("sched subscriber a interface e0 rate 1mbit burst 1000 match dst 10.0.0.0/24");
	send_now(30, 3, 5);
	ck_assert_uint_eq(n_sent, 3);
	out = cli("sched hqos interface e0 off", 1);
	ck_assert_ptr_nonnull(strstr(out, "2 held packets freed"));
	free(out);
	ck_assert_uint_eq(sched_egress_on[dev->index], 0);
	send_now(40, 1, 5);
	ck_assert_uint_eq(n_sent, 4);
}
END_TEST

/* The shaper moves between the egress schedule and the hierarchy's port. */
START_TEST(test_port_is_shaper)
{
	cli_ok("sched shaper interface e0 rate 8mbit burst 1000");
	cli_ok("sched subscriber a interface e0 rate 100mbit burst 64k match dst 10.0.0.1/32");
	uint64_t t0 = sim_now;
	send_now(0, 3, 1);
	ck_assert_uint_eq(n_sent, 1);
	advance(t0 + 1000 * US);
	ck_assert_uint_eq(n_sent, 2);
	ck_assert_uint_eq(sent[1].at, t0 + 1000 * US);
	char *out = cli("show sched subscriber json", 1);
	cJSON *root = cJSON_Parse(out);
	free(out);
	cJSON *port = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "interfaces"), 0);
	ck_assert_double_eq(cJSON_GetObjectItem(port, "rate_bps")->valuedouble, 8e6);
	ck_assert_double_eq(cJSON_GetObjectItem(port, "n_subscribers")->valuedouble, 2);
	cJSON_Delete(root);
	struct sched_egress_stats st;
	sched_egress_stats(sched_io_ifs[dev->index].e, &st);
	ck_assert_uint_eq(st.cfg.rate_bps, 0); /* not shaped twice */
	out = cli("show sched json", 1); /* the shaper shown is the port level */
	root = cJSON_Parse(out);
	free(out);
	cJSON *ifj = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "interfaces"), 0);
	ck_assert_double_eq(cJSON_GetObjectItem(ifj, "rate_bps")->valuedouble, 8e6);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(ifj, "hqos")));
	cJSON_Delete(root);
	cli_ok("sched shaper interface e0 rate 4mbit burst 1000");
	advance(t0 + 1000 * US + 2000 * US);
	ck_assert_uint_eq(n_sent, 3);
	free(cli("sched hqos interface e0 off", 1));
	sched_egress_stats(sched_io_ifs[dev->index].e, &st);
	ck_assert_uint_eq(st.cfg.rate_bps, 4000000);
}
END_TEST

/* sched impair subscriber: loss 100% on a drops all of a's packets under
 * the loss error and none of b's; delay 2ms shifts a's departures by 2 ms
 * (the timer's 10 us tick at most later); shown in show sched impair json,
 * show sched subscriber json and the running configuration; bad commands
 * change nothing; off. */
START_TEST(test_sub_impair)
{
	cli_ok("sched subscriber a interface e0 rate 100mbit match dst 10.0.0.1/32");
	cli_ok("sched subscriber b interface e0 rate 100mbit match dst 10.0.0.2/32");
	free(cli("sched impair subscriber nope loss random 100%", 0)); /* no such subscriber */
	free(cli("sched impair subscriber a loss random 200%", 0));    /* over 100% */
	free(cli("sched impair subscriber a", 0));
	send_now(0, 2, 1);
	ck_assert_uint_eq(n_sent, 2); /* nothing impaired */
	cli_ok("sched impair subscriber a loss random 100%");
	send_now(0, 5, 1);
	send_now(10, 5, 2);
	ck_assert_uint_eq(n_sent, 7);
	for (uint32_t i = 2; i < 7; i++)
		ck_assert_uint_eq(sent[i].dst, 2);
	const struct node_reg *reg = node_registry_find("sched-egress");
	int node = graph_node_index(g, "sched-egress");
	for (uint16_t code = 0; code < reg->n_errors; code++) {
		bool mine = strcmp(reg->error_strings[code], "impairment: lost (loss random)") == 0;
		ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)node, code), mine ? 5 : 0);
	}
	cli_ok("sched impair subscriber a delay 2ms");
	uint64_t t0 = sim_now;
	send_now(20, 3, 1);
	send_now(30, 1, 2);
	ck_assert_uint_eq(n_sent, 8); /* b's at once */
	advance(t0 + 2 * MS - 1);
	ck_assert_uint_eq(n_sent, 8);
	for (uint64_t t = t0 + 2 * MS; t <= t0 + 2 * MS + 20 * US; t += US)
		advance(t);
	ck_assert_uint_eq(n_sent, 11);
	for (uint32_t i = 8; i < 11; i++) {
		ck_assert_uint_eq(sent[i].dst, 1);
		ck_assert_uint_eq(sent[i].tag, 20 + i - 8);
		ck_assert_uint_ge(sent[i].at, t0 + 2 * MS);
		ck_assert_uint_le(sent[i].at, t0 + 2 * MS + 10 * US);
	}
	char *out = cli("show sched impair json", 1);
	cJSON *root = cJSON_Parse(out);
	ck_assert_msg(root != NULL, "%s", out);
	free(out);
	cJSON *arr = cJSON_GetObjectItem(root, "interfaces"), *x, *found = NULL;
	cJSON_ArrayForEach(x, arr)
	{
		cJSON *sub = cJSON_GetObjectItem(x, "subscriber");
		if (sub && strcmp(sub->valuestring, "a") == 0)
			found = x;
	}
	ck_assert_msg(found != NULL, "no subscriber a in show sched impair json");
	ck_assert_double_eq(cJSON_GetObjectItem(found, "delay_ns")->valuedouble, 2e6);
	ck_assert_double_eq(cJSON_GetObjectItem(found, "lost_random")->valuedouble, 5);
	ck_assert_double_eq(cJSON_GetObjectItem(found, "enqueued")->valuedouble, 8);
	cJSON_Delete(root);
	cJSON *j = sub_json("a");
	ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
						 cJSON_GetObjectItem(j, "interfaces"), 0), "subscribers"), 0), "impair")->valuestring,
			 "delay 2ms");
	ck_assert_double_eq(json_num(j, "impair_lost"), 5);
	cJSON_Delete(j);
	out = cli("show running-config", 1);
	ck_assert_msg(strstr(out, "sched impair subscriber a delay 2ms\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "sched impair subscriber b") == NULL, "%s", out);
	free(out);
	cli_ok("sched impair subscriber a off");
	send_now(40, 1, 1);
	ck_assert_uint_eq(n_sent, 12);
	out = cli("show running-config", 1);
	ck_assert_msg(strstr(out, "sched impair subscriber a") == NULL, "%s", out);
	free(out);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hqos-nodes");
	TCase *tc = tcase_create("hqos-nodes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_departures);
	tcase_add_test(tc, test_commands);
	tcase_add_test(tc, test_port_is_shaper);
	tcase_add_test(tc, test_sub_impair);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
