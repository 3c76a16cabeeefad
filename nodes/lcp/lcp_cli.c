/* linux-cp's commands, VPP's names: `lcp create`, `lcp delete`,
 * `lcp default netns`, `show lcp`. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/lcp/lcp.h"
#include "nodes/lcp/lcp_nl.h"

/*
 * sluice> lcp create eth0 host-if s-eth0 netns ctl
 * eth0 paired with tap0: s-eth0 in netns ctl
 *
 * Bad words print usage; a port that does not exist, a name too long, a
 * missing namespace or a TAP that exists there print why: nothing changes.
 */
static int lcp_create_cmd_fn(struct cli_session *s, int argc, char **argv)
{
	const char *port = argc > 0 ? argv[0] : NULL, *host_if = NULL, *netns = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "host-if") && !host_if)
			host_if = argv[i + 1];
		else if (!strcmp(argv[i], "netns") && !netns)
			netns = argv[i + 1];
		else
			return cli_fail(s, -EINVAL, "unexpected '%s'", argv[i]);
	}
	if (!port || !host_if || argc % 2 == 0)
		return cli_fail(s, -EINVAL, "expected PORT host-if NAME [netns NS]");
	char err[CONF_MSG_SIZE];
	int rc = lcp_create(port, host_if, netns, err, sizeof(err));
	if (rc)
		return cli_fail(s, rc, "%s", err);
	const struct device *tap = dev_by_index(lcp_tap_of(dev_by_name(port)->index));
	const char *ns = tap_netns(tap);
	cli_printf(s, "%s paired with %s: %s in netns %s", port, tap->name, host_if, ns[0] ? ns : "(sluice's)");
	return 0;
}

/*
 * sluice> lcp delete eth0
 * eth0 unpaired, tap0 and s-eth0 deleted
 */
static int lcp_delete_cmd_fn(struct cli_session *s, int argc, char **argv)
{
	const char *port = NULL;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "PORT", &port, 0, 0 } };
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	struct device *phy = dev_by_name(port);
	const struct device *tap = phy ? dev_by_index(lcp_tap_of(phy->index)) : NULL;
	char tap_name[DEV_NAME_SIZE] = "", host_if[TAP_IFNAME_SIZE] = "", err[CONF_MSG_SIZE];
	if (tap) {
		snprintf(tap_name, sizeof(tap_name), "%s", tap->name);
		snprintf(host_if, sizeof(host_if), "%s", tap_host_if(tap));
	}
	rc = lcp_delete(port, err, sizeof(err));
	if (rc)
		return cli_fail(s, rc, "%s", err);
	cli_printf(s, "%s unpaired, %s and %s deleted", port, tap_name, host_if);
	return 0;
}

/*
 * sluice> lcp default netns ctl
 * lcp default netns ctl
 * sluice> lcp default netns none
 * lcp default netns none
 *
 * `none` sets it back to sluice's own namespace (what the running
 * configuration writes once a default was set and cleared), so a
 * namespace called "none" cannot be the default.
 */
static int lcp_default_netns_fn(struct cli_session *s, int argc, char **argv)
{
	const char *ns = NULL;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "NAME|none", &ns, 0, 0 } };
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	char err[CONF_MSG_SIZE];
	rc = lcp_set_default_netns(strcmp(ns, "none") ? ns : "", err, sizeof(err));
	if (rc)
		return cli_fail(s, rc, "%s", err);
	cli_printf(s, "lcp default netns %s", ns);
	return 0;
}

/*
 * sluice> lcp resync
 * resync asked of 1 netlink listener(s)
 *
 * A full re-dump with mark and sweep, as after a netlink overrun.
 */
static int lcp_resync_fn(struct cli_session *s, int argc, char **argv)
{
	int rc = cli_args_parse(s, argc, argv, NULL, 0);
	if (rc)
		return rc;
	uint32_t n = lcp_nl_resync();
	if (!n)
		return cli_fail(s, -ENOENT, "no netlink listener runs (lcp create starts one per namespace)");
	cli_printf(s, "resync asked of %u netlink listener(s)", n);
	return 0;
}

