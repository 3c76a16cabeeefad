/* The interface layer's CLI commands, VPP spelling: create and delete
 * interfaces, admin state, MTU and MAC, L2 cross-connect and L3 mode, rx
 * burst, clearing counters. What they show is in interface_show_cli.c, pcap capture in
 * capture_cli.c.
 *
 * Every command checks all of its words before it changes anything, so a
 * bad command prints usage and leaves the interfaces as they were. Changes
 * run under the graph barrier (the datapath reads the interface table, the
 * poll lists and the modes without locks); reads take no lock, counters
 * being tear-free.
 *
 * Built with the other drivers/ command files (interface_show_cli.c, capture_cli.c) as their own library
 * (sluice_drivers_cli) that the daemon links whole, so that drivers/ does
 * not depend on cli/.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "drivers/device.h"
#include "drivers/drivers_cli.h"
#include "graph/graph_cli.h"

#define CREATE_MAX_WORDS 32 /* driver `key value` words after the driver's name */

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

struct device *dev_cli_create(struct cli_session *s, const char *name, const char *driver, const char *const *argw,
			      uint32_t n, const uint8_t *mac)
{
	if (n > CREATE_MAX_WORDS) {
		cli_fail(s, -EINVAL, "too many words");
		return NULL;
	}
	const char *words[CREATE_MAX_WORDS];
	memcpy(words, argw, (size_t)n * sizeof(*words));
	char(*paths)[PATH_MAX] = calloc(CREATE_MAX_WORDS, PATH_MAX);
	int rc = paths ? check_output_files(s, driver, (int)n, words, paths) : -ENOMEM;
	if (rc == -ENOMEM)
		cli_fail(s, rc, "out of memory");
	if (rc) {
		free(paths);
		return NULL;
	}
	char err[CONF_MSG_SIZE * 2];
	graph_cli_barrier_sync(s);
	struct device *d = dev_create(name, driver, words, n, err, sizeof(err));
	if (d) /* before paths go: a tx-file's word is one of them */
		dev_runcfg_created(d, driver, words, n);
	free(paths);
	if (d && mac && (rc = dev_set_mac(d, mac)) != 0)
		snprintf(err, sizeof(err), "MAC refused: %s", strerror(-rc));
	if (d && !rc) {
		uint32_t t = least_loaded_thread(s);
		for (uint16_t q = 0; q < d->n_rx_queues && rc == 0; q++) {
			rc = dev_set_rx_placement(d, q, t);
			t = least_loaded_thread(s);
		}
		if (rc)
			snprintf(err, sizeof(err), "cannot place its rx queues: %s", strerror(-rc));
	}
	if (d && rc) {
		dev_delete(d);
		d = NULL;
	}
	graph_cli_barrier_release(s);
	if (!d) {
		cli_fail(s, -EINVAL, "%s", err);
		return NULL;
	}
	cli_printf(s, "%s (index %u) created, admin down", d->name, d->index);
	return d;
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
	struct device *d = dev_cli_create(s, argv[0], argv[2], (const char *const *)argv + 3, (uint32_t)(argc - 3), NULL);
	return d ? 0 : -EINVAL;
}

int dev_cli_delete(struct cli_session *s, struct device *d)
{
	char copy[DEV_NAME_SIZE];
	snprintf(copy, sizeof(copy), "%s", d->name);
	graph_cli_barrier_sync(s);
	dev_delete(d);
	graph_cli_barrier_release(s);
	cli_printf(s, "%s deleted", copy);
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
	struct device *d = rc ? NULL : dev_cli_need(s, name);
	if (!d)
		return -EINVAL;
	return dev_cli_delete(s, d);
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
	struct device *d = dev_cli_need(s, name);
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
	struct device *da = dev_cli_need(s, a);
	struct device *db = da ? dev_cli_need(s, b) : NULL;
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
	struct device *d = rc ? NULL : dev_cli_need(s, name);
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
	struct device *d = rc ? NULL : dev_cli_need(s, name);
	if (!d)
		return -EINVAL;
	graph_cli_barrier_sync(s);
	dev_set_l3(d);
	graph_cli_barrier_release(s);
	cli_printf(s, "%s l3", d->name);
	return 0;
}

