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
