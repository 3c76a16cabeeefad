/* startup.conf's linux-cp section (lcp_conf.c): the pairs made at start. */
#ifndef SLUICE_NODES_LCP_CONF_H
#define SLUICE_NODES_LCP_CONF_H

#include "base/conf.h"
#include "nodes/lcp/lcp.h"

struct lcp_conf_pair {
	char port[CONF_NAME_SIZE];
	char host_if[TAP_IFNAME_SIZE];
	char netns[TAP_NETNS_SIZE];
};

struct lcp_conf {
	char default_netns[TAP_NETNS_SIZE];
	uint32_t route_table; /* the netlink listener's table beside main; 0: none */
	uint32_t rx_buffer;   /* the netlink socket's receive buffer, bytes */
	uint32_t hold_entries; /* messages per barrier hold at most */
	uint64_t hold_cpu;    /* the listener's CPU per hold, ns */
	bool hold_priority;   /* SCHED_FIFO while holding */
	uint32_t n_pairs;
	struct lcp_conf_pair pairs[DEV_MAX];
};

extern const struct conf_section lcp_conf_section;

/* Set the default namespace and make every pair, in file order, once the
 * interfaces exist and the graph runs. 0, or the first failure with the
 * port and reason in err (the pairs made before it stay). */
int lcp_conf_apply(const struct lcp_conf *c, char *err, size_t errlen);

#endif
