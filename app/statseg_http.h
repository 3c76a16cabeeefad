/* The Prometheus / OpenMetrics endpoint: `statseg { prometheus
 * 127.0.0.1:9482 }` serves GET /metrics from a libmicrohttpd thread of its
 * own (never a datapath thread). Each request takes a snapshot of the stats
 * segment through the reader library (base/statseg.h), from the daemon's
 * own read-only mapping, exactly as an outside reader does: it takes no
 * lock the datapath or the CLI takes, and the datapath never waits for it.
 * The text is base/statseg_metrics.h's; docs/stats-segment.md has the
 * names. */
#ifndef SLUICE_APP_STATSEG_HTTP_H
#define SLUICE_APP_STATSEG_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "app/statseg.h"

struct graph_cpu_config;

/* "127.0.0.1:9482", "[::1]:9482", "localhost:9482" (numeric hosts only,
 * else localhost) into a socket address. 0, or -EINVAL with what was
 * expected in err. (app/statseg_conf.c: --check uses it.) */
int statseg_http_parse(const char *listen, struct sockaddr_storage *a, char *err, size_t errlen);

/* Start the endpoint when conf->prometheus is set (else do nothing and
 * return 0), serving what the segment descriptor segment_fd holds (the
 * read-only one readers get; it is duplicated). Its thread runs on the
 * online CPUs that cpu gives no datapath thread (all of them when none is
 * left). 0, or a negative errno with the reason in err. */
int statseg_http_start(const struct statseg_conf *conf, const struct graph_cpu_config *cpu, int segment_fd,
		       char *err, size_t errlen);

/* Stop the thread and unmap; safe when it never started. */
void statseg_http_stop(void);

#endif
