/* The stats segment: its layout (version 1) and the reader library.
 *
 * sluice publishes its counters in a shared-memory segment (a memfd) that
 * other processes map read-only; the daemon hands the segment's file
 * descriptor to whoever connects to its stats socket (SCM_RIGHTS). The
 * model is VPP's stats segment: a header, a directory of named entries and
 * their data, and an epoch/in-progress pair that lets a reader take a
 * consistent copy without any lock the writer (or the datapath) takes.
 * docs/stats-segment.md describes the layout, the names and the protocol.
 *
 * This header and base/statseg_reader.c depend on nothing of sluice but
 * libc: another program may copy them.
 *
 * Protocol. Every 64-bit word of the segment is read and written whole
 * (atomically). The writer changes the directory (names, shapes, offsets)
 * only between setting in_progress to 1 and bumping the epoch then setting
 * in_progress to 0; counter values change at any time, each word on its
 * own. A reader loads epoch, sees in_progress 0, copies what it needs, and
 * keeps the copy only when epoch and in_progress are unchanged afterwards;
 * else it starts again (statseg_snapshot does all of this).
 */
#ifndef SLUICE_BASE_STATSEG_H
#define SLUICE_BASE_STATSEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATSEG_MAGIC 0x4745535453435553ull /* "SUSCTSEG" little-endian */
#define STATSEG_VERSION 1
#define STATSEG_NAME_SIZE 128  /* an entry's name, NUL-padded */
#define STATSEG_LABEL_SIZE 64  /* one element of a name vector, NUL-padded */
#define STATSEG_DIM_NAME_SIZE 16
#define STATSEG_NO_LABELS UINT32_MAX

enum statseg_type {
	STATSEG_SCALAR_COUNTER = 1, /* one u64 that only goes up */
	STATSEG_SCALAR_GAUGE = 2,   /* one u64 that goes up and down */
	STATSEG_COUNTER_VECTOR = 3, /* dims[0] x dims[1] u64 counters */
	STATSEG_GAUGE_VECTOR = 4,   /* dims[0] x dims[1] u64 gauges */
	STATSEG_COMBINED_VECTOR = 5, /* dims[0] x dims[1] (packets, bytes) counter pairs */
	STATSEG_NAME_VECTOR = 6,    /* dims[0] labels of STATSEG_LABEL_SIZE bytes ("" = hole) */
};

/* At offset 0 of the segment. */
struct statseg_header {
	uint64_t magic;
	uint32_t version;      /* STATSEG_VERSION: readers refuse another */
	uint32_t entry_size;   /* sizeof(struct statseg_entry) */
	uint64_t size;         /* of the whole segment, bytes */
	uint64_t epoch;        /* bumped after every directory change */
	uint64_t in_progress;  /* 1 while the directory changes */
	uint64_t dir_offset;   /* of entry 0, from the segment's start */
	uint64_t n_entries;
	uint64_t updates;      /* copy passes done: the values are that fresh */
	uint64_t update_ns;    /* CLOCK_REALTIME of the last pass */
	uint64_t interval_ns;  /* between passes */
	uint64_t writer_pid;
	uint64_t reserved[5];
};
_Static_assert(sizeof(struct statseg_header) == 128, "the header is two cache lines");

/* One directory entry. Element [i][j] of a vector is at
 * offset + (i * dims[1] + j) * element size, from the segment's start
 * (8 bytes; 16 for combined: packets then bytes). dim_labels[k] is the index
 * of the name vector whose element i names index i of dimension k, or
 * STATSEG_NO_LABELS when the index is the label (a queue). A row whose
 * dimension-0 label is "" is a hole (no such interface). */
struct statseg_entry {
	char name[STATSEG_NAME_SIZE];
	uint32_t type; /* enum statseg_type */
	uint32_t dims[2]; /* scalars: 1 x 1; name vectors: n x 1 */
	uint32_t dim_labels[2];
	char dim_names[2][STATSEG_DIM_NAME_SIZE]; /* "interface", "queue", "thread", "node"; "" */
	uint32_t row_lengths; /* a gauge vector whose element i is how many of row i's
			       * dims[1] columns exist (an interface's queues), or
			       * STATSEG_NO_LABELS: all of them */
	uint64_t offset;
};
_Static_assert(sizeof(struct statseg_entry) == 192, "entries are 192 bytes");

/* ---- reader library ---- */

struct statseg_client {
	const uint8_t *base; /* mapped PROT_READ */
	size_t size;
	int fd;
};

/* Connect to the daemon's stats socket, receive the segment's descriptor
 * and map it read-only. 0, or a negative errno with the reason in err. The
 * connection ends once the descriptor is received. */
int statseg_connect(struct statseg_client *c, const char *socket_path, char *err, size_t errlen);

/* Map a segment descriptor read-only (what statseg_connect does after
 * receiving it). The descriptor stays the client's. */
int statseg_map_fd(struct statseg_client *c, int fd, char *err, size_t errlen);

void statseg_disconnect(struct statseg_client *c);

/* One entry as copied: its directory entry and its values. */
struct statseg_value {
	struct statseg_entry e;
	uint64_t *v;    /* dims[0] * dims[1] words (x2 for combined); NULL for name vectors */
	char (*labels)[STATSEG_LABEL_SIZE]; /* name vectors: dims[0] labels */
	uint32_t dir_index; /* in the directory */
	bool matched;       /* false: copied only for another entry's labels */
};

/* A consistent copy of the entries whose names `match` accepts (NULL: all)
 * and of every name vector they refer to. */
struct statseg_snapshot {
	uint64_t epoch, updates, update_ns, interval_ns;
	uint32_t n;
	struct statseg_value *vals;
};

typedef bool(statseg_match_fn)(const char *name, void *arg);

/* Take a snapshot; retries while the directory changes (at most
 * max_tries times, then -EAGAIN). 0, or a negative errno with the reason in
 * err (-EPROTO: not a segment of this version). */
int statseg_snapshot(const struct statseg_client *c, statseg_match_fn *match, void *arg, uint32_t max_tries,
		     struct statseg_snapshot *s, char *err, size_t errlen);

void statseg_snapshot_free(struct statseg_snapshot *s);

/* The label of index i of dimension k of value v in snapshot s: a name
 * vector's element, or NULL when the dimension has no names. */
const char *statseg_label(const struct statseg_snapshot *s, const struct statseg_value *v, unsigned k, uint32_t i);

/* How many columns row i of v has (its row_lengths, else dims[1]); 0 for a
 * hole (a row whose label is ""). */
uint32_t statseg_row_length(const struct statseg_snapshot *s, const struct statseg_value *v, uint32_t i);

/* "counter", "gauge", "counter-vector", ... */
const char *statseg_type_name(uint32_t type);

/* Words per element: 2 for combined vectors, else 1. */
static inline uint32_t statseg_elem_words(uint32_t type)
{
	return type == STATSEG_COMBINED_VECTOR ? 2 : 1;
}

#endif
