/* `pcap dispatch trace on|off|status` and `show pcap dispatch trace`: the
 * dispatch trace (graph.h) from the CLI, VPP's spelling. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/graph.h"
#include "graph/graph_cli.h"
#include "graph/pkt_filter.h"

/* The words of an `on` line, before they are checked. */
struct dtrace_words {
	const char *file, *node, *bt_node, *filter;
	uint32_t max, snaplen, bt_count;
};

static int dtrace_number(struct cli_session *s, const char *k, const char *v, uint32_t *out)
{
	char *end;
	unsigned long x = strtoul(v, &end, 10);
	if (*end || !*v || x == 0 || x > UINT32_MAX)
		return cli_fail(s, -EINVAL, "%s: expected a positive number, found '%s'", k, v);
	*out = (uint32_t)x;
	return 0;
}

static int dtrace_parse(struct cli_session *s, int argc, char **argv, struct dtrace_words *w)
{
	for (int i = 0; i < argc; i++) {
		const char *k = argv[i];
		int need = !strcmp(k, "buffer-trace") ? 2 : 1;
		if (i + need >= argc)
			return cli_fail(s, -EINVAL, "'%s' needs %s", k, need == 2 ? "NODE COUNT" : "a value");
		const char *v = argv[++i];
		int rc = 0;
		if (!strcmp(k, "file"))
			w->file = v;
		else if (!strcmp(k, "node"))
			w->node = v;
		else if (!strcmp(k, "filter"))
			w->filter = v;
		else if (!strcmp(k, "max"))
			rc = dtrace_number(s, k, v, &w->max);
		else if (!strcmp(k, "max-bytes-per-pkt"))
			rc = dtrace_number(s, k, v, &w->snaplen);
		else if (!strcmp(k, "buffer-trace")) {
			w->bt_node = v;
			rc = dtrace_number(s, k, argv[++i], &w->bt_count);
		} else
			return cli_fail(s, -EINVAL, "unexpected '%s'", k);
		if (rc)
			return rc;
	}
	if (!w->max || !w->file)
		return cli_fail(s, -EINVAL, "max N and file FILE are required");
	return 0;
}

/* Check every word and compile the filter; nothing is opened before. */
static int dtrace_prepare(struct cli_session *s, struct graph *g, const struct dtrace_words *w,
			  struct graph_dtrace_params *p)
{
	p->max = w->max;
	p->snaplen = w->snaplen;
	p->mark_node = w->node ? graph_node_index(g, w->node) : -1;
	if (w->node && p->mark_node < 0)
		return cli_fail(s, -ENOENT, "no node named '%s'", w->node);
	if (w->max > GRAPH_DTRACE_MAX || w->snaplen > 65535)
		return cli_fail(s, -EINVAL, "max up to %u, max-bytes-per-pkt up to 65535", GRAPH_DTRACE_MAX);
	int bt = w->bt_node ? graph_node_index(g, w->bt_node) : 0;
	if (bt < 0 || (w->bt_node && graph_node_reg(g, (uint32_t)bt)->type != NODE_TYPE_INPUT))
		return cli_fail(s, -EINVAL, "buffer-trace: '%s' is not an input node", w->bt_node);
	if (!w->filter)
		return 0;
	char err[512];
	p->filter = pkt_filter_compile(w->filter, err, sizeof(err));
	return p->filter ? 0 : cli_fail(s, -EBADMSG, "%s", err);
}

static int dtrace_on(struct cli_session *s, struct graph *g, int argc, char **argv)
{
	struct dtrace_words w = { 0 };
	struct graph_dtrace_params p = { 0 };
	int rc = dtrace_parse(s, argc, argv, &w);
	if (!rc)
		rc = dtrace_prepare(s, g, &w, &p);
	if (rc) {
		pkt_filter_free(p.filter);
		return rc;
	}
	char path[PATH_MAX], err[512];
	rc = cli_file_fopen(s, w.file, path, sizeof(path), &p.file);
	if (rc) {
		pkt_filter_free(p.filter);
		return rc;
	}
	p.path = path;
	/* The packet trace first: its packets' trace ids are their trace numbers. */
	if (w.bt_node && (rc = graph_trace_add(g, w.bt_node, w.bt_count, err, sizeof(err)))) {
		pkt_filter_free(p.filter);
		fclose(p.file);
		return cli_fail(s, rc, "%s", err);
	}
	rc = graph_dtrace_start(g, &p, err, sizeof(err));
	if (rc)
		return cli_fail(s, rc, "pcap dispatch trace: %s", err);
	cli_printf(s, "pcap dispatch trace on: up to %u record(s) to %s%s%s", w.max, path, w.node ? " from node " : "",
		   w.node ? w.node : "");
	return 0;
}

