/* The interface layer's CLI commands, VPP spelling: create and delete
 * interfaces, admin state, L2 cross-connect and L3 mode, counters, hardware
 * details, rx-queue placement, and pcap capture of what interfaces receive
 * and send.
 *
 * Every command checks all of its words before it changes anything, so a
 * bad command prints usage and leaves the interfaces as they were. Changes
 * run under the graph barrier (the datapath reads the interface table, the
 * poll lists and the modes without locks); reads take no lock, counters
 * being tear-free.
 *
 * Built as its own library (sluice_drivers_cli) that the daemon links whole,
 * so that drivers/ does not depend on cli/.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "drivers/capture.h"
#include "drivers/device.h"
#include "graph/graph_cli.h"

#define CREATE_MAX_WORDS 32 /* driver `key value` words after the driver's name */

/* Park the datapath when a graph runs (commands also run from exec files
 * and tests before or without one). */
static struct device *need_dev(struct cli_session *s, const char *name)
{
	struct device *d = dev_by_name(name);
	if (!d)
		cli_fail(s, -EINVAL, "no interface %s", name);
	return d;
}

static const char *mode_name(const struct device *d)
{
	return d->mode == DEV_MODE_L2_XCONNECT ? "l2-xconnect" : "l3";
}

static const char *peer_name(const struct device *d)
{
	const struct device *p = d->mode == DEV_MODE_L2_XCONNECT ? dev_by_index(d->xconnect_peer) : NULL;
	return p ? p->name : "-";
}

/* The thread that polls the fewest rx queues among the graph's workers
 * (thread 0 when there are none), for a queue made at run time. */
static uint32_t least_loaded_thread(struct cli_session *s)
{
	struct graph *g = cli_graph(s);
	uint32_t n_threads = g ? graph_n_threads(g) : 1;
	if (n_threads > DEV_MAX_THREADS)
		n_threads = DEV_MAX_THREADS;
	if (n_threads <= 1)
		return 0;
	uint32_t best = 1;
	for (uint32_t t = 2; t < n_threads; t++)
		if (dev_table.n_poll[t] < dev_table.n_poll[best])
			best = t;
	return best;
}

/* The value of every key the driver writes to (CONF_F_FILE_OUT: pcap's
 * tx-file) is held to cli-file-dir and replaced in words (a copy: libcli
 * owns argv) by the path to open, kept in paths. */
static int check_output_files(struct cli_session *s, const char *driver, int n, const char **words,
			      char (*paths)[PATH_MAX])
{
	const struct conf_driver *drv = conf_driver_find(driver);
	for (int i = 0; drv && i + 1 < n; i++) {
		const struct conf_key *k = conf_key_find(drv->keys, words[i]);
		if (!k || k->type == CONF_FLAG)
			continue;
		i++; /* the value */
		if (!(k->flags & CONF_F_FILE_OUT))
			continue;
		int rc = cli_file_path(s, words[i], paths[i], PATH_MAX);
		if (rc)
			return rc;
		words[i] = paths[i];
	}
	return 0;
}

/*
 * sluice> create interface nul1 driver null rx-queues 2
 * nul1 (index 2) created, admin down
 * sluice> create interface cap0 driver pcap rx-file in.pcap tx-file out.pcap
 * cap0 (index 3) created, admin down
 *
 * A tx-file must lie under cli-file-dir when that is set.
 */