/* `clear lcp`: the listeners' hold figures (hold_max_ns, hold_cpu_max_ns,
 * hold_faults_max, max_batch, the holds' histograms) start again, as `clear runtime` does for the barrier's, so a
 * measurement sees its own holds and not the start-up's (the first address
 * creates the FIB in one hold). The other counters keep counting. */
static int lcp_clear_fn(struct cli_session *s, int argc, char **argv)
{
	int rc = cli_args_parse(s, argc, argv, NULL, 0);
	if (rc)
		return rc;
	lcp_nl_stats.hold_max_ns = 0;
	lcp_nl_stats.hold_cpu_max_ns = 0;
	lcp_nl_stats.hold_faults_max = 0;
	lcp_nl_stats.max_batch = 0;
	for (int i = 0; i < LCP_NL_HOLD_HIST_N; i++) /* the p99s from here */
		lcp_nl_stats.hold_hist[i] = lcp_nl_stats.hold_cpu_hist[i] = 0;
	return 0;
}

/* ---- show lcp ---- */

/* A histogram of holds as {"<= us": holds}, the last bucket "more". */
static cJSON *hist_json(const _Atomic uint64_t *h)
{
	cJSON *o = cJSON_CreateObject();
	for (int i = 0; i < LCP_NL_HOLD_HIST_N; i++) {
		char k[16];
		snprintf(k, sizeof(k), i + 1 < LCP_NL_HOLD_HIST_N ? "%u" : "more", lcp_nl_hold_hist_us[i]);
		cJSON_AddNumberToObject(o, k, (double)h[i]);
	}
	return o;
}

/* "holds": the budget and where the holds' time went (lcp_nl_hold.c). */
static cJSON *holds_json(const struct lcp_nl_stats *st)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "budget_entries", lcp_nl_hold_entries);
	cJSON_AddNumberToObject(o, "budget_cpu_ns", (double)lcp_nl_hold_cpu_ns);
	cJSON_AddBoolToObject(o, "priority", lcp_nl_hold_raise);
	cJSON_AddNumberToObject(o, "p99_us", (double)lcp_nl_hold_p99_us(st->hold_hist));
	cJSON_AddNumberToObject(o, "cpu_p99_us", (double)lcp_nl_hold_p99_us(st->hold_cpu_hist));
	cJSON_AddItemToObject(o, "wall_us", hist_json(st->hold_hist));
	cJSON_AddItemToObject(o, "cpu_us", hist_json(st->hold_cpu_hist));
	cJSON_AddNumberToObject(o, "cpu_ns", (double)st->hold_cpu_ns);
	cJSON_AddNumberToObject(o, "faults", (double)st->hold_faults);
	cJSON_AddNumberToObject(o, "faults_max", (double)st->hold_faults_max);
	cJSON_AddNumberToObject(o, "over_budget", (double)st->holds_over);
	cJSON_AddNumberToObject(o, "preempted", (double)st->holds_preempted);
	cJSON_AddNumberToObject(o, "raised", (double)st->holds_raised);
	cJSON_AddNumberToObject(o, "unraised", (double)st->holds_unraised);
	cJSON_AddNumberToObject(o, "frees_deferred", (double)st->frees_deferred);
	cJSON_AddNumberToObject(o, "free_ns", (double)st->free_ns);
	cJSON_AddNumberToObject(o, "prefault_ns", (double)st->prefault_ns);
	cJSON_AddNumberToObject(o, "sync_ns", (double)st->sync_ns);
	return o;
}

