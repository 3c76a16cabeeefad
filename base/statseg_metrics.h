/* A stats segment snapshot (base/statseg.h) as Prometheus metrics: the
 * text exposition format 0.0.4 and OpenMetrics 1.0 text. The daemon's
 * /metrics endpoint (app/statseg_http.c) and `sluice-stats metrics` both
 * print what statseg_metrics_format() returns. libc only, like the reader.
 *
 * The mapping is generic, so that an entry added to the segment later is
 * exported without a change here: an entry `/a/b-c` becomes the family
 * `sluice_a_b_c` (characters outside [a-zA-Z0-9_] become '_'; the prefixes
 * /if/, /sys/threads/ and /dist/ read interface_, thread_, distributor_),
 * a counter's samples end in `_total`, a combined vector is two families
 * (`..._packets_total`, `..._bytes_total`), and each vector dimension is a
 * label named by the entry's dim_names ("interface", "queue", "node",
 * "worker", "thread"). A thread's label is its graph index as a string
 * ("0" is the main thread), as the examples have it; the names are
 * in `sluice_thread_info{thread,name}`. A few entries have names of their
 * own (/err/ is one family with node and reason labels, /buffer/ pools are
 * `sluice_buffers{pool,state}`); docs/stats-segment.md has the table.
 *
 * References: Prometheus "Exposition formats" (text format 0.0.4) and the
 * OpenMetrics 1.0 specification (github.com/OpenObservability/OpenMetrics,
 * specification/OpenMetrics.md).
 */
#ifndef SLUICE_BASE_STATSEG_METRICS_H
#define SLUICE_BASE_STATSEG_METRICS_H

#include <stddef.h>

#include "base/statseg.h"

enum statseg_metrics_format {
	STATSEG_METRICS_TEXT,        /* Prometheus text 0.0.4 */
	STATSEG_METRICS_OPENMETRICS, /* OpenMetrics 1.0.0 text */
};

#define STATSEG_METRICS_TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define STATSEG_METRICS_OPENMETRICS_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* The format an HTTP Accept header asks for: OpenMetrics when it lists
 * application/openmetrics-text with a quality above 0 and at least that of
 * any text/plain (or wildcard) range; else (no header too) text 0.0.4. */
enum statseg_metrics_format statseg_metrics_negotiate(const char *accept);

/* The Content-Type of a format. */
const char *statseg_metrics_content_type(enum statseg_metrics_format f);

/* The whole exposition of snapshot s (every matched entry; take it with a
 * NULL match) plus sluice_build_info{version}. *out is malloc'd text of
 * *len bytes (NUL-terminated too); 0, or -ENOMEM. */
int statseg_metrics_format(const struct statseg_snapshot *s, enum statseg_metrics_format f, const char *version,
			   char **out, size_t *len);

#endif