static int create_interface(struct cli_session *s, int argc, char **argv)
{
	if (argc < 3 || strcmp(argv[1], "driver") != 0)
		return cli_fail(s, -EINVAL, "expected NAME driver DRIVER");
	if (argc - 3 > CREATE_MAX_WORDS)
		return cli_fail(s, -EINVAL, "too many words");
	const char *words[CREATE_MAX_WORDS];
	memcpy(words, argv + 3, (size_t)(argc - 3) * sizeof(*words));
	char(*paths)[PATH_MAX] = calloc(CREATE_MAX_WORDS, PATH_MAX);
	int rc = paths ? check_output_files(s, argv[2], argc - 3, words, paths) : -ENOMEM;
	if (rc == -ENOMEM)
		cli_fail(s, rc, "out of memory");
	if (rc) {
		free(paths);
		return rc;
	}
	char err[CONF_MSG_SIZE * 2];
	graph_cli_barrier_sync(s);
	struct device *d = dev_create(argv[0], argv[2], words, (uint32_t)(argc - 3), err, sizeof(err));
	free(paths);
	if (d) {
		uint32_t t = least_loaded_thread(s);
		for (uint16_t q = 0; q < d->n_rx_queues && rc == 0; q++) {
			rc = dev_set_rx_placement(d, q, t);
			t = least_loaded_thread(s);
		}
		if (rc) {
			dev_delete(d);
			d = NULL;
			snprintf(err, sizeof(err), "cannot place its rx queues: %s", strerror(-rc));
		}
	}
	graph_cli_barrier_release(s);
	if (!d)
		return cli_fail(s, -EINVAL, "%s", err);
	cli_printf(s, "%s (index %u) created, admin down", d->name, d->index);
	return 0;
}

/*
 * sluice> delete interface nul1
 * nul1 deleted
 */
static int delete_interface(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "NAME", &name, 0, 0 } };
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	struct device *d = rc ? NULL : need_dev(s, name);
	if (!d)
		return -EINVAL;
	char copy[DEV_NAME_SIZE];
	snprintf(copy, sizeof(copy), "%s", d->name);
	graph_cli_barrier_sync(s);
	dev_delete(d);
	graph_cli_barrier_release(s);
	cli_printf(s, "%s deleted", copy);
	return 0;
}

/* ---- show interface ---- */

static const char *const counter_names[] = {
	"RX-packets", "RX-bytes", "RX-dropped", "RX-errors", "TX-packets", "TX-bytes", "TX-dropped",
};

static void counter_values(const struct dev_counters *c, uint64_t v[7])
{
	v[0] = c->rx_packets;
	v[1] = c->rx_bytes;
	v[2] = c->rx_dropped;
	v[3] = c->rx_errors;
	v[4] = c->tx_packets;
	v[5] = c->tx_bytes;
	v[6] = c->tx_dropped;
}

/* Counters first..last-1 of counter_names (a queue has only its rx or its
 * tx half). */
static cJSON *counters_json(const struct dev_counters *c, size_t first, size_t last)
{
	uint64_t v[7];
	counter_values(c, v);
	cJSON *o = cJSON_CreateObject();
	for (size_t i = first; i < last; i++)
		cJSON_AddNumberToObject(o, counter_names[i], (double)v[i]);
	return o;
}

static cJSON *interface_json(struct device *d)
{
	struct dev_counters c;
	struct dev_link link;
	dev_counters_get(d, &c);
	dev_link_get(d, &link);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", d->name);
	cJSON_AddNumberToObject(o, "index", d->index);
	cJSON_AddStringToObject(o, "driver", d->driver ? d->driver->name : "");
	cJSON_AddStringToObject(o, "state", d->admin_up ? "up" : "down");
	cJSON_AddStringToObject(o, "link", link.up ? "up" : "down");
	cJSON_AddStringToObject(o, "mode", mode_name(d));
	if (d->mode == DEV_MODE_L2_XCONNECT)
		cJSON_AddStringToObject(o, "xconnect", peer_name(d));
	else
		cJSON_AddNullToObject(o, "xconnect");
	cJSON_AddNumberToObject(o, "mtu", d->mtu);
	cJSON_AddNumberToObject(o, "rx-burst", d->rx_burst);
	cJSON_AddItemToObject(o, "counters", counters_json(&c, 0, 7));
	cJSON *rxq = cJSON_AddArrayToObject(o, "rx-queues");
	for (uint16_t q = 0; q < d->n_rx_queues; q++) {
		dev_rx_queue_counters(d, q, &c);
		cJSON *e = counters_json(&c, 0, 4);
		cJSON_AddNumberToObject(e, "queue", q);
		cJSON_AddNumberToObject(e, "thread", d->rxq[q].thread_index);
		cJSON_AddItemToArray(rxq, e);
	}
	cJSON *txq = cJSON_AddArrayToObject(o, "tx-queues");
	for (uint16_t q = 0; q < d->n_tx_queues; q++) {
		dev_tx_queue_counters(d, q, &c);
		cJSON *e = counters_json(&c, 4, 7);
		cJSON_AddNumberToObject(e, "queue", q);
		cJSON_AddItemToArray(txq, e);
	}
	return o;
}