static cJSON *netlink_json(void)
{
	const struct lcp_nl_stats *st = &lcp_nl_stats;
	cJSON *o = cJSON_CreateObject();
	cJSON *ns = cJSON_AddArrayToObject(o, "netns");
	for (uint32_t i = 0; i < lcp_nl_n_listeners(); i++)
		cJSON_AddItemToArray(ns, cJSON_CreateString(lcp_nl_listener_netns(i)));
	cJSON_AddNumberToObject(o, "route_table", lcp_nl_route_table);
	cJSON_AddNumberToObject(o, "messages", (double)st->messages);
	cJSON_AddNumberToObject(o, "applied", (double)st->applied);
	cJSON *ign = cJSON_AddObjectToObject(o, "ignored");
	for (int i = 0; i < LCP_NL_IGN_N; i++)
		cJSON_AddNumberToObject(ign, lcp_nl_ignore_name((enum lcp_nl_ignore)i), (double)st->ignored[i]);
	cJSON *kind = cJSON_AddObjectToObject(o, "applied_by_kind");
	for (int i = 0; i < LCP_NL_K_N; i++)
		cJSON_AddNumberToObject(kind, lcp_nl_kind_name((enum lcp_nl_kind)i), (double)st->applied_kind[i]);
	cJSON_AddNumberToObject(o, "multipath", (double)st->multipath);
	cJSON_AddNumberToObject(o, "batches", (double)st->batches);
	cJSON_AddNumberToObject(o, "max_batch", (double)st->max_batch);
	cJSON_AddNumberToObject(o, "resyncs", (double)st->resyncs);
	cJSON_AddNumberToObject(o, "resyncs_redone", (double)st->resyncs_redone);
	cJSON_AddNumberToObject(o, "swept", (double)st->swept);
	cJSON_AddNumberToObject(o, "enobufs", (double)st->enobufs);
	cJSON_AddNumberToObject(o, "drained", (double)st->drained);
	cJSON_AddNumberToObject(o, "held_max", (double)st->held_max);
	cJSON_AddNumberToObject(o, "nh_routes", (double)st->nh_routes);
	cJSON_AddNumberToObject(o, "linux_routes", (double)st->routes);
	cJSON_AddNumberToObject(o, "linux_routes6", (double)st->routes6);
	cJSON_AddNumberToObject(o, "hold_ns", (double)st->hold_ns);
	cJSON_AddNumberToObject(o, "hold_max_ns", (double)st->hold_max_ns);
	cJSON_AddNumberToObject(o, "hold_cpu_max_ns", (double)st->hold_cpu_max_ns);
	cJSON_AddNumberToObject(o, "routes_changed_unix_ns", (double)st->routes_changed_unix_ns);
	cJSON_AddItemToObject(o, "holds", holds_json(st));
	return o;
}

static void netlink_print(struct cli_session *s)
{
	const struct lcp_nl_stats *st = &lcp_nl_stats;
	cli_printf(s, "netlink: %u listener(s), messages %llu, applied %llu, linux routes %llu, batches %llu (max %llu), "
		   "resyncs %llu (redone %llu, swept %llu, ENOBUFS %llu, drained %llu, most held %llu), routes moved by nhid %llu, "
		   "multipath (ECMP) routes %llu, linux IPv6 routes %llu",
		   lcp_nl_n_listeners(), (unsigned long long)st->messages, (unsigned long long)st->applied,
		   (unsigned long long)st->routes, (unsigned long long)st->batches, (unsigned long long)st->max_batch,
		   (unsigned long long)st->resyncs, (unsigned long long)st->resyncs_redone,
		   (unsigned long long)st->swept, (unsigned long long)st->enobufs, (unsigned long long)st->drained,
		   (unsigned long long)st->held_max,
		   (unsigned long long)st->nh_routes, (unsigned long long)st->multipath, (unsigned long long)st->routes6);
	cli_printf(s, "holds: budget %u messages / %llu us CPU, longest %llu us (CPU %llu us), p99 %llu us (CPU %llu us), "
		   "%llu faults (max %llu in one), %llu preempted, %llu at SCHED_FIFO (%llu not), %llu frees after release",
		   lcp_nl_hold_entries, (unsigned long long)(lcp_nl_hold_cpu_ns / 1000),
		   (unsigned long long)(st->hold_max_ns / 1000), (unsigned long long)(st->hold_cpu_max_ns / 1000),
		   (unsigned long long)lcp_nl_hold_p99_us(st->hold_hist),
		   (unsigned long long)lcp_nl_hold_p99_us(st->hold_cpu_hist), (unsigned long long)st->hold_faults,
		   (unsigned long long)st->hold_faults_max, (unsigned long long)st->holds_preempted,
		   (unsigned long long)st->holds_raised, (unsigned long long)st->holds_unraised,
		   (unsigned long long)st->frees_deferred);
	for (int i = 0; i < LCP_NL_IGN_N; i++)
		if (st->ignored[i])
			cli_printf(s, "  ignored, %s: %llu", lcp_nl_ignore_name((enum lcp_nl_ignore)i),
				   (unsigned long long)st->ignored[i]);
}

