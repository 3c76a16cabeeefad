/* linux-cp { default-netns NAME  route-table N  netlink-rx-buffer BYTES  netlink-hold-entries N
 *   netlink-hold-cpu DURATION  netlink-hold-priority on|off  PORT { host-if NAME  netns NAME } }:
 * pairs made at start-up, once the graph runs (lcp_conf_apply). The
 * parser holds host-if to 15 characters (the field's size, IFNAMSIZ);
 * a port or namespace that does not exist is found when the pair is
 * made, and named with the section and port. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nodes/lcp/lcp_conf.h"
#include "nodes/lcp/lcp_nl.h"

static const struct conf_key lcp_pair_keys[] = {
	{ .name = "host-if", .type = CONF_STRING, CONF_FIELD(struct lcp_conf_pair, host_if),
	  .doc = "name of the Linux TAP mirroring the port (15 characters at most)" },
	{ .name = "netns", .type = CONF_STRING, CONF_FIELD(struct lcp_conf_pair, netns),
	  .doc = "namespace of the TAP (default: default-netns)" },
	{ 0 },
};

static int pair_check(void *obj, struct conf_check *chk)
{
	const struct lcp_conf_pair *p = obj;
	if (!p->host_if[0]) {
		snprintf(chk->msg, sizeof(chk->msg), "expected host-if NAME (the Linux TAP mirroring the port)");
		return -EINVAL;
	}
	return 0;
}

static const struct conf_block lcp_block = {
	.what = "interface",
	.keys = lcp_pair_keys,
	.elem_size = sizeof(struct lcp_conf_pair),
	.array_offset = offsetof(struct lcp_conf, pairs),
	.count_offset = offsetof(struct lcp_conf, n_pairs),
	.max = DEV_MAX,
	.name_offset = offsetof(struct lcp_conf_pair, port),
	.name_size = sizeof(((struct lcp_conf_pair *)0)->port),
	.check = pair_check,
};

static const struct conf_key lcp_keys[] = {
	{ .name = "default-netns", .type = CONF_STRING, CONF_FIELD(struct lcp_conf, default_netns),
	  .doc = "namespace of TAPs whose pair names none (VPP's `default netns`)" },
	{ .name = "route-table", .type = CONF_UINT, CONF_FIELD(struct lcp_conf, route_table), .def = "0",
	  .min = 0, .max = 0xfffffffe,
	  .doc = "Linux routing table mirrored beside main (254); 0: main only" },
	{ .name = "netlink-rx-buffer", .type = CONF_UINT, CONF_FIELD(struct lcp_conf, rx_buffer), .def = "67108864",
	  .min = 4096, .max = 1u << 30,
	  .doc = "the netlink socket's receive buffer in bytes (SO_RCVBUFFORCE; VPP's linux-nl rx-buffer-size)" },
	{ .name = "netlink-hold-entries", .type = CONF_UINT, CONF_FIELD(struct lcp_conf, hold_entries), .def = "1024",
	  .min = 1, .max = 65536, .doc = "netlink messages applied per barrier hold at most (docs/lcp.md, Holds)" },
	{ .name = "netlink-hold-cpu", .type = CONF_DURATION, CONF_FIELD(struct lcp_conf, hold_cpu), .def = "500us",
	  .min = 10000, .max = 100000000, .doc = "the listener's own CPU time per barrier hold, about" },
	{ .name = "netlink-hold-priority", .type = CONF_BOOL, CONF_FIELD(struct lcp_conf, hold_priority), .def = "on",
	  .doc = "SCHED_FIFO while the listener holds the barrier (root; refused quietly, counted, otherwise)" },
	{ 0 },
};

const struct conf_section lcp_conf_section = {
	.name = "linux-cp",
	.doc = "ports mirrored into Linux as TAPs: PORT { host-if NAME [netns NS] }",
	.size = sizeof(struct lcp_conf),
	.keys = lcp_keys,
	.block = &lcp_block,
};

int lcp_conf_apply(const struct lcp_conf *c, char *err, size_t errlen)
{
	char why[CONF_MSG_SIZE];
	int rc = lcp_set_default_netns(c->default_netns, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "default-netns: %s", why);
		return rc;
	}
	lcp_nl_route_table = c->route_table;
	lcp_nl_rx_buffer = c->rx_buffer;
	lcp_nl_hold_entries = c->hold_entries;
	lcp_nl_hold_cpu_ns = c->hold_cpu;
	lcp_nl_hold_raise = c->hold_priority;
	for (uint32_t i = 0; i < c->n_pairs; i++) {
		const struct lcp_conf_pair *p = &c->pairs[i];
		rc = lcp_create(p->port, p->host_if, p->netns, why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "%s: %s", p->port, why);
			return rc;
		}
	}
	return 0;
}
