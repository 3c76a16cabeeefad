/* `show buffers`: the pools, and who holds each buffer in use (the holders
 * of graph/buffer_holders.c), read with the datapath parked. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/graph.h"

static void pools_text(struct cli_session *s, const struct buffer_pool_stats *st, uint32_t n)
{
	static const struct cli_table_col cols[] = { { "Pool", true },   { "NUMA", true },   { "Total", true },
						     { "Free", true },   { "Cached", true }, { "In use", true },
						     { "Pages", false } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t p = 0; p < n; p++) {
		cli_table_cell(t, "%u", p);
		cli_table_cell(t, "%u", st[p].numa_node);
		cli_table_cell(t, "%u", st[p].n_total);
		cli_table_cell(t, "%u", st[p].n_free_pool);
		cli_table_cell(t, "%u", st[p].n_cached);
		cli_table_cell(t, "%u", st[p].n_in_use);
		cli_table_cell(t, "%s", st[p].hugepages ? "2M" : "4K");
	}
	cli_table_print(s, t);
	for (uint32_t p = 0; p < n; p++) {
		char line[1024];
		int len = snprintf(line, sizeof(line), "pool %u thread caches:", p);
		for (uint32_t c = 0; c < st[p].n_caches && c < BUFFER_MAX_CACHES && len < (int)sizeof(line); c++)
			len += snprintf(line + len, sizeof(line) - (size_t)len, " %u:%u", c, st[p].cached[c]);
		cli_printf(s, "%s", line);
	}
}

/* Places holding nothing are left out; a holder holding nothing anywhere
 * prints once, as "-" and 0, so that the list shows who was asked. */
static void holders_text(struct cli_session *s, const struct buffer_attribution *a)
{
	static const struct cli_table_col cols[] = { { "Holder", false }, { "Where", false }, { "Buffers", true } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t i = 0, j; i < a->n_holdings; i = j) {
		uint64_t total = 0;
		for (j = i; j < a->n_holdings && !strcmp(a->holdings[j].holder, a->holdings[i].holder); j++)
			total += a->holdings[j].n;
		for (uint32_t k = i; k < j; k++) {
			const struct buffer_holding *h = &a->holdings[k];
			if (total && !h->n)
				continue;
			cli_table_cell(t, "%s", h->holder);
			cli_table_cell(t, "%s", total && h->where[0] ? h->where : "-");
			cli_table_cell(t, "%llu", (unsigned long long)h->n);
			if (!total)
				break;
		}
	}
	cli_table_cell(t, "%s", "unattributed");
	cli_table_cell(t, "%s", "-");
	cli_table_cell(t, "%lld", (long long)a->n_unattributed);
	cli_table_print(s, t);
}

/* The first thread the watchdog calls stalled, or -1. The barrier would
 * wait for it for as long as it stalls, and `show buffers` is what one
 * runs to look at a stall. */
static int stalled_thread(struct graph *g)
{
	for (uint32_t i = 0; i < graph_n_threads(g); i++) {
		struct graph_thread_info ti;
		if (graph_thread_info(g, i, &ti) == 0 && ti.stalled)
			return (int)i;
	}
	return -1;
}

static cJSON *buffers_json(const struct buffer_pool_stats *st, uint32_t n, const struct buffer_attribution *a,
			   bool exact)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddBoolToObject(root, "exact", exact);
	cJSON *pools = cJSON_AddArrayToObject(root, "pools");
	for (uint32_t p = 0; p < n; p++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "index", p);
		cJSON_AddNumberToObject(o, "numa", st[p].numa_node);
		cJSON_AddNumberToObject(o, "total", st[p].n_total);
		cJSON_AddNumberToObject(o, "free", st[p].n_free_pool);
		cJSON_AddNumberToObject(o, "cached", st[p].n_cached);
		cJSON_AddNumberToObject(o, "in_use", st[p].n_in_use);
		cJSON_AddBoolToObject(o, "hugepages", st[p].hugepages);
		cJSON *caches = cJSON_AddArrayToObject(o, "thread_caches");
		for (uint32_t c = 0; c < st[p].n_caches && c < BUFFER_MAX_CACHES; c++)
			cJSON_AddItemToArray(caches, cJSON_CreateNumber(st[p].cached[c]));
		cJSON_AddItemToArray(pools, o);
	}
	cJSON *holders = cJSON_AddArrayToObject(root, "holders");
	for (uint32_t i = 0; i < a->n_holdings; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "holder", a->holdings[i].holder);
		cJSON_AddStringToObject(o, "where", a->holdings[i].where);
		cJSON_AddNumberToObject(o, "buffers", (double)a->holdings[i].n);
		cJSON_AddItemToArray(holders, o);
	}
	cJSON_AddNumberToObject(root, "in_use", (double)a->n_in_use);
	cJSON_AddNumberToObject(root, "attributed", (double)a->n_attributed);
	cJSON_AddNumberToObject(root, "unattributed", (double)a->n_unattributed);
	return root;
}

/*
 * sluice> show buffers
 * Pool  NUMA  Total   Free  Cached  In use  Pages
 *    0     0  16384  15104     768     512  4K
 * pool 0 thread caches: 0:256 1:512
 * Holder        Where          Buffers
 * ip4-neighbor  -                    0
 * device        xe0 rx 0           512
 * frames        -                    0
 * distributor   -                    0
 * timers        -                    0
 * unattributed  -                    0
 *
 * Every buffer in use is set against the holder that has it (see
 * buffer_holder_register); "unattributed" is what no holder claims: a leak
 * (or, negative, a holder counting twice). The pools and holders are read
 * with the datapath parked, so the figures are one moment's and add up
 * (unless a thread is stalled: the others are parked, that one is not
 * waited for and its pending frames are not walked, and a line says so).
 * Packet trace and pcap capture copy bytes and hold no buffer. `json`:
 * {"exact", "pools": [{"index", "numa", "total", "free", "cached", "in_use",
 * "hugepages", "thread_caches": [n...]}], "holders": [{"holder", "where",
 * "buffers"}], "in_use", "attributed", "unattributed"}.
 */
static int show_buffers(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	struct graph *g = cli_graph(s);
	struct buffer_pool_stats st[BUFFER_MAX_POOLS];
	struct buffer_attribution a;
	uint32_t n = 0;
	uint32_t n_let_go = g ? graph_barrier_sync_unstalled(g) : 0;
	while (n < BUFFER_MAX_POOLS && buffer_pool_stats(n, &st[n]) == 0)
		n++;
	rc = buffer_attribute(&a);
	int stalled = n_let_go ? stalled_thread(g) : -1;
	if (g)
		graph_barrier_release(g);
	if (rc)
		return cli_fail(s, rc, "out of memory");
	if (n_let_go && !json && stalled >= 0)
		cli_printf(s, "thread %d is stalled: read without waiting for it at the barrier, the figures are approximate",
			   stalled);
	else if (n_let_go && !json)
		cli_printf(s, "a thread was stalled: read without waiting for it at the barrier, the figures are approximate");
	if (json)
		cli_json_print(s, buffers_json(st, n, &a, n_let_go == 0));
	else if (n) {
		pools_text(s, st, n);
		holders_text(s, &a);
	} else
		cli_printf(s, "no buffer pools");
	buffer_attribution_free(&a);
	return 0;
}

CLI_COMMAND(show_buffers_cmd, "show buffers", "show buffers [json]",
	    "Buffer pools, and who holds each buffer in use (unattributed: a leak)", show_buffers)
