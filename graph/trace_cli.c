/* The engine's packet-trace commands: trace add, show trace [max N] [json],
 * trace save FILE, clear trace.
 *
 * Records are written by the datapath, so output is built under the barrier
 * into memory and printed after release: a slow client never holds workers.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pcapng.h"
#include "cli/cli.h"
#include "graph/graph.h"
#include "graph/graph_cli.h"

#define PCAP_ERRBUF_SIZE_CLI 512 /* libpcap's messages are shorter (PCAP_ERRBUF_SIZE) */

/* The words after `filter` as one expression: quoted ("udp port 53") it is
 * one word already, unquoted the rest of the line is taken as tcpdump does. */
static char *trace_filter_words(int argc, char **argv)
{
	size_t len = 1;
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *expr = calloc(1, len);
	for (int i = 0; expr && i < argc; i++) {
		if (i)
			strcat(expr, " ");
		strcat(expr, argv[i]);
	}
	return expr;
}

/*
 * sluice> trace add pg-input 5
 * tracing the next 5 packets of pg-input
 * sluice> trace add pg-input 5 filter "udp port 53"
 * tracing the next 5 packets of pg-input matching 'udp port 53'
 *
 * With `filter`, only packets the tcpdump expression accepts are traced and
 * counted (libpcap compiles and runs it on the frame's first buffer); a bad
 * expression prints libpcap's message and arms nothing. Each `trace add`
 * replaces the node's filter; `clear trace` removes them all.
 */
static int trace_add(struct cli_session *s, int argc, char **argv)
{
	const char *node = NULL;
	uint32_t n = 0;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "NODE", &node, 0, 0 }, { CLI_ARG_U32, "N", &n, 1, 1000000 } };
	struct graph *g = need_graph(s);
	int n_args = argc > 2 && !strcmp(argv[2], "filter") ? 2 : argc;
	if (n_args == 2 && argc == 3)
		return cli_fail(s, -EINVAL, "filter needs a tcpdump expression");
	int rc = g ? cli_args_parse(s, n_args, argv, args, ARRAY_LEN(args)) : -ENODEV;
	if (rc)
		return rc;
	char *filter = n_args < argc ? trace_filter_words(argc - 3, argv + 3) : NULL;
	if (n_args < argc && !filter)
		return cli_fail(s, -ENOMEM, "out of memory");
	char err[PCAP_ERRBUF_SIZE_CLI];
	graph_barrier_sync(g);
	rc = graph_trace_add_filtered(g, node, n, filter, err, sizeof(err));
	graph_barrier_release(g);
	if (!rc)
		cli_printf(s, "tracing the next %u packets of %s%s%s%s", n, node, filter ? " matching '" : "",
			   filter ? filter : "", filter ? "'" : "");
	free(filter);
	return rc ? cli_fail(s, rc, "%s", err) : 0;
}

/* VPP's trace time stamp: hours:minutes:seconds:microseconds. */
static void format_time(char *buf, size_t len, double seconds)
{
	uint64_t us = seconds > 0 ? (uint64_t)(seconds * 1e6) : 0;
	snprintf(buf, len, "%02llu:%02llu:%02llu:%06llu", (unsigned long long)(us / 3600000000ull),
		 (unsigned long long)(us / 60000000ull % 60), (unsigned long long)(us / 1000000ull % 60),
		 (unsigned long long)(us % 1000000ull));
}

static void trace_text_packet(FILE *f, struct graph *g, uint32_t i)
{
	const struct trace_record *r;
	uint32_t lost = 0;
	uint32_t n = graph_trace_packet(g, i, &r, &lost);
	fprintf(f, "Packet %u\n", i + 1);
	for (uint32_t k = 0; k < n; k++) {
		char when[32], detail[512];
		format_time(when, sizeof(when), graph_ticks_to_seconds(g, r[k].ticks));
		graph_trace_format(g, &r[k], detail, sizeof(detail));
		fprintf(f, "  %s thread %u %s\n", when, r[k].thread_index, graph_node_reg(g, r[k].node_index)->name);
		for (char *line = detail, *next; line && *line; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = 0;
			fprintf(f, "    %s\n", line);
		}
	}
	if (lost)
		fprintf(f, "  (%u records lost: more than %d nodes)\n", lost, TRACE_MAX_RECORDS_PER_PACKET);
}

