/* What the interface commands show: `show interface` (table or JSON, per
 * queue with `NAME`), `show hardware` (the driver's own lines) and
 * `show interface rx-placement`. Reads take no lock: the counters are
 * tear-free and the table changes only with the datapath parked. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "drivers/device.h"
#include "drivers/drivers_cli.h"
#include "graph/graph_cli.h"

static const char *mode_name(const struct device *d)
{
	return d->mode == DEV_MODE_L2_XCONNECT ? "l2-xconnect" : d->mode == DEV_MODE_LCP ? "lcp-tap" : "l3";
}

static const char *peer_name(const struct device *d)
{
	const struct device *p = d->mode == DEV_MODE_L2_XCONNECT ? dev_by_index(d->xconnect_peer) : NULL;
	return p ? p->name : "-";
}

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
	char mac[18];
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
	cJSON_AddStringToObject(o, "mac", dev_format_mac(mac, d->mac));
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
 *    "xconnect": null, "mtu": 1500, "mac": "02:fe:12:34:56:78", "rx-burst": 256, "counters": { "RX-packets": 0, ..., "TX-dropped": 0 },
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
	struct device *one = name ? dev_cli_need(s, name) : NULL;
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

/* The next line of *cur, cut at its '\n'; NULL after the last. */
static char *next_line(char **cur)
{
	char *line = *cur;
	if (!line || !*line)
		return NULL;
	char *nl = strchr(line, '\n');
	if (nl)
		*nl = 0;
	*cur = nl ? nl + 1 : NULL;
	return line;
}

/* `show hardware json`: one object per interface; the driver's own lines
 * (ops->format_hw) as an array of strings, their layout being the
 * driver's. */
static cJSON *hardware_json(struct device *d)
{
	char mac[18];
	struct dev_link link;
	dev_link_get(d, &link);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", d->name);
	cJSON_AddNumberToObject(o, "index", d->index);
	cJSON_AddStringToObject(o, "driver", d->driver ? d->driver->name : "");
	cJSON_AddStringToObject(o, "admin", d->admin_up ? "up" : "down");
	cJSON_AddStringToObject(o, "link", link.up ? "up" : "down");
	cJSON_AddNumberToObject(o, "speed_mbps", link.speed_mbps);
	cJSON_AddBoolToObject(o, "full_duplex", link.full_duplex);
	cJSON_AddNumberToObject(o, "mtu", d->mtu);
	cJSON_AddStringToObject(o, "mac", dev_format_mac(mac, d->mac));
	cJSON_AddNumberToObject(o, "rx_burst", d->rx_burst);
	cJSON_AddNumberToObject(o, "tx_queues", d->n_tx_queues);
	cJSON *rxq = cJSON_AddArrayToObject(o, "rx_queues");
	for (uint16_t q = 0; q < d->n_rx_queues; q++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "queue", q);
		cJSON_AddNumberToObject(e, "thread", d->rxq[q].thread_index);
		cJSON_AddItemToArray(rxq, e);
	}
	cJSON *lines = cJSON_AddArrayToObject(o, "driver_lines");
	char buf[4096];
	char *cur = d->ops->format_hw && d->ops->format_hw(d, buf, sizeof(buf)) > 0 ? buf : NULL;
	for (char *line; (line = next_line(&cur));)
		cJSON_AddItemToArray(lines, cJSON_CreateString(line));
	return o;
}

