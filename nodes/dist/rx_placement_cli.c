/* `set interface rx-placement` (VPP's command): which thread polls an rx
 * queue. It lives beside the distributor's commands because the
 * distributor decides placement while it is attached: it receives every
 * rx queue on thread 0 and hands packets to the workers itself, so a
 * queue polled by a worker would bypass it (its flow pinning and
 * ordering). Without it, queues may go to any thread the graph has.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "drivers/device.h"
#include "drivers/drivers_cli.h"
#include "graph/graph.h"
#include "graph/graph_cli.h"
#include "nodes/dist/dist_graph.h"

/* "main" is thread 0, "worker N" thread N + 1 (VPP's numbering). -1 after
 * telling the session what was wrong. */
static int placement_thread(struct cli_session *s, struct graph *g, bool main_thread, uint32_t worker, bool has_worker)
{
	uint32_t n = graph_n_threads(g);
	if (main_thread == has_worker)
		return cli_fail(s, -EINVAL, "say one of main and worker N"), -1;
	if (main_thread)
		return 0;
	if (worker + 1 >= n || worker + 1 >= DEV_MAX_THREADS)
		return n > 1 ? cli_fail(s, -EINVAL, "worker %u: the workers are 0..%u", worker, n - 2)
			     : cli_fail(s, -EINVAL, "worker %u: there are no workers (cpu { workers N })", worker),
		       -1;
	return (int)(worker + 1);
}

/*
 * sluice> set interface rx-placement eth0 queue 1 worker 0
 * eth0 queue 1 on thread 1 (worker 0)
 * sluice> set interface rx-placement eth0 main
 * eth0 queue 0 on thread 0 (main)
 * eth0 queue 1 on thread 0 (main)
 *
 * Every queue of the interface, or the one named; taken under the
 * barrier, nothing lost: the queue keeps its ring and frames, and the
 * thread it leaves stops watching its fd (drivers/device_rx_mode.c).
 * `show interface rx-placement` shows the result.
 */
static int set_rx_placement(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	uint32_t queue = UINT32_MAX, worker = UINT32_MAX;
	bool main_thread = false;
	const struct cli_arg args[] = {
		{ CLI_ARG_WORD, "NAME", &name, 0, 0 },
		{ CLI_ARG_KEY_U32, "queue", &queue, 0, DEV_MAX_QUEUES - 1 },
		{ CLI_ARG_KEY_U32, "worker", &worker, 0, DEV_MAX_THREADS - 2 },
		{ CLI_ARG_FLAG, "main", &main_thread, 0, 0 },
	};
	struct graph *g = cli_graph(s);
	if (!g)
		return cli_fail(s, -ENODEV, "no graph");
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	struct device *d = rc ? NULL : dev_cli_need(s, name);
	if (!d)
		return -EINVAL;
	int t = placement_thread(s, g, main_thread, worker, worker != UINT32_MAX);
	if (t < 0)
		return -EINVAL;
	if (queue != UINT32_MAX && queue >= d->n_rx_queues)
		return cli_fail(s, -EINVAL, "%s has rx queues 0-%u", d->name, d->n_rx_queues - 1u);
	if (dist_attached() && t != 0)
		return cli_fail(s, -EBUSY, "the distributor receives every rx queue on the main thread");
	graph_cli_barrier_sync(s);
	for (uint16_t q = 0; q < d->n_rx_queues && rc == 0; q++)
		if (queue == UINT32_MAX || q == queue)
			rc = dev_set_rx_placement(d, q, (uint32_t)t);
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "cannot place %s's rx queues: %s", d->name, strerror(-rc));
	for (uint16_t q = 0; q < d->n_rx_queues; q++)
		if (queue == UINT32_MAX || q == queue) {
			if (t)
				cli_printf(s, "%s queue %u on thread %d (worker %d)", d->name, q, t, t - 1);
			else
				cli_printf(s, "%s queue %u on thread 0 (main)", d->name, q);
		}
	return 0;
}

CLI_COMMAND(set_rx_placement_cmd, "set interface rx-placement",
	    "set interface rx-placement NAME [queue N] worker N|main",
	    "Which thread polls the interface's rx queues (all, or the one named)", set_rx_placement)

/* ---- running configuration (cli/cli_runcfg.h) ---- */

/* Each rx queue's thread. A queue created at run time starts on thread 0,
 * so only a move off it is written for a new interface; startup's
 * round-robin placement is the baseline, so a queue moved since is
 * written whatever its thread. */
static void write_rx_placement(struct cli_runcfg *rc, struct cli_session *s)
{
	(void)s;
	struct device *d;
	DEV_FOREACH(d)
	for (uint16_t q = 0; q < d->n_rx_queues; q++) {
		uint32_t t = d->rxq[q].thread_index;
		char key[DEV_NAME_SIZE + 32];
		snprintf(key, sizeof(key), "if %s rx-placement %u", d->name, q);
		if (t)
			cli_runcfg_attr(rc, key, false, "set interface rx-placement %s queue %u worker %u", d->name, q,
					t - 1);
		else
			cli_runcfg_attr(rc, key, true, "set interface rx-placement %s queue %u main", d->name, q);
	}
}

CLI_RUNCFG_WRITER(rx_placement_runcfg, "rx placement", CLI_RUNCFG_INTERFACE_SET, write_rx_placement)