static cJSON *lcp_json(void)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "default_netns", lcp_default_netns());
	cJSON *list = cJSON_AddArrayToObject(root, "pairs");
	struct device *phy;
	DEV_FOREACH(phy)
	{
		const struct device *tap = dev_by_index(lcp_tap_of(phy->index));
		if (!tap)
			continue;
		struct tap_host_stats st;
		tap_host_stats_get(tap, &st);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "port", phy->name);
		cJSON_AddStringToObject(o, "tap", tap->name);
		cJSON_AddStringToObject(o, "host_if", tap_host_if(tap));
		cJSON_AddStringToObject(o, "netns", tap_netns(tap));
		cJSON_AddNumberToObject(o, "host_ifindex", st.host_ifindex);
		cJSON_AddBoolToObject(o, "host_gone", st.host_gone);
		cJSON_AddNumberToObject(o, "to_linux", (double)st.to_linux);
		cJSON_AddNumberToObject(o, "from_linux", (double)st.from_linux);
		cJSON_AddNumberToObject(o, "rx_ring_full", (double)st.rx_ring_full);
		cJSON_AddNumberToObject(o, "rx_oversize", (double)st.rx_oversize);
		cJSON_AddNumberToObject(o, "write_errors", (double)st.write_errors);
		cJSON_AddItemToArray(list, o);
	}
	cJSON_AddItemToObject(root, "netlink", netlink_json());
	return root;
}

/*
 * sluice> show lcp
 * Port  TAP   Host-if  Netns  Ifindex  To Linux  From Linux  Dropped
 * eth0  tap0  s-eth0   ctl          2        14          12        0
 * sluice> show lcp json
 * {"default_netns": "", "pairs": [{"port": "eth0", "tap": "tap0", "host_if": "s-eth0", "netns": "ctl",
 *   "host_ifindex": 2, "host_gone": false, "to_linux": 14, "from_linux": 12, "rx_ring_full": 0, "rx_oversize": 0,
 *   "write_errors": 0}]}
 *
 * To Linux: frames written to the TAP (punted); From Linux: frames read
 * from it (to lcp-xc); Dropped: read but no room (rx ring full, oversize)
 * plus writes Linux refused (its interface down). Below the table, the
 * netlink listener's counters (json: "netlink"): messages, applied, each
 * reason for ignoring one, batches, resyncs:
 * netlink: 1 listener(s), messages 12, applied 9, linux routes 1, batches 3 (max 9), resyncs 0 (swept 0,
 *   ENOBUFS 0), multipath (ECMP) routes 0
 *   ignored, proto kernel (address's own): 3 Ifindex "gone": the TAP
 * was deleted from Linux under sluice (`lcp delete` cleans up). Punts dropped because
 * the tx ring was full are lcp-punt's "punt queue full" in `show errors`.
 */
