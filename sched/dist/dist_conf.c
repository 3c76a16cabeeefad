/* The `distributor` startup.conf section, read through one key table:
 *
 *   distributor { enable  backlog 8  ring-lines 64 }
 *
 *   enable          the main thread becomes the rx thread and hands every
 *                   received packet to the workers (needs cpu workers)
 *   backlog N       packets held per worker while its ring is full (1-4096,
 *                   rounded up to a multiple of 8; default 8)
 *   ring-lines N    lines of 8 packets in each worker's handoff ring (1-1024,
 *                   rounded up to a power of two; default 64; 1: one line in
 *                   flight per worker at a time, the depth of DPDK's burst
 *                   distributor)
 */
#include "base/conf.h"
#include "sched/dist/dist.h"

static const struct conf_key dist_keys[] = {
	{ .name = "enable", .type = CONF_FLAG, CONF_FIELD(struct dist_conf, enable),
	  .doc = "hand every received packet from the main thread to the workers" },
	{ .name = "backlog", .type = CONF_UINT, .def = "8", .min = 1, .max = DIST_BACKLOG_MAX,
	  CONF_FIELD(struct dist_conf, backlog), .doc = "packets held per worker while its ring is full" },
	{ .name = "ring-lines", .type = CONF_UINT, .def = "64", .min = 1, .max = DIST_RING_LINES_MAX,
	  CONF_FIELD(struct dist_conf, ring_lines), .doc = "lines of 8 packets in each worker's handoff ring" },
	{ 0 },
};

const struct conf_section dist_conf_section = {
	.name = "distributor",
	.doc = "flow-pinning distribution from the main thread to the workers",
	.size = sizeof(struct dist_conf),
	.keys = dist_keys,
};
