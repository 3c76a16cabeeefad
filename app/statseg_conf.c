/* statseg { socket-name PATH size BYTES update-interval DURATION }: the
 * stats segment's configuration (app/statseg.h, docs/stats-segment.md). */
#include <errno.h>
#include <stdio.h>

#include "app/statseg.h"

static const struct conf_key statseg_keys[] = {
	{ .name = "socket-name", .type = CONF_STRING, CONF_FIELD(struct statseg_conf, socket_name),
	  .doc = "unix socket handing readers the segment (default: stats.sock beside the CLI socket)" },
	{ .name = "size", .type = CONF_SIZE, .def = "32M", .min = 64 * 1024, .max = 1ull << 30,
	  CONF_FIELD(struct statseg_conf, size), .doc = "bytes of the shared-memory segment" },
	{ .name = "update-interval", .type = CONF_DURATION, .def = "100ms", .min = 1000000, .max = 60000000000ull,
	  CONF_FIELD(struct statseg_conf, interval_ns), .doc = "how often the counters are copied into the segment" },
	{ 0 },
};

/* The socket is a unix socket only: the segment is shared memory. */
static int statseg_check(void *obj, struct conf_check *chk)
{
	const struct statseg_conf *c = obj;
	if (c->socket_name[0] && c->socket_name[0] != '/' && c->socket_name[0] != '.') {
		chk->key = "socket-name";
		snprintf(chk->msg, sizeof(chk->msg), "expected a unix socket path (starting with / or .)");
		return -EINVAL;
	}
	return 0;
}

const struct conf_section statseg_conf_section = {
	.name = "statseg",
	.doc = "the stats segment: counters other processes map read-only (sluice-stats)",
	.size = sizeof(struct statseg_conf),
	.keys = statseg_keys,
	.check = statseg_check,
};