static cJSON *trace_json_packet(struct graph *g, uint32_t i)
{
	const struct trace_record *r;
	uint32_t lost = 0;
	uint32_t n = graph_trace_packet(g, i, &r, &lost);
	cJSON *p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "packet", i + 1);
	cJSON_AddNumberToObject(p, "lost", lost);
	cJSON *recs = cJSON_AddArrayToObject(p, "records");
	for (uint32_t k = 0; k < n; k++) {
		char detail[512];
		graph_trace_format(g, &r[k], detail, sizeof(detail));
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "time", graph_ticks_to_seconds(g, r[k].ticks));
		cJSON_AddNumberToObject(o, "thread", r[k].thread_index);
		cJSON_AddStringToObject(o, "node", graph_node_reg(g, r[k].node_index)->name);
		cJSON_AddNumberToObject(o, "node_index", r[k].node_index);
		cJSON_AddStringToObject(o, "detail", detail);
		cJSON_AddItemToArray(recs, o);
	}
	return p;
}

/* The trace as JSON, read under the barrier so that no record is half
 * written. */
static cJSON *trace_json(struct graph *g, uint32_t max)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *packets = cJSON_AddArrayToObject(root, "packets");
	graph_barrier_sync(g);
	uint32_t n = MIN(graph_trace_n_packets(g), max);
	for (uint32_t i = 0; i < n; i++)
		cJSON_AddItemToArray(packets, trace_json_packet(g, i));
	graph_barrier_release(g);
	return root;
}

static char *trace_text(struct graph *g, uint32_t max)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	graph_barrier_sync(g);
	uint32_t n = MIN(graph_trace_n_packets(g), max);
	for (uint32_t i = 0; i < n; i++)
		trace_text_packet(f, g, i);
	if (!n)
		fprintf(f, "no packets traced: 'trace add NODE N' first\n");
	graph_barrier_release(g);
	fclose(f);
	return text;
}

/*
 * sluice> show trace
 * Packet 1
 *   00:00:01:204511 thread 0 pg-input
 *     stream 0, 64 bytes, index 0
 *   00:00:01:204530 thread 0 error-drop
 *     pg-input: no next
 *
 * `max N` shows the first N packets (default 50); `json` prints
 * {"packets": [{"packet", "lost", "records": [{"time", "thread", "node",
 * "node_index", "detail"}]}]}.
 */
static int show_trace(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	uint32_t max = 50;
	const struct cli_arg args[] = { { CLI_ARG_KEY_U32, "max", &max, 1, UINT32_MAX },
					{ CLI_ARG_FLAG, "json", &json, 0, 0 } };
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : -ENODEV;
	if (rc)
		return rc;
	if (json) {
		cli_json_print(s, trace_json(g, max));
		return 0;
	}
	char *text = trace_text(g, max);
	if (!text)
		return cli_fail(s, -ENOMEM, "out of memory");
	cli_printf(s, "%s", text);
	free(text);
	return 0;
}

/* Every traced packet's records as pcapng, one block per node visit, under
 * the barrier (records are the datapath's). Returns the records written or
 * a negative errno; f is closed in every case. */
static int trace_save_pcapng(struct graph *g, FILE *f)
{
	struct pcapng_file p;
	int rc = graph_pcapng_open(g, &p, f, TRACE_SNAPLEN), n = 0;
	graph_barrier_sync(g);
	for (uint32_t i = 0; !rc && i < graph_trace_n_packets(g); i++) {
		const struct trace_record *r;
		uint32_t k, nr = graph_trace_packet(g, i, &r, NULL);
		for (k = 0; !rc && k < nr; k++, n++) {
			char detail[512];
			const uint8_t *data;
			const struct graph_pcap_rec *h = graph_trace_packet_bytes(g, i, k, &data);
			graph_trace_format(g, &r[k], detail, sizeof(detail));
			rc = graph_pcapng_write(g, &p, h, data, detail);
		}
	}
	graph_barrier_release(g);
	int rc2 = pcapng_close(&p);
	return rc ? rc : rc2 ? rc2 : n;
}

