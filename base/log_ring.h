/* The log ring: the last log lines in memory, for `show logging` (VPP's
 * command). base_log puts every line it prints here as well (base/log.c).
 *
 * Bounded: a fixed array of LOG_RING_SIZE entries allocated with the ring;
 * the oldest line is overwritten when it is full and counted as lost to the
 * ring. Lines longer than LOG_RING_TEXT bytes are cut and flagged.
 *
 * Locking: one mutex per ring, held for one entry's copy by a writer and
 * for the copy of the entries a reader asks for. Logging is a control-plane
 * act (base_log already takes a lock and writes stderr): the datapath only
 * logs on its rare failure paths, never per packet.
 */
#ifndef SLUICE_BASE_LOG_RING_H
#define SLUICE_BASE_LOG_RING_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define LOG_RING_SIZE 1024     /* lines the process's ring keeps */
#define LOG_RING_SUBSYSTEM 24  /* bytes of the subsystem's name, NUL included */
#define LOG_RING_TEXT 232      /* bytes of the message, NUL included */

struct log_ring_entry {
	uint64_t seq;     /* 1, 2, ...: the line's number since start or the last clear */
	uint64_t time_ns; /* CLOCK_REALTIME when it was logged */
	bool cut;         /* the message was longer than LOG_RING_TEXT - 1 bytes */
	char subsystem[LOG_RING_SUBSYSTEM];
	char text[LOG_RING_TEXT];
};

struct log_ring {
	pthread_mutex_t lock;
	struct log_ring_entry *entries;
	uint32_t size;     /* entries */
	uint64_t next_seq; /* the seq the next line gets */
	uint64_t first;    /* the oldest seq still held (next_seq when empty) */
	uint64_t lines;       /* put since init: never lowered, clear included */
	uint64_t overwritten; /* held lines a put overwrote, since init */
};

/* A ring over size entries of storage (size > 0); 0, or -ENOMEM. */
int log_ring_init(struct log_ring *r, uint32_t size);
void log_ring_free(struct log_ring *r);

/* Add a line stamped now. Any thread. */
void log_ring_put(struct log_ring *r, const char *subsystem, const char *text);

/* Copy, oldest first, the lines with seq >= from still held, at most max
 * of them (the newest max when more are held), into out. Returns the count;
 * *lost (when not NULL) gets the lines before the first one copied that
 * the ring no longer holds (overwritten, not cleared). Any thread. */
uint32_t log_ring_read(struct log_ring *r, uint64_t from, struct log_ring_entry *out, uint32_t max,
		       uint64_t *lost);

/* Lines put and held lines overwritten since init, for the stats segment
 * (/log/lines, /log/overwritten): they only go up. Any thread. */
void log_ring_counters(struct log_ring *r, uint64_t *lines, uint64_t *overwritten);

/* Forget every line; numbering starts again at 1 and nothing counts as lost. */
void log_ring_clear(struct log_ring *r);

/* The process's ring base_log writes into (LOG_RING_SIZE lines); NULL only
 * when its storage could not be allocated at start. */
struct log_ring *base_log_ring(void);

#endif
