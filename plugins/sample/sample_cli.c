/* The sample plugin's commands:
 *
 *   sluice# show sample flows
 *   Thread  Source         Destination    Proto  Sport  Dport  Packets  Bytes
 *   0       10.0.0.1       10.0.1.1       17     1000   2000   10       460
 *   sluice# clear sample flows
 *
 * The tables are each thread's runtime data: read and cleared under the
 * barrier, so no thread is counting meanwhile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/graph.h"
#include "sample.h"

struct row {
	uint32_t thread;
	struct sample_flow f;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	uint64_t kx[3] = { (uint64_t)x->thread << 32 | x->f.src, (uint64_t)x->f.dst << 8 | x->f.proto,
			   (uint64_t)x->f.sport << 16 | x->f.dport };
	uint64_t ky[3] = { (uint64_t)y->thread << 32 | y->f.src, (uint64_t)y->f.dst << 8 | y->f.proto,
			   (uint64_t)y->f.sport << 16 | y->f.dport };
	for (int i = 0; i < 3; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

/* Copy (or, with clear, zero) every thread's table under the barrier.
 * Returns the rows (malloc'd, sorted) and their count in *n. */
static struct row *collect(struct graph *g, int node, bool clear, uint32_t *n)
{
	uint32_t n_threads = graph_n_threads(g), cap = n_threads * SAMPLE_FLOWS_MAX;
	struct row *rows = clear ? NULL : malloc((cap ? cap : 1) * sizeof(*rows));
	*n = 0;
	if (!clear && !rows)
		return NULL;
	graph_barrier_sync(g);
	/* The rows were sized for the threads counted above. */
	for (uint32_t t = 0; t < MIN(n_threads, graph_n_threads(g)); t++) {
		struct node_runtime *rt = graph_node_runtime(g, t, (uint32_t)node);
		struct sample_flows *ft = rt ? rt->data : NULL;
		if (!ft)
			continue;
		if (clear) {
			memset(ft, 0, sizeof(*ft));
			continue;
		}
		for (uint32_t i = 0; i < SAMPLE_FLOWS_MAX; i++)
			if (ft->flow[i].used)
				rows[(*n)++] = (struct row){ .thread = t, .f = ft->flow[i] };
	}
	graph_barrier_release(g);
	if (rows)
		qsort(rows, *n, sizeof(*rows), row_cmp);
	return rows;
}

static void ip_text(uint32_t a, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

static void print_json(struct cli_session *s, const struct row *rows, uint32_t n)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(root, "flows");
	char a[16];
	for (uint32_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "thread", rows[i].thread);
		ip_text(rows[i].f.src, a, sizeof(a));
		cJSON_AddStringToObject(o, "src", a);
		ip_text(rows[i].f.dst, a, sizeof(a));
		cJSON_AddStringToObject(o, "dst", a);
		cJSON_AddNumberToObject(o, "proto", rows[i].f.proto);
		cJSON_AddNumberToObject(o, "sport", rows[i].f.sport);
		cJSON_AddNumberToObject(o, "dport", rows[i].f.dport);
		cJSON_AddNumberToObject(o, "packets", (double)rows[i].f.packets);
		cJSON_AddNumberToObject(o, "bytes", (double)rows[i].f.bytes);
		cJSON_AddItemToArray(arr, o);
	}
	cli_json_print(s, root);
}

static void print_table(struct cli_session *s, const struct row *rows, uint32_t n)
{
	static const struct cli_table_col cols[] = {
		{ "Thread", true }, { "Source", false }, { "Destination", false }, { "Proto", true },
		{ "Sport", true },  { "Dport", true },   { "Packets", true },      { "Bytes", true },
	};
	struct cli_table *t = cli_table_create(cols, 8);
	char a[16];
	if (!t)
		return;
	for (uint32_t i = 0; i < n; i++) {
		const struct sample_flow *f = &rows[i].f;
		cli_table_cell(t, "%u", rows[i].thread);
		ip_text(f->src, a, sizeof(a));
		cli_table_cell(t, "%s", a);
		ip_text(f->dst, a, sizeof(a));
		cli_table_cell(t, "%s", a);
		cli_table_cell(t, "%u", f->proto);
		cli_table_cell(t, "%u", f->sport);
		cli_table_cell(t, "%u", f->dport);
		cli_table_cell(t, "%llu", (unsigned long long)f->packets);
		cli_table_cell(t, "%llu", (unsigned long long)f->bytes);
	}
	cli_table_print(s, t); /* and frees it */
}

static int sample_node_index(struct cli_session *s)
{
	struct graph *g = cli_graph(s);
	int node = g ? graph_node_index(g, "sample-flow") : -ENOENT;
	if (node < 0)
		cli_fail(s, -ENOENT, "no sample-flow node in the graph");
	return node;
}

static int show_sample_flows(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	int node = rc ? rc : sample_node_index(s);
	if (node < 0)
		return node;
	uint32_t n;
	struct row *rows = collect(cli_graph(s), node, false, &n);
	if (!rows)
		return cli_fail(s, -ENOMEM, "out of memory");
	if (json)
		print_json(s, rows, n);
	else if (n)
		print_table(s, rows, n);
	else
		cli_printf(s, "no flows");
	free(rows);
	return 0;
}

static int clear_sample_flows(struct cli_session *s, int argc, char **argv)
{
	(void)argv;
	if (argc)
		return -EINVAL;
	int node = sample_node_index(s);
	if (node < 0)
		return node;
	uint32_t n;
	collect(cli_graph(s), node, true, &n);
	return 0;
}

CLI_COMMAND(show_sample_flows_cmd, "show sample flows", "show sample flows [json]",
	    "the sample plugin's per-flow IPv4 counters", show_sample_flows)
CLI_COMMAND(clear_sample_flows_cmd, "clear sample flows", "clear sample flows", "zero the sample plugin's flow tables",
	    clear_sample_flows)
