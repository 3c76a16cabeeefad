/* The event log (VPP's elog): per-thread rings of fixed-size, timestamped
 * events, read from the CLI and saved as Chrome Trace Event JSON.
 *
 * One ring ("track") per datapath thread, indexed by graph thread index, and
 * one control track for every other thread (CLI sessions, the watchdog, the
 * stats segment's thread). A thread binds itself to its track once
 * (elog_thread_bind); a thread that never bound logs to the control track.
 *
 * Writers: a track has one writer. A datapath track's writer is its thread,
 * which logs with a few stores and no lock, allocation or syscall (the
 * bench: bench/elog). The control track is shared by control threads, so
 * its writers take a mutex (none of them is a datapath thread).
 *
 * Readers copy a track without stopping its writer (elog_track_copy): the
 * writer publishes its head after each event, and the copy drops what the
 * writer may have overwritten meanwhile (a sequence check, as a seqlock
 * reader retries). Reading under the barrier instead would hold every
 * datapath thread for the copy and could not cover the control track.
 *
 * Strings (interface names, commands, error reasons) are interned on the
 * control path (elog_string) and logged as 32-bit ids.
 *
 * Event types are static descriptors registered before main()
 * (ELOG_TYPE_REGISTER): what the event is called and what its arguments
 * are, so that the log itself stays 32 bytes an event.
 */
#ifndef SLUICE_BASE_ELOG_H
#define SLUICE_BASE_ELOG_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"

#define ELOG_MAX_TRACKS 65                    /* 64 datapath threads and the control track */
#define ELOG_TRACK_CONTROL (ELOG_MAX_TRACKS - 1)
#define ELOG_SIZE_DEFAULT 4096                /* events per track */
#define ELOG_SIZE_MIN 16
#define ELOG_SIZE_MAX (1u << 20)
#define ELOG_MAX_TYPES 64
#define ELOG_NAME_SIZE 32

/* What an argument holds, for printing. */
enum elog_arg_kind {
	ELOG_ARG_NONE = 0,
	ELOG_ARG_UINT,  /* a number */
	ELOG_ARG_INT,   /* a signed number (an errno, say) */
	ELOG_ARG_STR,   /* an elog_string id */
	ELOG_ARG_TICKS, /* cycle-counter ticks, printed as nanoseconds */
};

/* An event type. Arguments are a (32 bits), b and c (64 bits); a duration
 * type's c is its length in ticks and it has no third argument. */
struct elog_type {
	const char *name;     /* "barrier", "cli": the event's name in the file */
	const char *category; /* "graph", "cli", "interface": its "cat" */
	bool duration;        /* a span (ts, dur): Trace Event "X"; else an instant "i" */
	const char *arg_name[3];
	enum elog_arg_kind arg_kind[3];
	uint16_t id;          /* set by registration */
};

/* One event: 32 bytes, two to a cache line. */
struct elog_event {
	uint64_t ticks; /* cpu_ticks() when it happened (a duration: when it began) */
	uint16_t type;
	uint16_t track;
	uint32_t a;
	uint64_t b;
	uint64_t c;
};
_Static_assert(sizeof(struct elog_event) == 32, "an event is 32 bytes");

struct elog_ring {
	alignas(64) uint64_t head; /* events ever written; the writer's alone */
	uint64_t clear_from;       /* `event-logger clear`: readers skip events before it */
	uint32_t mask;             /* size - 1, size a power of two */
	uint16_t track;
	struct elog_event *ev;
};

extern __thread struct elog_ring *elog_self;

/* Register t (constructors: ELOG_TYPE_REGISTER). */
void elog_type_register(struct elog_type *t);
#define ELOG_TYPE_REGISTER(t)                                                                  \
	static void __attribute__((constructor)) elog_type_register_##t(void)                  \
	{                                                                                      \
		elog_type_register(&(t));                                                      \
	}

/* The type with this id, or NULL. */
const struct elog_type *elog_type_get(uint16_t id);

