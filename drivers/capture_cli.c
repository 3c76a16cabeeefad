/* `pcap capture`: copy what interfaces receive, send or drop into a pcap
 * file (drivers/capture.h does the copying on the datapath; the
 * pcap-capture process node writes the file). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include "cli/cli.h"
#include "drivers/capture.h"
#include "drivers/device.h"
#include "drivers/drivers_cli.h"
#include "graph/graph_cli.h"

/* The process node that writes captured packets: on while a capture runs. */
static void capture_writer(struct cli_session *s, bool on)
{
	struct graph *g = cli_graph(s);
	int node = g ? graph_node_index(g, "pcap-capture") : -1;
	if (node >= 0)
		graph_node_set_state(g, 0, (uint32_t)node, on ? NODE_STATE_POLLING : NODE_STATE_DISABLED);
	/* Drops are seen in error-drop; the tap does nothing unless drop is armed. */
	if (g)
		graph_set_drop_tap(g, on ? dev_capture_drop_tap : NULL, NULL);
}

static int capture_off(struct cli_session *s)
{
	uint64_t n = 0;
	char path[256];
	graph_cli_barrier_sync(s);
	int rc = dev_capture_stop(&n, path, sizeof(path));
	graph_cli_barrier_release(s);
	capture_writer(s, false);
	if (rc)
		return cli_fail(s, rc, "no pcap capture to stop");
	cli_printf(s, "pcap capture off: %llu packet(s) written to %s", (unsigned long long)n, path);
	return 0;
}

static int capture_status(struct cli_session *s)
{
	struct dev_capture_status st;
	dev_capture_get_status(&st);
	if (!st.max) {
		cli_printf(s, "pcap capture: off");
		return 0;
	}
	cli_printf(s, "pcap capture: %s, %llu of %u captured, %llu written to %s",
		   st.what ? "capturing" : st.open ? "writing" : "done", (unsigned long long)st.captured, st.max,
		   (unsigned long long)st.written, st.path);
	if (st.filter[0])
		cli_printf(s, "  filter: %s", st.filter);
	if (st.drop_node[0])
		cli_printf(s, "  drops of node %s, reason: %s", st.drop_node,
			   st.drop_reason[0] ? st.drop_reason : "any");
	return 0;
}

/* The words of one `pcap capture` line, before they are checked. */
struct capture_words {
	const char *ifname, *filter, *node, *reason;
};

static int capture_parse(struct cli_session *s, int argc, char **argv, struct dev_capture_params *p,
			 struct capture_words *w)
{
	for (int i = 0; i < argc; i++) {
		const char *k = argv[i];
		uint32_t bit = !strcmp(k, "rx") ? DEV_CAPTURE_RX : !strcmp(k, "tx") ? DEV_CAPTURE_TX
				 : !strcmp(k, "drop")				    ? DEV_CAPTURE_DROP
										    : 0;
		if (bit) {
			p->what |= bit;
			continue;
		}
		if (i + 1 >= argc)
			return cli_fail(s, -EINVAL, "'%s' needs a value", k);
		const char *v = argv[++i];
		char *end;
		if (!strcmp(k, "interface")) {
			w->ifname = v;
		} else if (!strcmp(k, "file")) {
			p->path = v;
		} else if (!strcmp(k, "filter")) {
			w->filter = v;
		} else if (!strcmp(k, "node")) {
			w->node = v;
		} else if (!strcmp(k, "reason")) {
			w->reason = v;
		} else if (!strcmp(k, "max") || !strcmp(k, "max-bytes-per-pkt")) {
			unsigned long x = strtoul(v, &end, 10);
			if (*end || !*v || x == 0 || x > UINT32_MAX)
				return cli_fail(s, -EINVAL, "%s: expected a positive number, found '%s'", k, v);
			if (!strcmp(k, "max"))
				p->max = (uint32_t)x;
			else
				p->snaplen = (uint32_t)x;
		} else {
			return cli_fail(s, -EINVAL, "unexpected '%s'", k);
		}
	}
	if (!p->what)
		return cli_fail(s, -EINVAL, "expected rx, tx and/or drop (or off, status)");
	if (!p->max || !p->path)
		return cli_fail(s, -EINVAL, "max N and file FILE are required");
	return 0;
}

/* `node NODE [reason TEXT]`: the global error indices error-drop counts
 * them under (a node's errors are consecutive; the reason is compared
 * without case). Refusals print an error and change nothing. */