/* "up", "down" (admin), or "no-link": admin up, and the driver says its
 * link is gone (an af-packet host-if deleted under it). */
static const char *state_name(struct device *d)
{
	if (!d->admin_up)
		return "down";
	struct dev_link l;
	dev_link_get(d, &l);
	return l.up ? "up" : "no-link";
}

static void interface_row(struct cli_table *t, struct device *d)
{
	struct dev_counters c;
	uint64_t v[7];
	dev_counters_get(d, &c);
	counter_values(&c, v);
	cli_table_cell(t, "%s", d->name);
	cli_table_cell(t, "%u", d->index);
	cli_table_cell(t, "%s", state_name(d));
	cli_table_cell(t, "%s", mode_name(d));
	cli_table_cell(t, "%s", peer_name(d));
	for (size_t i = 0; i < ARRAY_LEN(v); i++)
		cli_table_cell(t, "%llu", (unsigned long long)v[i]);
	cli_table_cell(t, "%u", d->rx_burst);
}

/* One interface's queues, under its row. */
static void queue_rows(struct cli_session *s, struct device *d)
{
	static const struct cli_table_col cols[] = {
		{ "Queue", false },	 { "Thread", true },   { "RX-packets", true }, { "RX-bytes", true },
		{ "RX-dropped", true }, { "RX-errors", true }, { "TX-packets", true }, { "TX-bytes", true },
		{ "TX-dropped", true },
	};
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	if (!t)
		return;
	struct dev_counters c;
	uint64_t v[7];
	for (uint16_t q = 0; q < d->n_rx_queues; q++) {
		dev_rx_queue_counters(d, q, &c);
		counter_values(&c, v);
		cli_table_cell(t, "rx %u", q);
		cli_table_cell(t, "%u", d->rxq[q].thread_index);
		for (size_t i = 0; i < ARRAY_LEN(v); i++)
			cli_table_cell(t, i < 4 ? "%llu" : "-", (unsigned long long)v[i]);
	}
	for (uint16_t q = 0; q < d->n_tx_queues; q++) {
		dev_tx_queue_counters(d, q, &c);
		counter_values(&c, v);
		cli_table_cell(t, "tx %u", q);
		cli_table_cell(t, "-");
		for (size_t i = 0; i < ARRAY_LEN(v); i++)
			cli_table_cell(t, i >= 4 ? "%llu" : "-", (unsigned long long)v[i]);
	}
	cli_table_print(s, t);
}

/*
 * sluice> show interface
 * Name  Idx  State  Mode         Peer  RX-packets  RX-bytes  RX-dropped  RX-errors  TX-packets  TX-bytes  TX-dropped  RX-burst
 * pg0     0  up     l2-xconnect  nul0           0         0           0          0           0         0           0       256
 * nul0    1  up     l3           -              0         0           0          0       20480   1310720           0       256
 *
 * State: up, down (admin), or no-link (admin up, link gone: an af-packet
 * host-if deleted; `set interface state NAME up` restarts it once it is back).
 * RX-burst: packets taken per poll of each rx queue (set interface rx-burst),
 * last so that the counters keep their columns.
 *
 * sluice> show interface nul0
 * (the row above, then one line per queue:)
 * Queue  Thread  RX-packets  RX-bytes  RX-dropped  RX-errors  TX-packets  TX-bytes  TX-dropped
 * rx 0        0           0         0           0          0           -         -           -
 * tx 0        -           -         -           -          -       20480   1310720           0
 *
 * sluice> show interface json
 * [{ "name": "nul0", "index": 1, "driver": "null", "state": "up", "link": "up", "mode": "l3",
 *    "xconnect": null, "mtu": 1500, "rx-burst": 256, "counters": { "RX-packets": 0, ..., "TX-dropped": 0 },
 *    "rx-queues": [{ ..., "queue": 0, "thread": 0 }], "tx-queues": [{ ..., "queue": 0 }] }]
 */
