/* VPP's commands for af-packet interfaces, and sluice's show:
 *
 *   create host-interface name X [hw-addr MAC] [rx-ring frame|block|auto]
 *                                                makes host-X on Linux's X
 *   delete host-interface name X                 deletes host-X
 *   show af-packet [NAME] [json]                 each rx queue's ring
 *
 * host-X is what `create interface host-X driver af-packet host-if X`
 * makes (and what the running configuration writes back, with the MAC as
 * its own `set interface mac address` line): admin down, its rx queue placed
 * on the least loaded thread like any interface made at run time, under
 * one barrier (dev_cli_create). Built into the interface layer's command
 * library (drivers/meson.build), not the driver: drivers/ does not depend
 * on cli/.
 */
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "drivers/af_packet/af_packet.h"
#include "drivers/device.h"
#include "drivers/drivers_cli.h"

#define HOST_PREFIX "host-"

/* `name X` (and, when hw and ring are not NULL, an optional `hw-addr MAC`
 * and `rx-ring KIND`), in any order. 0 or -EINVAL after telling the
 * session. */
static int host_if_args(struct cli_session *s, int argc, char **argv, const char **name, const char **hw,
			const char **ring)
{
	*name = NULL;
	for (int i = 0; i < argc; i += 2) {
		const char **dst = NULL;
		if (!strcmp(argv[i], "name"))
			dst = name;
		else if (hw && !strcmp(argv[i], "hw-addr"))
			dst = hw;
		else if (ring && !strcmp(argv[i], "rx-ring"))
			dst = ring;
		if (!dst)
			return cli_fail(s, -EINVAL, "unexpected '%s'", argv[i]);
		if (i + 1 == argc)
			return cli_fail(s, -EINVAL, "missing value for '%s'", argv[i]);
		*dst = argv[i + 1];
	}
	if (!*name)
		return cli_fail(s, -EINVAL, "expected name X (the Linux interface)");
	if (strlen(HOST_PREFIX) + strlen(*name) >= DEV_NAME_SIZE)
		return cli_fail(s, -EINVAL, "name %s: host-%s would be longer than %d characters", *name, *name,
				DEV_NAME_SIZE - 1);
	return 0;
}

/* The rx-ring word, checked here so that a bad one is refused before the
 * barrier, with the same words as startup.conf's. */
static bool rx_ring_known(const char *w)
{
	for (int r = AFP_RX_RING_AUTO; r <= AFP_RX_RING_BLOCK; r++)
		if (!strcmp(w, afp_rx_ring_name((enum afp_rx_ring)r)))
			return true;
	return false;
}

/*
 * sluice> create host-interface name veth0 hw-addr 02:00:00:00:00:01
 * host-veth0 (index 3) created, admin down
 * sluice> create host-interface name veth1 rx-ring frame
 * host-veth1 (index 4) created, admin down
 *
 * rx-ring: as the interface's startup.conf key (af_packet_ring.c): frame
 * (TPACKET_V2, per-frame readiness), block (TPACKET_V3), auto (the
 * default: block for a queue in polling mode when the interface comes up,
 * frame otherwise).
 */
static int create_host_interface(struct cli_session *s, int argc, char **argv)
{
	const char *host = NULL, *hw = NULL, *ring = NULL;
	int rc = host_if_args(s, argc, argv, &host, &hw, &ring);
	if (rc)
		return rc;
	uint8_t mac[6];
	if (hw && (conf_mac_parse(hw, mac) || (mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5])))
		return cli_fail(s, -EINVAL, "hw-addr: expected a unicast MAC aa:bb:cc:dd:ee:ff, found '%s'", hw);
	if (ring && !rx_ring_known(ring))
		return cli_fail(s, -EINVAL, "rx-ring: expected frame, block or auto, found '%s'", ring);
	char name[DEV_NAME_SIZE];
	snprintf(name, sizeof(name), HOST_PREFIX "%s", host);
	const char *words[] = { "host-if", host, "rx-ring", ring };
	return dev_cli_create(s, name, "af-packet", words, ring ? 4 : 2, hw ? mac : NULL) ? 0 : -EINVAL;
}

/*
 * sluice> delete host-interface name veth0
 * host-veth0 deleted
 */
static int delete_host_interface(struct cli_session *s, int argc, char **argv)
{
	const char *host = NULL;
	int rc = host_if_args(s, argc, argv, &host, NULL, NULL);
	if (rc)
		return rc;
	char name[DEV_NAME_SIZE];
	snprintf(name, sizeof(name), HOST_PREFIX "%s", host);
	struct device *d = dev_by_name(name);
	if (!d || strcmp(d->driver->name, "af-packet"))
		return cli_fail(s, -EINVAL, "no host-interface %s (no af-packet interface %s)", host, name);
	return dev_cli_delete(s, d);
}

/* The rx-mode a queue has now, and whether its ring (chosen at start)
 * is the one auto would choose now: after `set interface rx-mode` the
 * queue keeps its ring until the interface next comes up. */
static const char *ring_note(struct device *d, uint16_t q, enum afp_rx_ring setting, const struct afp_rxq_info *i)
{
	if (!i->open || setting != AFP_RX_RING_AUTO)
		return "";
	bool polling = dev_rx_mode(d, q) == DEV_RX_MODE_POLLING;
	return polling != (i->ring == AFP_RX_RING_BLOCK) ? "kept since start" : "";
}

