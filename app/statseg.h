/* The stats segment's writer: the daemon's side of base/statseg.h.
 *
 * A control thread of its own (never a datapath thread) owns the segment:
 * every `update-interval` it takes the CLI's command lock (so that no
 * interface, node or thread comes or goes meanwhile), rebuilds the
 * directory when the set of interfaces, nodes, errors, threads or pools
 * changed (in_progress, then a new epoch), and copies the counters the
 * datapath already keeps into the segment. The datapath does nothing new:
 * no store, no branch per packet. Between passes the thread waits on its
 * socket and hands the segment's descriptor (read-only) to each reader that
 * connects. docs/stats-segment.md has the layout and the names.
 */
#ifndef SLUICE_APP_STATSEG_H
#define SLUICE_APP_STATSEG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/conf.h"

struct graph;

/* statseg { ... } */
struct statseg_conf {
	char socket_name[256]; /* "": stats.sock in the CLI socket's directory */
	uint64_t size;         /* bytes of the segment */
	uint64_t interval_ns;  /* between copy passes */
	char prometheus[80];   /* HOST:PORT of the /metrics endpoint; "": none (app/statseg_http.h) */
	bool prometheus_allow_remote; /* a non-loopback HOST is refused without it */
};
extern const struct conf_section statseg_conf_section;

struct statseg_start_config {
	const struct statseg_conf *conf;
	const char *cli_listen; /* for the default socket's directory */
	mode_t socket_mode;     /* the CLI socket's rules: unix { cli-mode cli-group } */
	const char *socket_group;
	struct graph *g;
};

/* The socket path the configuration means (socket-name, or stats.sock
 * beside a unix CLI socket, or the build's default). */
void statseg_socket_path(const struct statseg_start_config *c, char *buf, size_t len);

/* Create the segment, fill it once, listen and start the thread. 0, or a
 * negative errno with the reason in err. Once per process. */
int statseg_start(const struct statseg_start_config *c, char *err, size_t errlen);

/* Stop the thread, close the socket (and remove it), unmap the segment.
 * Safe when it never started. Before the interfaces and the graph go. */
void statseg_stop(void);

/* `show statistics segment`: the segment as the writer last left it. */
struct statseg_status {
	char socket[PATH_MAX]; /* where readers get it */
	uint64_t size;      /* bytes mapped */
	uint64_t used;      /* header, directory and data of the current layout */
	uint64_t n_entries; /* directory entries */
	uint64_t epoch;     /* directory changes since start (+1) */
	uint64_t updates;   /* copy passes */
	uint64_t update_ns; /* CLOCK_REALTIME of the last pass */
	uint64_t interval_ns;
	uint64_t readers;   /* descriptors handed out since start (a reader keeps its mapping) */
	bool directory_full; /* the last layout did not fit: the segment is empty */
};

/* Fill st under the CLI's command lock (the writer's passes take it too).
 * 0, or -ENOENT when the segment was not started. */
int statseg_status(struct statseg_status *st);

/* The read-only segment descriptor readers get (app/statseg_http.c maps
 * it); -1 when not started. */
int statseg_reader_fd(void);

/* ---- counters of a subsystem or a plugin (app/statseg_counters.c) ----
 *
 * A provider names a table: rows it names at each pass, columns fixed at
 * registration, a u64 per cell. The segment gets PREFIX/names (a name
 * vector of the rows, dimension row_dim) and PREFIX/COLUMN for each
 * column (a counter or gauge vector labelled by those names). The writer
 * calls collect once per pass on its own thread, under the CLI command
 * lock (no command, no interface or thread change meanwhile), never under
 * the barrier: collect reads words the datapath stores atomically (relaxed
 * stores of its counters, a release store of whatever makes a row exist)
 * with the matching loads, and must not block. When the rows' number or
 * names change the directory is rebuilt (a new epoch); otherwise only the
 * values are copied. With no rows the entries are absent. */
#define STATSEG_COUNTERS_MAX 16        /* providers */
#define STATSEG_COUNTERS_MAX_COLUMNS 8 /* columns of one provider */

struct statseg_rows; /* the rows of one pass, filled by collect */

struct statseg_counters {
	const char *prefix;  /* "/plugins/NAME/...": '/'-separated [a-z0-9_-] words, < 100 bytes */
	const char *row_dim; /* what a row is ("flow"): [a-z0-9_-], < 16 bytes */
	uint32_t n_columns;  /* 1 .. STATSEG_COUNTERS_MAX_COLUMNS */
	const char *const *columns; /* their names: [a-z0-9_-], unique, not "names" */
	bool gauges;         /* values go up and down (default: counters, that only go up) */
	void (*collect)(struct graph *g, struct statseg_rows *rows);
};

/* Register a provider (c must outlive the process: a static), before
 * the segment starts: from a constructor, a plugin's init or a
 * subsystem's set-up. 0, or -EBUSY (the segment's thread runs), -EINVAL (a name breaks the rules above, or the prefix is another
 * provider's, inside it, or a built-in one: /sys /timers /if /node /err
 * /buffer /dist /sched /cli /log /lcp) or -ENOSPC (table full), with the
 * reason in err. */
int statseg_counters_register(const struct statseg_counters *c, char *err, size_t errlen);

/* A plugin's way (static struct statseg_counters x = {...};
 * STATSEG_COUNTERS_REGISTER(x)): a constructor, whose refusal the plugin
 * loader reports with the plugin's path (statseg_counters_refused). */
#define STATSEG_COUNTERS_REGISTER(c)                                                           \
	static void __attribute__((constructor)) statseg_counters_register_##c(void)           \
	{                                                                                      \
		statseg_counters_register_ctor(&(c));                                          \
	}
void statseg_counters_register_ctor(const struct statseg_counters *c);
/* Constructor registrations refused so far; *why (if not NULL) the last
 * reason. */
uint32_t statseg_counters_refused(const char **why);

/* Inside collect: one row, its name (< 64 bytes, unique among the rows)
 * and n_columns values. 0, or -ENOMEM (the row is left out). */
int statseg_rows_add(struct statseg_rows *rows, const char *name, const uint64_t *values);

/* ---- the segment itself (app/statseg.c), for the thread and tests ---- */

struct statseg_writer;

/* A segment of `size` bytes in a memfd. NULL with the reason in err. */
struct statseg_writer *statseg_writer_create(size_t size, uint64_t interval_ns, char *err, size_t errlen);
void statseg_writer_free(struct statseg_writer *w);

/* One pass: rebuild the directory if what g and the interface table hold
 * changed, then copy every counter. The caller holds the CLI command lock
 * (or is the only control thread). 0, or -ENOSPC when the directory does
 * not fit (the segment is then left empty and a line logged once). */
int statseg_writer_update(struct statseg_writer *w, struct graph *g);

/* A descriptor of the segment that maps read-only only (O_RDONLY through
 * /proc/self/fd), for a reader; the caller closes it. -errno on failure. */
int statseg_writer_reader_fd(const struct statseg_writer *w);

#endif