static int show_interface(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	bool json = false;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "json"))
			json = true;
		else if (!name)
			name = argv[i];
		else
			return cli_fail(s, -EINVAL, "unexpected '%s'", argv[i]);
	}
	struct device *one = name ? need_dev(s, name) : NULL;
	if (name && !one)
		return -EINVAL;
	struct device *d;
	if (json) {
		cJSON *arr = cJSON_CreateArray();
		DEV_FOREACH(d)
		if (!one || d == one)
			cJSON_AddItemToArray(arr, interface_json(d));
		cli_json_print(s, arr);
		return 0;
	}
	static const struct cli_table_col cols[] = {
		{ "Name", false },	{ "Idx", true },	{ "State", false },	{ "Mode", false },
		{ "Peer", false },	{ "RX-packets", true }, { "RX-bytes", true },	{ "RX-dropped", true },
		{ "RX-errors", true }, { "TX-packets", true }, { "TX-bytes", true },	{ "TX-dropped", true },
		{ "RX-burst", true },
	};
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	if (!t)
		return cli_fail(s, -ENOMEM, "out of memory");
	DEV_FOREACH(d)
	if (!one || d == one)
		interface_row(t, d);
	cli_table_print(s, t);
	if (one)
		queue_rows(s, one);
	return 0;
}

/* The driver's own lines, indented under the interface's. */
static void hw_lines(struct cli_session *s, struct device *d)
{
	char buf[4096];
	int n = d->ops->format_hw(d, buf, sizeof(buf));
	if (n <= 0)
		return;
	for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		cli_printf(s, "  %s", line);
	}
}

/*
 * sluice> show hardware nul0
 * nul0 (index 1): driver null, admin up, link up
 *   mtu 1500, 1 rx queue(s) of burst 256, 1 tx queue(s)
 *   rx queue 0 on thread 0
 *   rx recycle, 64-byte frames (no packet data written)
 * (a driver that knows its link adds ", 10000 Mb/s full duplex"; the last
 * lines are the driver's own, ops->format_hw: for ixgbe its registers)
 * sluice> show hardware xe0
 * ...
 *   xe0: ixgbe 0000:03:00.0 8086:10fb, mac 02:00:00:00:00:01
 *     link up 10000 Mb/s, promisc on, max frame 1518, running
 *     rx queue 0: RDH 17 RDT 16 next 17, drops 0
 *     tx queue 0: TDH 40 TDT 40 clean 32
 *     hw: GPRC 1000 GPTC 1000 GORC 64000 GOTC 64000 MPC 0 CRCERRS 0 RLEC 0 ROC 0
 */
static int show_hardware(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "NAME", &name, 0, 0 } };
	int rc = argc ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : 0;
	if (rc)
		return rc;
	struct device *one = name ? need_dev(s, name) : NULL;
	if (name && !one)
		return -EINVAL;
	struct device *d;
	DEV_FOREACH(d)
	{
		if (one && d != one)
			continue;
		struct dev_link link;
		dev_link_get(d, &link);
		char speed[48] = "";
		if (link.speed_mbps)
			snprintf(speed, sizeof(speed), ", %u Mb/s %s duplex", link.speed_mbps,
				 link.full_duplex ? "full" : "half");
		cli_printf(s, "%s (index %u): driver %s, admin %s, link %s%s", d->name, d->index,
			   d->driver ? d->driver->name : "?", d->admin_up ? "up" : "down", link.up ? "up" : "down",
			   speed);
		cli_printf(s, "  mtu %u, %u rx queue(s) of burst %u, %u tx queue(s)", d->mtu, d->n_rx_queues,
			   d->rx_burst, d->n_tx_queues);
		for (uint16_t q = 0; q < d->n_rx_queues; q++)
			cli_printf(s, "  rx queue %u on thread %u", q, d->rxq[q].thread_index);
		if (d->ops->format_hw)
			hw_lines(s, d);
	}
	return 0;
}