static cJSON *afp_json(struct device *d, const char *host_if, enum afp_rx_ring setting)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", d->name);
	cJSON_AddStringToObject(o, "host_if", host_if);
	cJSON_AddStringToObject(o, "rx_ring", afp_rx_ring_name(setting));
	cJSON *qs = cJSON_AddArrayToObject(o, "rx_queues");
	for (uint16_t q = 0; q < d->n_rx_queues; q++) {
		struct afp_rxq_info i;
		afp_rxq_info(d, q, &i);
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "queue", q);
		cJSON_AddStringToObject(e, "rx_mode", dev_rx_mode_name(dev_rx_mode(d, q)));
		if (i.open) {
			cJSON_AddStringToObject(e, "ring", afp_rx_ring_name(i.ring));
			cJSON_AddStringToObject(e, "tpacket", i.ring == AFP_RX_RING_FRAME ? "v2" : "v3");
			cJSON_AddNumberToObject(e, "slots", i.slots);
			cJSON_AddNumberToObject(e, "slot_size", i.slot_size);
		} else {
			cJSON_AddNullToObject(e, "ring");
		}
		cJSON_AddBoolToObject(e, "kept_since_start", *ring_note(d, q, setting, &i) != 0);
		cJSON_AddNumberToObject(e, "kernel_drops", (double)i.kernel_drops);
		cJSON_AddItemToArray(qs, e);
	}
	return o;
}

static void afp_rows(struct cli_table *t, struct device *d, const char *host_if, enum afp_rx_ring setting)
{
	for (uint16_t q = 0; q < d->n_rx_queues; q++) {
		struct afp_rxq_info i;
		afp_rxq_info(d, q, &i);
		cli_table_cell(t, "%s", d->name);
		cli_table_cell(t, "%s", host_if);
		cli_table_cell(t, "%s", afp_rx_ring_name(setting));
		cli_table_cell(t, "%u", q);
		cli_table_cell(t, "%s", dev_rx_mode_name(dev_rx_mode(d, q)));
		if (i.open)
			cli_table_cell(t, "%s (TPACKET_%s %u x %u)", afp_rx_ring_name(i.ring),
				       i.ring == AFP_RX_RING_FRAME ? "V2" : "V3", i.slots, i.slot_size);
		else
			cli_table_cell(t, "down");
		cli_table_cell(t, "%" PRIu64, i.kernel_drops);
		cli_table_cell(t, "%s", ring_note(d, q, setting, &i));
	}
}

/*
 * sluice> show af-packet
 * Interface   Host-if  Rx-ring  Queue  Mode     Ring                        Kernel-drops  Note
 * host-veth0  veth0    auto         0  polling  block (TPACKET_V3 32 x 131072)          0
 * host-veth1  veth1    frame        0  polling  frame (TPACKET_V2 2048 x 2048)          0
 * sluice> show af-packet host-veth1 json
 * {"interfaces": [{"name": "host-veth1", "host_if": "veth1", "rx_ring": "frame", "rx_queues": [{"queue": 0,
 *   "rx_mode": "polling", "ring": "frame", "tpacket": "v2", "slots": 2048, "slot_size": 2048,
 *   "kept_since_start": false, "kernel_drops": 0}]}]}
 *
 * Rx-ring: the interface's setting; Ring: the ring the queue has, chosen
 * when the interface came up ("down" while it is down). A queue of an
 * auto interface whose rx mode was changed since has the other ring than
 * auto would now choose: "kept since start" (it changes at the next up).
 */
static int show_af_packet(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	bool json = cli_take_flag(&argc, argv, "json");
	int rc = cli_opt_word_arg(s, argc, argv, "NAME", &name);
	if (rc)
		return rc;
	char host_if[IFNAMSIZ];
	enum afp_rx_ring setting;
	struct device *one = name ? dev_cli_need(s, name) : NULL;
	if (name && !one)
		return -EINVAL;
	if (one && !afp_dev_info(one, host_if, sizeof(host_if), &setting))
		return cli_fail(s, -EINVAL, "%s is not an af-packet interface", name);
	static const struct cli_table_col cols[] = {
		{ "Interface", false }, { "Host-if", false }, { "Rx-ring", false },	  { "Queue", true },
		{ "Mode", false },	{ "Ring", false },    { "Kernel-drops", true }, { "Note", false },
	};
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *list = json ? cJSON_AddArrayToObject(root, "interfaces") : NULL;
	struct cli_table *t = json ? NULL : cli_table_create(cols, ARRAY_LEN(cols));
	if (!json && !t)
		return cli_fail(s, -ENOMEM, "out of memory");
	struct device *d;
	DEV_FOREACH(d)
	{
		if ((one && d != one) || !afp_dev_info(d, host_if, sizeof(host_if), &setting))
			continue;
		if (json)
			cJSON_AddItemToArray(list, afp_json(d, host_if, setting));
		else
			afp_rows(t, d, host_if, setting);
	}
	if (json)
		cli_json_print(s, root);
	else
		cli_table_print(s, t);
	return 0;
}

CLI_COMMAND(create_host_interface_cmd, "create host-interface",
	    "create host-interface name X [hw-addr MAC] [rx-ring frame|block|auto]",
	    "Make af-packet interface host-X on Linux interface X (VPP's command)", create_host_interface)
CLI_COMMAND(delete_host_interface_cmd, "delete host-interface", "delete host-interface name X",
	    "Delete af-packet interface host-X (VPP's command)", delete_host_interface)
CLI_COMMAND(show_af_packet_cmd, "show af-packet", "show af-packet [NAME] [json]",
	    "af-packet interfaces: host-if, rx-ring setting, each rx queue's ring and kernel drops", show_af_packet)