static int capture_drop_errors(struct cli_session *s, struct dev_capture_params *p, const struct capture_words *w)
{
	if (!w->node && !w->reason)
		return 0;
	struct graph *g = cli_graph(s);
	if (!(p->what & DEV_CAPTURE_DROP) || !w->node || !g)
		return cli_fail(s, -EINVAL, "node NODE [reason TEXT] select drops: pcap capture drop node NODE ...");
	int ni = graph_node_index(g, w->node);
	if (ni < 0)
		return cli_fail(s, -ENOENT, "no node named '%s'", w->node);
	for (uint32_t e = 0; e < graph_n_errors(g); e++) {
		uint32_t node;
		const char *reason;
		if (graph_error_info(g, e, &node, &reason) || node != (uint32_t)ni)
			continue;
		if (w->reason && strcasecmp(reason, w->reason))
			continue;
		if (!p->drop_error_count)
			p->drop_error_first = e;
		p->drop_error_count = e + 1 - p->drop_error_first;
		p->drop_reason = w->reason ? reason : NULL;
		if (w->reason)
			break;
	}
	if (!p->drop_error_count)
		return cli_fail(s, -ENOENT, "node %s has no error %s%s%s", w->node, w->reason ? "'" : "",
				w->reason ? w->reason : "at all", w->reason ? "'" : "");
	p->drop_node = graph_node_reg(g, (uint32_t)ni)->name;
	return 0;
}

/* Check every word, then compile the filter: nothing is opened before. */
static int capture_prepare(struct cli_session *s, int argc, char **argv, struct dev_capture_params *p,
			   struct capture_words *w)
{
	int rc = capture_parse(s, argc, argv, p, w);
	if (!rc && w->ifname && strcmp(w->ifname, "any")) {
		struct device *d = dev_cli_need(s, w->ifname);
		if (!d)
			return -EINVAL;
		p->if_index = d->index;
	}
	if (!rc)
		rc = capture_drop_errors(s, p, w);
	if (rc || !w->filter)
		return rc;
	char err[PCAP_ERRBUF_SIZE + 64];
	p->filter = pkt_filter_compile(w->filter, err, sizeof(err));
	return p->filter ? 0 : cli_fail(s, -EBADMSG, "%s", err); /* well spelt: no usage */
}

/*
 * sluice> pcap capture rx interface a max 10 file /tmp/a.pcap
 * pcap capture rx on a: up to 10 packet(s) to /tmp/a.pcap
 * sluice> pcap capture status
 * pcap capture: done, 10 of 10 captured, 10 written to /tmp/a.pcap
 * sluice> pcap capture off
 * pcap capture off: 10 packet(s) written to /tmp/a.pcap
 * sluice> pcap capture rx max 100 file /tmp/dns.pcap filter "udp port 53"
 * sluice> pcap capture drop node ip4-rewrite reason "TTL expired: ICMP time-exceeded sent" max 10 file /tmp/ttl.pcap
 *
 * rx, tx and drop may be combined; without `interface` every interface is
 * captured; max-bytes-per-pkt (default 2048) bounds the bytes kept of each
 * packet. `filter EXPR` (a tcpdump expression, quoted) keeps only what it
 * accepts, compiled and run by libpcap; `node NODE` keeps only drops of
 * that node's errors, `reason TEXT` only that error (as `show errors` spells
 * it). The file is complete once max packets are written (the pcap-capture
 * node does it as they come) or at `pcap capture off`.
 */
static int pcap_capture(struct cli_session *s, int argc, char **argv)
{
	if (argc == 1 && !strcmp(argv[0], "off"))
		return capture_off(s);
	if (argc == 1 && !strcmp(argv[0], "status"))
		return capture_status(s);
	struct dev_capture_params p = { .if_index = DEV_INDEX_INVALID };
	struct capture_words w = { 0 };
	int rc = capture_prepare(s, argc, argv, &p, &w);
	if (rc) {
		pkt_filter_free(p.filter);
		return rc;
	}
	/* Checked and opened in one step (cli-file-dir); the capture takes it. */
	char path[PATH_MAX];
	int fd = cli_file_open(s, p.path, path, sizeof(path));
	p.path = path;
	p.file = fd < 0 ? NULL : fdopen(fd, "wb");
	if (!p.file) {
		pkt_filter_free(p.filter);
		if (fd >= 0)
			close(fd);
		return fd < 0 ? fd : cli_fail(s, -ENOMEM, "out of memory");
	}
	char err[320];
	graph_cli_barrier_sync(s);
	rc = dev_capture_start(&p, err, sizeof(err));
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "pcap capture: %s", err);
	capture_writer(s, true);
	cli_printf(s, "pcap capture%s%s%s on %s: up to %u packet(s) to %s", p.what & DEV_CAPTURE_RX ? " rx" : "",
		   p.what & DEV_CAPTURE_TX ? " tx" : "", p.what & DEV_CAPTURE_DROP ? " drop" : "",
		   w.ifname ? w.ifname : "any", p.max, p.path);
	return 0;
}

CLI_COMMAND(pcap_capture_cmd, "pcap capture",
	    "pcap capture rx|tx|drop [interface NAME|any] max N file FILE [max-bytes-per-pkt N] [filter EXPR] "
	    "[node NODE [reason TEXT]] | off | status",
	    "Copy packets an interface receives, sends or drops into a pcap file", pcap_capture)
/* VPP's name (docs/vpp-cli.md); its `intfc` is our `interface`. */
CLI_ALIAS(pcap_trace_alias, "pcap trace",
	  "pcap trace rx|tx|drop [intfc NAME|any] max N file FILE [max-bytes-per-pkt N] [filter EXPR] | off | status",
	  "pcap capture", "intfc=interface")