/*
 * sluice> show interface rx-placement
 * Thread  Interface  Queue  Node
 *      0  nul0           0  null-input
 *      0  cap0           0  pcap-input
 */
static int show_rx_placement(struct cli_session *s, int argc, char **argv)
{
	int rc = cli_args_parse(s, argc, argv, NULL, 0);
	if (rc)
		return rc;
	static const struct cli_table_col cols[] = {
		{ "Thread", true }, { "Interface", false }, { "Queue", true }, { "Node", false },
	};
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	if (!t)
		return cli_fail(s, -ENOMEM, "out of memory");
	for (uint32_t th = 0; th < DEV_MAX_THREADS; th++) {
		uint32_t n;
		const struct dev_poll *p = dev_poll_list(th, &n);
		for (uint32_t i = 0; i < n; i++) {
			cli_table_cell(t, "%u", th);
			cli_table_cell(t, "%s", p[i].dev->name);
			cli_table_cell(t, "%u", p[i].queue);
			cli_table_cell(t, "%s-input", p[i].dev->driver ? p[i].dev->driver->name : "?");
		}
	}
	cli_table_print(s, t);
	return 0;
}

/*
 * sluice> set interface state nul0 up
 * nul0 up
 */
static int set_interface_state(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL, *state = NULL;
	const struct cli_arg args[] = {
		{ CLI_ARG_WORD, "NAME", &name, 0, 0 },
		{ CLI_ARG_WORD, "up|down", &state, 0, 0 },
	};
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	struct device *d = need_dev(s, name);
	if (!d)
		return -EINVAL;
	if (strcmp(state, "up") && strcmp(state, "down"))
		return cli_fail(s, -EINVAL, "expected up or down, found '%s'", state);
	graph_cli_barrier_sync(s);
	rc = dev_set_admin_up(d, !strcmp(state, "up"));
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s: cannot bring it %s: %s", d->name, state, strerror(-rc));
	cli_printf(s, "%s %s", d->name, state);
	return 0;
}

/*
 * sluice> set interface l2 xconnect pg0 nul0
 * pg0 l2-xconnect -> nul0
 */
static int set_interface_xconnect(struct cli_session *s, int argc, char **argv)
{
	const char *a = NULL, *b = NULL;
	const struct cli_arg args[] = {
		{ CLI_ARG_WORD, "A", &a, 0, 0 },
		{ CLI_ARG_WORD, "B", &b, 0, 0 },
	};
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	struct device *da = need_dev(s, a);
	struct device *db = da ? need_dev(s, b) : NULL;
	if (!db)
		return -EINVAL;
	if (da == db)
		return cli_fail(s, -EINVAL, "an interface cannot be cross-connected to itself");
	graph_cli_barrier_sync(s);
	rc = dev_set_xconnect(da, db);
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, -EINVAL, "cannot cross-connect %s to %s", a, b);
	cli_printf(s, "%s l2-xconnect -> %s", da->name, db->name);
	return 0;
}

/*
 * sluice> set interface rx-burst nul0 32
 * nul0 rx-burst 32
 *
 * Packets the input node takes per poll of each of the interface's rx
 * queues, 1..256 (a frame, the default): testpmd's --burst. startup.conf's
 * `rx-burst N` in the interface's block sets it at start.
 */