/* As JSON: what `show trace json` prints. Returns the packets written or a
 * negative errno; f is closed in every case. */
static int trace_save_json(struct graph *g, FILE *f)
{
	cJSON *root = trace_json(g, UINT32_MAX);
	int n = cJSON_GetArraySize(cJSON_GetObjectItem(root, "packets"));
	char *text = cJSON_Print(root);
	cJSON_Delete(root);
	bool ok = text && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
	free(text);
	int rc = fclose(f) == 0 && ok ? 0 : -(errno ? errno : EIO);
	return rc ? rc : n;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/*
 * sluice> trace save /tmp/trace.json
 * saved 5 packets to /tmp/trace.json
 * sluice> trace save /tmp/trace.pcapng
 * saved 30 records to /tmp/trace.pcapng
 *
 * JSON holds what `show trace json` prints, for every traced packet.
 * pcapng (the file ends in .pcapng, or `format pcapng`) holds one packet
 * block per trace record, for Wireshark: the bytes as that node received
 * them (the first TRACE_SNAPLEN), the node as the block's interface, and
 * node, thread, trace id (show trace's packet number), buffer flags, the
 * drop's error and the node's trace detail in the packet comment. With
 * cli-file-dir set, FILE must lie under it.
 */
static int trace_save(struct cli_session *s, int argc, char **argv)
{
	const char *arg = NULL, *format = NULL;
	char path[PATH_MAX];
	const struct cli_arg args[] = { { CLI_ARG_WORD, "FILE", &arg, 0, 0 } };
	struct graph *g = need_graph(s);
	if (argc == 3 && !strcmp(argv[1], "format")) {
		format = argv[2];
		argc = 1;
	}
	int rc = g ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : -ENODEV;
	if (rc)
		return rc;
	if (format && strcmp(format, "pcapng") && strcmp(format, "json"))
		return cli_fail(s, -EINVAL, "format: expected pcapng or json, found '%s'", format);
	bool pcapng = format ? !strcmp(format, "pcapng") : ends_with(arg, ".pcapng");
	/* Checked and opened in one step (cli-file-dir), then truncated. */
	FILE *f;
	rc = cli_file_fopen(s, arg, path, sizeof(path), &f);
	if (rc)
		return rc;
	rc = pcapng ? trace_save_pcapng(g, f) : trace_save_json(g, f);
	if (rc < 0)
		return cli_fail(s, rc, "cannot write %s: %s", path, strerror(-rc));
	cli_printf(s, "saved %d %s to %s", rc, pcapng ? "records" : "packets", path);
	return 0;
}

/*
 * sluice> clear trace
 * trace cleared
 */
static int clear_trace(struct cli_session *s, int argc, char **argv)
{
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, NULL, 0) : -ENODEV;
	if (rc)
		return rc;
	graph_barrier_sync(g);
	graph_trace_clear(g);
	graph_barrier_release(g);
	cli_printf(s, "trace cleared");
	return 0;
}

CLI_COMMAND(trace_add_cmd, "trace add", "trace add NODE N [filter EXPR]",
	    "Trace the next N packets of input node NODE (that match tcpdump expression EXPR)", trace_add)
CLI_COMMAND(show_trace_cmd, "show trace", "show trace [max N] [json]", "Traced packets, node by node", show_trace)
CLI_COMMAND(trace_save_cmd, "trace save", "trace save FILE [format pcapng|json]",
	    "Write the trace to FILE: JSON, or pcapng for Wireshark (FILE.pcapng or format pcapng)", trace_save)
CLI_COMMAND(clear_trace_cmd, "clear trace", "clear trace", "Forget traced packets and stop tracing", clear_trace)