static int dtrace_off(struct cli_session *s, struct graph *g)
{
	if (graph_dtrace_stop(g))
		return cli_fail(s, -ENOENT, "no pcap dispatch trace to stop");
	struct graph_dtrace_status st;
	graph_dtrace_status(g, &st);
	cli_printf(s, "pcap dispatch trace off: %llu record(s) written to %s, %llu dropped", (unsigned long long)st.written,
		   st.path, (unsigned long long)st.dropped);
	if (st.error)
		cli_printf(s, "  write error: %s", strerror(st.error));
	return 0;
}

static cJSON *dtrace_json(const struct graph_dtrace_status *st)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "on", st->on);
	cJSON_AddBoolToObject(o, "recording", st->armed);
	cJSON_AddNumberToObject(o, "max", st->max);
	cJSON_AddNumberToObject(o, "max_bytes_per_pkt", st->snaplen);
	cJSON_AddNumberToObject(o, "records", (double)st->claimed);
	cJSON_AddNumberToObject(o, "written", (double)st->written);
	cJSON_AddNumberToObject(o, "dropped", (double)st->dropped);
	cJSON_AddStringToObject(o, "file", st->path);
	cJSON_AddStringToObject(o, "node", st->node);
	cJSON_AddStringToObject(o, "filter", st->filter);
	cJSON_AddStringToObject(o, "error", st->error ? strerror(st->error) : "");
	return o;
}

static int dtrace_status(struct cli_session *s, struct graph *g, bool json)
{
	struct graph_dtrace_status st;
	graph_dtrace_status(g, &st);
	if (json) {
		cli_json_print(s, dtrace_json(&st));
		return 0;
	}
	if (!st.max) {
		cli_printf(s, "pcap dispatch trace: off");
		return 0;
	}
	cli_printf(s, "pcap dispatch trace: %s, %llu of %u records, %llu written to %s, %llu dropped",
		   st.armed ? "recording" : st.on ? "done (max reached)" : "off", (unsigned long long)st.claimed,
		   st.max, (unsigned long long)st.written, st.path, (unsigned long long)st.dropped);
	if (st.node[0] || st.filter[0])
		cli_printf(s, "  from node %s, filter: %s", st.node[0] ? st.node : "any",
			   st.filter[0] ? st.filter : "none");
	return 0;
}

/*
 * sluice> pcap dispatch trace on max 2000 file /tmp/dt.pcapng
 * pcap dispatch trace on: up to 2000 record(s) to /tmp/dt.pcapng
 * sluice> pcap dispatch trace status
 * pcap dispatch trace: recording, 36 of 2000 records, 36 written to /tmp/dt.pcapng, 0 dropped
 * sluice> pcap dispatch trace off
 * pcap dispatch trace off: 36 record(s) written to /tmp/dt.pcapng, 0 dropped
 *
 * While on, every node records the packets it receives, as it receives
 * them (max-bytes-per-pkt, default 512, of each), and input nodes what they
 * produce; `tshark -r FILE -T fields -e frame.interface_name -e
 * frame.comment` shows each packet's path. `node NODE` records packets only
 * from NODE on; `filter EXPR` (a quoted tcpdump expression) only those it
 * accepts where they are first seen; `buffer-trace NODE COUNT` also runs
 * `trace add NODE COUNT`, and those packets' trace ids are their `show
 * trace` numbers. It stops on its own after max records; `off` closes the
 * file. Records a slow writer has no room for are dropped and counted.
 */
static int pcap_dispatch_trace(struct cli_session *s, int argc, char **argv)
{
	struct graph *g = need_graph(s);
	if (!g)
		return -ENODEV;
	if (argc == 1 && !strcmp(argv[0], "off"))
		return dtrace_off(s, g);
	if (argc >= 1 && !strcmp(argv[0], "status"))
		return argc == 1 || (argc == 2 && !strcmp(argv[1], "json"))
			       ? dtrace_status(s, g, argc == 2)
			       : cli_fail(s, -EINVAL, "status takes json only");
	if (argc >= 1 && !strcmp(argv[0], "on"))
		return dtrace_on(s, g, argc - 1, argv + 1);
	return cli_fail(s, -EINVAL, "expected on, off or status");
}

/* The same status as `pcap dispatch trace status`, as a show command. */
static int show_dtrace(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	const struct cli_arg args[] = { { CLI_ARG_FLAG, "json", &json, 0, 0 } };
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : -ENODEV;
	return rc ? rc : dtrace_status(s, g, json);
}

CLI_COMMAND(pcap_dispatch_trace_cmd, "pcap dispatch trace",
	    "pcap dispatch trace on max N file FILE [node NODE] [buffer-trace NODE COUNT] [max-bytes-per-pkt N] "
	    "[filter EXPR] | off | status [json]",
	    "Record every node's input packets into a pcapng file (Wireshark shows node, thread, trace id)",
	    pcap_dispatch_trace)
CLI_COMMAND(show_dtrace_cmd, "show pcap dispatch trace", "show pcap dispatch trace [json]",
	    "Dispatch trace state: records, written, dropped, file", show_dtrace)