static int show_lcp(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	if (json) {
		cli_json_print(s, lcp_json());
		return 0;
	}
	static const struct cli_table_col cols[] = {
		{ "Port", false },    { "TAP", false },	       { "Host-if", false },    { "Netns", false },
		{ "Ifindex", true }, { "To Linux", true }, { "From Linux", true }, { "Dropped", true },
	};
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	if (!t)
		return cli_fail(s, -ENOMEM, "out of memory");
	struct device *phy;
	DEV_FOREACH(phy)
	{
		const struct device *tap = dev_by_index(lcp_tap_of(phy->index));
		if (!tap)
			continue;
		struct tap_host_stats st;
		tap_host_stats_get(tap, &st);
		cli_table_cell(t, "%s", phy->name);
		cli_table_cell(t, "%s", tap->name);
		cli_table_cell(t, "%s", tap_host_if(tap));
		cli_table_cell(t, "%s", tap_netns(tap)[0] ? tap_netns(tap) : "-");
		if (st.host_gone)
			cli_table_cell(t, "gone");
		else
			cli_table_cell(t, "%u", st.host_ifindex);
		cli_table_cell(t, "%llu", (unsigned long long)st.to_linux);
		cli_table_cell(t, "%llu", (unsigned long long)st.from_linux);
		cli_table_cell(t, "%llu", (unsigned long long)(st.rx_ring_full + st.rx_oversize + st.write_errors));
	}
	cli_table_print(s, t);
	netlink_print(s);
	return 0;
}

CLI_COMMAND(lcp_create_cmd, "lcp create", "lcp create PORT host-if NAME [netns NS]",
	    "Mirror a port into Linux as a TAP with its MAC and MTU (linux-cp)", lcp_create_cmd_fn)
CLI_COMMAND(lcp_delete_cmd, "lcp delete", "lcp delete PORT", "Unpair a port and delete its TAP", lcp_delete_cmd_fn)
CLI_COMMAND(lcp_default_netns_cmd, "lcp default netns", "lcp default netns NAME|none",
	    "Namespace for TAPs when lcp create names none", lcp_default_netns_fn)
CLI_COMMAND(lcp_resync_cmd, "lcp resync", "lcp resync",
	    "Re-dump Linux's addresses, routes and neighbours (mark and sweep)", lcp_resync_fn)
CLI_COMMAND(lcp_clear_cmd, "clear lcp", "clear lcp",
	    "Restart the netlink listeners' hold figures (longest hold, its CPU time, largest batch)", lcp_clear_fn)
CLI_COMMAND(show_lcp_cmd, "show lcp", "show lcp [json]", "linux-cp pairs: port, TAP, namespace, counters", show_lcp)

/* ---- running configuration (cli/cli_runcfg.h) ---- */

/* The default namespace (`none` when it was set and is no longer) and each
 * pair, its namespace named. What the netlink listener mirrors from Linux
 * (routes, neighbours) is Linux's, not configuration. */
static void write_lcp(struct cli_runcfg *rc, struct cli_session *s)
{
	(void)s;
	const char *dns = lcp_default_netns();
	cli_runcfg_attr(rc, "lcp default netns", !dns[0], "lcp default netns %s", dns[0] ? dns : "none");
	struct device *phy;
	DEV_FOREACH(phy)
	{
		const struct device *tap = dev_by_index(lcp_tap_of(phy->index));
		if (!tap)
			continue;
		char key[DEV_NAME_SIZE + 8], undo[DEV_NAME_SIZE + 16];
		const char *ns = tap_netns(tap);
		snprintf(key, sizeof(key), "lcp %s", phy->name);
		snprintf(undo, sizeof(undo), "lcp delete %s", phy->name);
		cli_runcfg_object(rc, key, undo, "lcp create %s host-if %s%s%s", phy->name, tap_host_if(tap),
				  ns[0] ? " netns " : "", ns);
	}
}

CLI_RUNCFG_WRITER(lcp_runcfg, "linux-cp", CLI_RUNCFG_LCP, write_lcp)
