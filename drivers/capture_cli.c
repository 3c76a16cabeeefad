/* `pcap capture`: copy what interfaces receive, send or drop into a pcap
 * file (drivers/capture.h does the copying on the datapath; the
 * pcap-capture process node writes the file). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	return 0;
}

/*
 * sluice> pcap capture rx interface a max 10 file /tmp/a.pcap
 * pcap capture rx on a: up to 10 packet(s) to /tmp/a.pcap
 * sluice> pcap capture status
 * pcap capture: done, 10 of 10 captured, 10 written to /tmp/a.pcap
 * sluice> pcap capture off
 * pcap capture off: 10 packet(s) written to /tmp/a.pcap
 *
 * rx, tx (and drop, once error-drop has a tap) may be combined; without
 * `interface` every interface is captured; max-bytes-per-pkt (default 2048)
 * bounds the bytes kept of each packet. The file is complete once max
 * packets are written (the pcap-capture node does it as they come) or at
 * `pcap capture off`.
 */
static int pcap_capture(struct cli_session *s, int argc, char **argv)
{
	if (argc == 1 && !strcmp(argv[0], "off"))
		return capture_off(s);
	if (argc == 1 && !strcmp(argv[0], "status"))
		return capture_status(s);
	struct dev_capture_params p = { .if_index = DEV_INDEX_INVALID };
	const char *ifname = NULL;
	for (int i = 0; i < argc; i++) {
		const char *w = argv[i];
		if (!strcmp(w, "rx")) {
			p.what |= DEV_CAPTURE_RX;
			continue;
		}
		if (!strcmp(w, "tx")) {
			p.what |= DEV_CAPTURE_TX;
			continue;
		}
		if (!strcmp(w, "drop")) {
			p.what |= DEV_CAPTURE_DROP;
			continue;
		}
		if (i + 1 >= argc)
			return cli_fail(s, -EINVAL, "'%s' needs a value", w);
		const char *v = argv[++i];
		char *end;
		if (!strcmp(w, "interface")) {
			ifname = v;
		} else if (!strcmp(w, "file")) {
			p.path = v;
		} else if (!strcmp(w, "max") || !strcmp(w, "max-bytes-per-pkt")) {
			unsigned long x = strtoul(v, &end, 10);
			if (*end || !*v || x == 0 || x > UINT32_MAX)
				return cli_fail(s, -EINVAL, "%s: expected a positive number, found '%s'", w, v);
			if (!strcmp(w, "max"))
				p.max = (uint32_t)x;
			else
				p.snaplen = (uint32_t)x;
		} else {
			return cli_fail(s, -EINVAL, "unexpected '%s'", w);
		}
	}
	if (!p.what)
		return cli_fail(s, -EINVAL, "expected rx, tx and/or drop (or off, status)");
	if (!p.max || !p.path)
		return cli_fail(s, -EINVAL, "max N and file FILE are required");
	if (ifname && strcmp(ifname, "any")) {
		struct device *d = dev_cli_need(s, ifname);
		if (!d)
			return -EINVAL;
		p.if_index = d->index;
	}
	/* Checked and opened in one step (cli-file-dir); the capture takes it. */
	char path[PATH_MAX];
	int fd = cli_file_open(s, p.path, path, sizeof(path));
	if (fd < 0)
		return fd;
	p.path = path;
	p.file = fdopen(fd, "wb");
	if (!p.file) {
		close(fd);
		return cli_fail(s, -ENOMEM, "out of memory");
	}
	char err[320];
	graph_cli_barrier_sync(s);
	int rc = dev_capture_start(&p, err, sizeof(err));
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "pcap capture: %s", err);
	capture_writer(s, true);
	cli_printf(s, "pcap capture%s%s%s on %s: up to %u packet(s) to %s", p.what & DEV_CAPTURE_RX ? " rx" : "",
		   p.what & DEV_CAPTURE_TX ? " tx" : "", p.what & DEV_CAPTURE_DROP ? " drop" : "",
		   ifname ? ifname : "any", p.max, p.path);
	return 0;
}

CLI_COMMAND(pcap_capture_cmd, "pcap capture",
	    "pcap capture rx|tx|drop [interface NAME|any] max N file FILE [max-bytes-per-pkt N] | off | status",
	    "Copy packets an interface receives or sends into a pcap file", pcap_capture)