static int set_interface_rx_burst(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	uint32_t n = 0;
	const struct cli_arg args[] = {
		{ CLI_ARG_WORD, "NAME", &name, 0, 0 },
		{ CLI_ARG_U32, "N", &n, 1, DEV_RX_BURST_MAX },
	};
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	struct device *d = rc ? NULL : need_dev(s, name);
	if (!d)
		return -EINVAL;
	graph_cli_barrier_sync(s);
	rc = dev_set_rx_burst(d, n);
	graph_cli_barrier_release(s);
	if (rc) /* cli_args_parse held n to the range */
		return cli_fail(s, -EINVAL, "rx-burst %u: expected 1..%u", n, DEV_RX_BURST_MAX);
	cli_printf(s, "%s rx-burst %u", d->name, d->rx_burst);
	return 0;
}

/*
 * sluice> set interface l3 pg0
 * pg0 l3
 */
static int set_interface_l3(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "NAME", &name, 0, 0 } };
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	struct device *d = rc ? NULL : need_dev(s, name);
	if (!d)
		return -EINVAL;
	graph_cli_barrier_sync(s);
	dev_set_l3(d);
	graph_cli_barrier_release(s);
	cli_printf(s, "%s l3", d->name);
	return 0;
}

/*
 * sluice> clear interfaces
 * counters of 2 interface(s) cleared
 */
static int clear_interfaces(struct cli_session *s, int argc, char **argv)
{
	int rc = cli_args_parse(s, argc, argv, NULL, 0);
	if (rc)
		return rc;
	uint32_t n = 0;
	struct device *d;
	graph_cli_barrier_sync(s);
	DEV_FOREACH(d)
	{
		dev_clear_counters(d);
		n++;
	}
	graph_cli_barrier_release(s);
	cli_printf(s, "counters of %u interface(s) cleared", n);
	return 0;
}

/* ---- pcap capture ---- */

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
		struct device *d = need_dev(s, ifname);
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

/* ---- registration ---- */

CLI_COMMAND(create_interface_cmd, "create interface", "create interface NAME driver DRIVER [key value...]",
	    "Create an interface (admin down) with its driver's keys", create_interface)
CLI_COMMAND(delete_interface_cmd, "delete interface", "delete interface NAME", "Stop and delete an interface",
	    delete_interface)
CLI_COMMAND(show_interface_cmd, "show interface", "show interface [NAME] [json]",
	    "Interfaces: state, mode and testpmd-style counters", show_interface)
CLI_COMMAND(show_hardware_cmd, "show hardware", "show hardware [NAME]", "Driver, link, MTU and queues",
	    show_hardware)
CLI_COMMAND(show_rx_placement_cmd, "show interface rx-placement", "show interface rx-placement",
	    "Which thread polls which rx queue", show_rx_placement)
CLI_COMMAND(set_interface_state_cmd, "set interface state", "set interface state NAME up|down",
	    "Bring an interface up or down", set_interface_state)
CLI_COMMAND(set_interface_xconnect_cmd, "set interface l2 xconnect", "set interface l2 xconnect A B",
	    "Send everything A receives out of B (one way; A goes to L2 mode)", set_interface_xconnect)
CLI_COMMAND(set_interface_rx_burst_cmd, "set interface rx-burst", "set interface rx-burst NAME N",
	    "Packets taken per poll of each rx queue, 1..256 (a frame, the default)", set_interface_rx_burst)
CLI_COMMAND(set_interface_l3_cmd, "set interface l3", "set interface l3 NAME", "Put an interface back in L3 mode",
	    set_interface_l3)
CLI_COMMAND(clear_interfaces_cmd, "clear interfaces", "clear interfaces", "Zero every interface's counters",
	    clear_interfaces)
CLI_COMMAND(pcap_capture_cmd, "pcap capture",
	    "pcap capture rx|tx|drop [interface NAME|any] max N file FILE [max-bytes-per-pkt N] | off | status",
	    "Copy packets an interface receives or sends into a pcap file", pcap_capture)