/*
 * sluice> set interface mtu 1400 eth0
 * eth0 mtu 1400
 * sluice> set interface mtu packet 9000 eth0
 *
 * VPP's spelling (`set interface mtu [packet] VALUE NAME`; sluice has one
 * MTU per interface, the IP MTU ip4-rewrite enforces, so `packet` is the
 * same). 68..9216. The driver takes it where it keeps one (af-packet: the
 * host interface's; tap: the Linux TAP's); a linux-cp port's TAP follows,
 * and an MTU the TAP's rings cannot take leaves both as they were.
 */
static int set_interface_mtu(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	uint32_t mtu = 0;
	if (argc > 0 && !strcmp(argv[0], "packet")) {
		argc--;
		argv++;
	}
	const struct cli_arg args[] = {
		{ CLI_ARG_U32, "VALUE", &mtu, DEV_MTU_MIN, DEV_MTU_MAX },
		{ CLI_ARG_WORD, "NAME", &name, 0, 0 },
	};
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	struct device *d = rc ? NULL : dev_cli_need(s, name);
	if (!d)
		return -EINVAL;
	graph_cli_barrier_sync(s);
	rc = dev_set_mtu(d, mtu);
	uint32_t now = d->mtu;
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s: MTU %u refused: %s", d->name, mtu, strerror(-rc));
	if (now != mtu)
		return cli_fail(s, -ERANGE, "%s: MTU %u refused by its linux-cp TAP: stays at %u", d->name, mtu, now);
	cli_printf(s, "%s mtu %u", d->name, now);
	return 0;
}

/*
 * sluice> set interface mac address eth0 02:00:00:00:00:01
 * eth0 mac 02:00:00:00:00:01
 *
 * VPP's spelling. A unicast MAC; sluice's rewrites towards its neighbours
 * take it at once, a linux-cp port's TAP follows.
 */
static int set_interface_mac(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL, *text = NULL;
	const struct cli_arg args[] = {
		{ CLI_ARG_WORD, "NAME", &name, 0, 0 },
		{ CLI_ARG_WORD, "MAC", &text, 0, 0 },
	};
	uint8_t mac[6];
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	struct device *d = rc ? NULL : dev_cli_need(s, name);
	if (!d)
		return -EINVAL;
	if (conf_mac_parse(text, mac) || (mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return cli_fail(s, -EINVAL, "expected a unicast MAC aa:bb:cc:dd:ee:ff, found '%s'", text);
	graph_cli_barrier_sync(s);
	rc = dev_set_mac(d, mac);
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "%s: MAC refused: %s", d->name, strerror(-rc));
	char buf[18];
	cli_printf(s, "%s mac %s", d->name, dev_format_mac(buf, d->mac));
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

/* ---- registration ---- */

CLI_COMMAND(create_interface_cmd, "create interface", "create interface NAME driver DRIVER [key value...]",
	    "Create an interface (admin down) with its driver's keys", create_interface)
CLI_COMMAND(delete_interface_cmd, "delete interface", "delete interface NAME", "Stop and delete an interface",
	    delete_interface)
CLI_COMMAND(set_interface_state_cmd, "set interface state", "set interface state NAME up|down",
	    "Bring an interface up or down", set_interface_state)
CLI_COMMAND(set_interface_xconnect_cmd, "set interface l2 xconnect", "set interface l2 xconnect A B",
	    "Send everything A receives out of B (one way; A goes to L2 mode)", set_interface_xconnect)
CLI_COMMAND(set_interface_rx_burst_cmd, "set interface rx-burst", "set interface rx-burst NAME N",
	    "Packets taken per poll of each rx queue, 1..256 (a frame, the default)", set_interface_rx_burst)
CLI_COMMAND(set_interface_l3_cmd, "set interface l3", "set interface l3 NAME", "Put an interface back in L3 mode",
	    set_interface_l3)
CLI_COMMAND(set_interface_mtu_cmd, "set interface mtu", "set interface mtu [packet] VALUE NAME",
	    "Set an interface's MTU, 68..9216 (a linux-cp port's TAP follows)", set_interface_mtu)
CLI_COMMAND(set_interface_mac_cmd, "set interface mac address", "set interface mac address NAME MAC",
	    "Set an interface's MAC (a linux-cp port's TAP follows)", set_interface_mac)
CLI_COMMAND(clear_interfaces_cmd, "clear interfaces", "clear interfaces", "Zero every interface's counters",
	    clear_interfaces)
CLI_ALIAS(clear_hardware_interfaces_alias, "clear hardware-interfaces", "clear hardware-interfaces",
	  "clear interfaces", NULL)
