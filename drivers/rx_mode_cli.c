/* `set interface rx-mode`: the rx mode of an interface's queues
 * (drivers/device_rx_mode.c). `show interface rx-placement` shows them. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "cli/cli.h"
#include "drivers/device.h"
#include "drivers/drivers_cli.h"
#include "graph/graph_cli.h"

/*
 * sluice> set interface rx-mode eth0 interrupt
 * eth0 queue 0 interrupt
 * eth0 queue 1 interrupt
 * sluice> set interface rx-mode eth0 queue 1 polling
 * eth0 queue 1 polling
 *
 * Every queue of the interface, or the one named. Taken at once under the
 * barrier, nothing lost: the queue keeps its ring and its frames. An
 * af-packet queue keeps the ring it started with (its interface's `rx-ring`;
 * under `auto`, TPACKET_V3 for polling, V2 otherwise) until the interface
 * is next brought up; `show af-packet` shows which.
 */
static int set_interface_rx_mode(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL, *mode = NULL;
	uint32_t queue = UINT32_MAX;
	const struct cli_arg args[] = {
		{ CLI_ARG_WORD, "NAME", &name, 0, 0 },
		{ CLI_ARG_KEY_U32, "queue", &queue, 0, DEV_MAX_QUEUES - 1 },
		{ CLI_ARG_WORD, "polling|interrupt|adaptive", &mode, 0, 0 },
	};
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	struct device *d = rc ? NULL : dev_cli_need(s, name);
	if (!d)
		return -EINVAL;
	int m = dev_rx_mode_parse(mode);
	if (m < 0)
		return cli_fail(s, -EINVAL, "rx-mode %s: expected polling, interrupt or adaptive", mode);
	if (queue != UINT32_MAX && queue >= d->n_rx_queues)
		return cli_fail(s, -EINVAL, "%s has rx queues 0-%u", d->name, d->n_rx_queues - 1u);
	graph_cli_barrier_sync(s);
	rc = dev_set_rx_mode(d, queue == UINT32_MAX ? -1 : (int)queue, (enum dev_rx_mode)m);
	graph_cli_barrier_release(s);
	if (rc)
		return cli_fail(s, rc, "cannot set rx-mode: %s", strerror(-rc));
	for (uint16_t q = 0; q < d->n_rx_queues; q++)
		if (queue == UINT32_MAX || q == queue)
			cli_printf(s, "%s queue %u %s", d->name, q, dev_rx_mode_name(dev_rx_mode(d, q)));
	return 0;
}

CLI_COMMAND(set_interface_rx_mode_cmd, "set interface rx-mode",
	    "set interface rx-mode NAME [queue N] polling|interrupt|adaptive",
	    "Rx queue mode: polling spins, interrupt sleeps until a frame, adaptive polls while frames come",
	    set_interface_rx_mode)