/* Events per track new tracks get (rounded up to a power of two, clamped to
 * ELOG_SIZE_MIN..ELOG_SIZE_MAX). Existing tracks of another size are made
 * anew at their next elog_track_register, empty. The first call (or the
 * first track) also fixes the log's epoch, time 0 of what it shows. */
void elog_set_size(uint32_t n_events);
uint32_t elog_size(void);

/* Make (or keep) the ring of track and name it ("main", "worker 0"). The
 * control track exists from the first use. A ring whose size differs from
 * elog_size() is replaced: call it while the track has no writer and no
 * reader (thread creation, start-up). Returns 0 or -ENOMEM/-EINVAL. */
int elog_track_register(uint32_t track, const char *name);

/* Log from the calling thread into track's ring from now on (the thread
 * must be the track's only writer). ELOG_TRACK_CONTROL or an unregistered
 * track: the shared control track. */
void elog_thread_bind(uint32_t track);

/* The track's name ("" when it has no ring). */
const char *elog_track_name(uint32_t track);

/* Intern s: the same id for the same text. Control path (a mutex, and a
 * copy the first time). 0 when out of memory, which elog_string_get prints
 * as "?". */
uint32_t elog_string(const char *s);
/* The text of an id; valid for the life of the process. */
const char *elog_string_get(uint32_t id);

/* The control track's writer (any thread not bound to a track). */
void elog_log_control(const struct elog_type *t, uint64_t ticks, uint32_t a, uint64_t b, uint64_t c);

static inline void elog_ring_put(struct elog_ring *r, const struct elog_type *t, uint64_t ticks, uint32_t a,
				 uint64_t b, uint64_t c)
{
	uint64_t h = r->head;
	struct elog_event *e = &r->ev[h & r->mask];
	/* A reader that sees any store below also sees head == h at least
	 * (fence-to-fence ordering), and so knows this slot is being rewritten.
	 * On x86 the fence is a compiler barrier. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->ticks, ticks, __ATOMIC_RELAXED);
	__atomic_store_n(&e->type, t->id, __ATOMIC_RELAXED);
	__atomic_store_n(&e->track, r->track, __ATOMIC_RELAXED);
	__atomic_store_n(&e->a, a, __ATOMIC_RELAXED);
	__atomic_store_n(&e->b, b, __ATOMIC_RELAXED);
	__atomic_store_n(&e->c, c, __ATOMIC_RELAXED);
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
}

/* Log an instant event now. */
static inline void elog_log(const struct elog_type *t, uint32_t a, uint64_t b, uint64_t c)
{
	struct elog_ring *r = elog_self;
	if (likely(r))
		elog_ring_put(r, t, cpu_ticks(), a, b, c);
	else
		elog_log_control(t, cpu_ticks(), a, b, c);
}

/* Log a duration event that began at start (cpu_ticks()) and ends now. */
static inline void elog_duration(const struct elog_type *t, uint64_t start, uint32_t a, uint64_t b)
{
	uint64_t now = cpu_ticks();
	uint64_t dur = (int64_t)(now - start) > 0 ? now - start : 0;
	struct elog_ring *r = elog_self;
	if (likely(r))
		elog_ring_put(r, t, start, a, b, dur);
	else
		elog_log_control(t, start, a, b, dur);
}

/* Copy the newest events of track (at most max and at most size - 1,
 * oldest first, none from before the last elog_clear) into out, without
 * stopping its writer. Returns the count. */
uint32_t elog_track_copy(uint32_t track, struct elog_event *out, uint32_t max);

/* Events the track holds now (what elog_track_copy would return at most). */
uint32_t elog_track_count(uint32_t track);

/* Forget every event logged so far, on every track (control path). */
void elog_clear(void);

/* ns since the log's epoch (its first use) for an event's ticks. */
double elog_ticks_to_ns(uint64_t ticks);
/* ns for a tick count. */
double elog_ticks_ns(uint64_t ticks);

/* The value of argument i (0..2) of e, as its type says to print it: a
 * string's text in *str, else a number in *num (ticks as ns). Returns the
 * kind. */
enum elog_arg_kind elog_arg(const struct elog_event *e, uint32_t i, uint64_t *num, const char **str);

#endif