/* The driver's own lines, indented under the interface's. */
static void hw_lines(struct cli_session *s, struct device *d)
{
	char buf[4096];
	char *cur = d->ops->format_hw(d, buf, sizeof(buf)) > 0 ? buf : NULL;
	for (char *line; (line = next_line(&cur));)
		cli_printf(s, "  %s", line);
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
 * sluice> show hardware nul0 json
 * {"interfaces": [{"name": "nul0", "index": 1, "driver": "null", "admin": "up", "link": "up",
 *   "speed_mbps": 0, "full_duplex": false, "mtu": 1500, "rx_burst": 256, "tx_queues": 1,
 *   "rx_queues": [{"queue": 0, "thread": 0}], "driver_lines": ["rx recycle, ..."]}]}
 */
static int show_hardware(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	bool json = cli_take_flag(&argc, argv, "json");
	/* VPP's detail levels mean nothing here: every line is always shown. */
	static const char *const levels[] = { "brief", "verbose", "detail" };
	for (size_t i = 0; i < ARRAY_LEN(levels); i++)
		while (cli_take_flag(&argc, argv, levels[i]))
			;
	int rc = cli_opt_word_arg(s, argc, argv, "NAME", &name);
	if (rc)
		return rc;
	struct device *one = name ? dev_cli_need(s, name) : NULL;
	if (name && !one)
		return -EINVAL;
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *list = json ? cJSON_AddArrayToObject(root, "interfaces") : NULL;
	struct device *d;
	DEV_FOREACH(d)
	{
		if (one && d != one)
			continue;
		if (json) {
			cJSON_AddItemToArray(list, hardware_json(d));
			continue;
		}
		struct dev_link link;
		dev_link_get(d, &link);
		char speed[48] = "";
		if (link.speed_mbps)
			snprintf(speed, sizeof(speed), ", %u Mb/s %s duplex", link.speed_mbps,
				 link.full_duplex ? "full" : "half");
		cli_printf(s, "%s (index %u): driver %s, admin %s, link %s%s", d->name, d->index,
			   d->driver ? d->driver->name : "?", d->admin_up ? "up" : "down", link.up ? "up" : "down",
			   speed);
		char mac[18];
		cli_printf(s, "  mtu %u, mac %s, %u rx queue(s) of burst %u, %u tx queue(s)", d->mtu,
			   dev_format_mac(mac, d->mac), d->n_rx_queues, d->rx_burst, d->n_tx_queues);
		for (uint16_t q = 0; q < d->n_rx_queues; q++)
			cli_printf(s, "  rx queue %u on thread %u", q, d->rxq[q].thread_index);
		if (d->ops->format_hw)
			hw_lines(s, d);
	}
	if (json)
		cli_json_print(s, root);
	return 0;
}

/* How a thread blocked in epoll_wait learns of the queue's frames. */
static const char *rx_wait_name(const struct device *d, uint16_t q)
{
	if (!d->admin_up)
		return "down";
	static const char *const names[] = { [DEV_RX_WAIT_POLL] = "none", [DEV_RX_WAIT_FD] = "fd",
					     [DEV_RX_WAIT_SELF] = "driver" };
	return d->rxq[q].rx_wait < ARRAY_LEN(names) ? names[d->rxq[q].rx_wait] : "?";
}

static cJSON *rx_placement_json(void)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(root, "rx_placement");
	for (uint32_t th = 0; th < DEV_MAX_THREADS; th++) {
		uint32_t n;
		const struct dev_poll *p = dev_poll_list(th, &n);
		for (uint32_t i = 0; i < n; i++) {
			char node[64];
			snprintf(node, sizeof(node), "%s-input", p[i].dev->driver ? p[i].dev->driver->name : "?");
			cJSON *o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "thread", th);
			cJSON_AddStringToObject(o, "interface", p[i].dev->name);
			cJSON_AddNumberToObject(o, "queue", p[i].queue);
			cJSON_AddStringToObject(o, "node", node);
			cJSON_AddStringToObject(o, "mode", dev_rx_mode_name(p[i].rx_mode));
			cJSON_AddStringToObject(o, "wakeup", rx_wait_name(p[i].dev, p[i].queue));
			cJSON_AddItemToArray(list, o);
		}
	}
	return root;
}

/*
 * sluice> show interface rx-placement
 * Thread  Interface  Queue  Node             Mode      Wakeup
 *      0  eth0           0  af-packet-input  adaptive  fd
 *      1  eth0           1  af-packet-input  polling   fd
 *      0  nul0           0  null-input       adaptive  driver
 * sluice> show interface rx-placement json
 * {"rx_placement": [{"thread": 0, "interface": "nul0", "queue": 0, "node": "null-input",
 *   "mode": "adaptive", "wakeup": "driver"}, ...]}
 *
 * Mode: polling, interrupt or adaptive (set interface rx-mode; startup.conf
 * cpu { rx-mode }). Wakeup: what wakes the thread when it sleeps: "fd" (the
 * queue's fd, watched on that thread), "driver" (the driver's own timer,
 * or nothing ever arrives unasked), "none" (it cannot: the thread backs off
 * instead of blocking), "down".
 */
static int show_rx_placement(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	if (json) {
		cli_json_print(s, rx_placement_json());
		return 0;
	}
	static const struct cli_table_col cols[] = {
		{ "Thread", true }, { "Interface", false }, { "Queue", true },
		{ "Node", false },  { "Mode", false },      { "Wakeup", false },
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
			cli_table_cell(t, "%s", dev_rx_mode_name(p[i].rx_mode));
			cli_table_cell(t, "%s", rx_wait_name(p[i].dev, p[i].queue));
		}
	}
	cli_table_print(s, t);
	return 0;
}

CLI_COMMAND(show_interface_cmd, "show interface", "show interface [NAME] [json]",
	    "Interfaces: state, mode and testpmd-style counters", show_interface)
/* VPP's name. `show hardware`, sluice's name before, is a prefix of it and
 * so its abbreviation: an alias of that name would make every VPP
 * abbreviation (`sh hard`) ambiguous (docs/vpp-cli.md). */
CLI_COMMAND(show_hardware_cmd, "show hardware-interfaces", "show hardware-interfaces [NAME] [brief|verbose|detail] [json]",
	    "Driver, link, MTU, queues and the driver's own lines (registers, PCI address, counters)", show_hardware)
CLI_COMMAND(show_rx_placement_cmd, "show interface rx-placement",
	    "show interface rx-placement [json]",
	    "Which thread polls which rx queue, in which rx mode", show_rx_placement)
