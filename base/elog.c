/* The event log's rings, string table and type registry (base/elog.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/elog.h"

__thread struct elog_ring *elog_self;

static struct {
	pthread_mutex_t lock; /* tracks' creation and the control track's writers */
	struct elog_ring *ring[ELOG_MAX_TRACKS];
	char name[ELOG_MAX_TRACKS][ELOG_NAME_SIZE];
	uint32_t size;
	uint64_t epoch;
	double ticks_per_ns;
	const struct elog_type *types[ELOG_MAX_TYPES];
	uint16_t n_types;
} elog = { .lock = PTHREAD_MUTEX_INITIALIZER, .size = ELOG_SIZE_DEFAULT };

/* ---- types ---- */

void elog_type_register(struct elog_type *t)
{
	pthread_mutex_lock(&elog.lock);
	/* Id 0 is no type: a zeroed slot is not mistaken for an event. */
	if (elog.n_types + 1u < ELOG_MAX_TYPES) {
		t->id = ++elog.n_types;
		elog.types[t->id] = t;
	} else {
		fprintf(stderr, "sluice: elog: more than %d event types; '%s' is not logged\n", ELOG_MAX_TYPES - 1,
			t->name);
	}
	pthread_mutex_unlock(&elog.lock);
}

const struct elog_type *elog_type_get(uint16_t id)
{
	return id < ELOG_MAX_TYPES ? elog.types[id] : NULL;
}

/* ---- tracks ---- */

static uint32_t pow2_clamp(uint32_t n)
{
	uint32_t s = ELOG_SIZE_MIN;
	while (s < n && s < ELOG_SIZE_MAX)
		s <<= 1;
	return s;
}

static void epoch_init(void);

void elog_set_size(uint32_t n_events)
{
	pthread_mutex_lock(&elog.lock);
	epoch_init();
	__atomic_store_n(&elog.size, pow2_clamp(n_events), __ATOMIC_RELAXED);
	pthread_mutex_unlock(&elog.lock);
}

uint32_t elog_size(void)
{
	return __atomic_load_n(&elog.size, __ATOMIC_RELAXED);
}

/* The time base, fixed at the first elog_set_size or track (the
 * calibration takes ~20 ms, once, on the control path). */
static void epoch_init(void)
{
	if (elog.ticks_per_ns)
		return;
	elog.ticks_per_ns = cpu_ticks_per_second() / 1e9;
	elog.epoch = cpu_ticks();
}

static struct elog_ring *ring_new(uint32_t track, uint32_t size)
{
	struct elog_ring *r = aligned_alloc(64, ROUND_UP(sizeof(*r), 64));
	struct elog_event *ev = aligned_alloc(64, (size_t)size * sizeof(*ev));
	if (!r || !ev) {
		free(r);
		free(ev);
		return NULL;
	}
	memset(r, 0, sizeof(*r));
	/* Touched now, so the first events of a thread take no page fault. */
	memset(ev, 0, (size_t)size * sizeof(*ev));
	r->mask = size - 1;
	r->track = (uint16_t)track;
	r->ev = ev;
	return r;
}

static int track_make(uint32_t track)
{
	uint32_t size = elog_size();
	struct elog_ring *old = elog.ring[track];
	if (old && old->mask + 1 == size)
		return 0;
	struct elog_ring *r = ring_new(track, size);
	if (!r)
		return -ENOMEM;
	__atomic_store_n(&elog.ring[track], r, __ATOMIC_RELEASE);
	if (old) {
		free(old->ev);
		free(old);
	}
	return 0;
}

int elog_track_register(uint32_t track, const char *name)
{
	if (track >= ELOG_MAX_TRACKS)
		return -EINVAL;
	pthread_mutex_lock(&elog.lock);
	epoch_init();
	int rc = track_make(track);
	if (!rc)
		snprintf(elog.name[track], sizeof(elog.name[track]), "%s", name);
	pthread_mutex_unlock(&elog.lock);
	return rc;
}

void elog_thread_bind(uint32_t track)
{
	struct elog_ring *r = track < ELOG_TRACK_CONTROL ? __atomic_load_n(&elog.ring[track], __ATOMIC_ACQUIRE) : NULL;
	elog_self = r;
}

const char *elog_track_name(uint32_t track)
{
	return track < ELOG_MAX_TRACKS && __atomic_load_n(&elog.ring[track], __ATOMIC_ACQUIRE) ? elog.name[track] : "";
}

void elog_log_control(const struct elog_type *t, uint64_t ticks, uint32_t a, uint64_t b, uint64_t c)
{
	pthread_mutex_lock(&elog.lock);
	if (!elog.ring[ELOG_TRACK_CONTROL]) {
		epoch_init();
		if (track_make(ELOG_TRACK_CONTROL) == 0)
			snprintf(elog.name[ELOG_TRACK_CONTROL], ELOG_NAME_SIZE, "control");
	}
	struct elog_ring *r = elog.ring[ELOG_TRACK_CONTROL];
	if (r)
		elog_ring_put(r, t, ticks, a, b, c);
	pthread_mutex_unlock(&elog.lock);
}

/* ---- strings ---- */

#define STRING_BUCKETS 1024 /* chains stay short for a few thousand names */

static struct {
	pthread_mutex_t lock;
	char **text;    /* by id; id 0 is "?" */
	uint32_t *next; /* chain of the same bucket, by id */
	uint32_t n, cap;
	uint32_t bucket[STRING_BUCKETS];
} strings = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* FNV-1a (http://www.isthe.com/chongo/tech/comp/fnv/). */
static uint32_t string_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h % STRING_BUCKETS;
}

static bool strings_grow(void)
{
	uint32_t cap = strings.cap ? strings.cap * 2 : 256;
	char **text = realloc(strings.text, cap * sizeof(*text));
	if (text)
		strings.text = text;
	uint32_t *next = text ? realloc(strings.next, cap * sizeof(*next)) : NULL;
	if (!next)
		return false;
	strings.next = next;
	strings.cap = cap;
	if (!strings.n)
		strings.n = 1;
	return true;
}

static uint32_t string_add(const char *s, uint32_t h)
{
	if (strings.n + 1 >= strings.cap && !strings_grow())
		return 0;
	char *copy = strdup(s);
	if (!copy)
		return 0;
	uint32_t id = strings.n;
	strings.text[id] = copy;
	strings.next[id] = strings.bucket[h];
	strings.bucket[h] = id;
	__atomic_store_n(&strings.n, id + 1, __ATOMIC_RELEASE);
	return id;
}

uint32_t elog_string(const char *s)
{
	uint32_t h = string_hash(s);
	pthread_mutex_lock(&strings.lock);
	uint32_t id = strings.bucket[h];
	while (id && strcmp(strings.text[id], s))
		id = strings.next[id];
	if (!id)
		id = string_add(s, h);
	pthread_mutex_unlock(&strings.lock);
	return id;
}

const char *elog_string_get(uint32_t id)
{
	/* The array moves when it grows; the texts never do. */
	pthread_mutex_lock(&strings.lock);
	const char *s = id && id < strings.n ? strings.text[id] : "?";
	pthread_mutex_unlock(&strings.lock);
	return s;
}

/* ---- readers ---- */

uint32_t elog_track_count(uint32_t track)
{
	struct elog_ring *r = track < ELOG_MAX_TRACKS ? __atomic_load_n(&elog.ring[track], __ATOMIC_ACQUIRE) : NULL;
	if (!r)
		return 0;
	uint64_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	uint64_t from = __atomic_load_n(&r->clear_from, __ATOMIC_RELAXED);
	uint64_t n = h - MAX(from, h > r->mask ? h - r->mask : 0);
	return (uint32_t)n;
}

static void event_load(struct elog_event *d, const struct elog_event *s)
{
	d->ticks = __atomic_load_n(&s->ticks, __ATOMIC_RELAXED);
	d->type = __atomic_load_n(&s->type, __ATOMIC_RELAXED);
	d->track = __atomic_load_n(&s->track, __ATOMIC_RELAXED);
	d->a = __atomic_load_n(&s->a, __ATOMIC_RELAXED);
	d->b = __atomic_load_n(&s->b, __ATOMIC_RELAXED);
	d->c = __atomic_load_n(&s->c, __ATOMIC_RELAXED);
}

/* Events [first, h1) were complete when h1 was read; a write in progress
 * while copying rewrites the slot of event (its index - size), and every
 * write begun before the second read of head has index <= h2. So what was
 * copied is good from h2 - size + 1 on. Which is why a ring of size events
 * shows size - 1: the slot of event h1 - size may be half rewritten by a
 * writer that has not yet published h1 + 1, and no reader can tell. */
uint32_t elog_track_copy(uint32_t track, struct elog_event *out, uint32_t max)
{
	struct elog_ring *r = track < ELOG_MAX_TRACKS ? __atomic_load_n(&elog.ring[track], __ATOMIC_ACQUIRE) : NULL;
	if (!r || !max)
		return 0;
	uint64_t size = (uint64_t)r->mask + 1;
	uint64_t h1 = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	/* size - 1: the slot after the newest may be being rewritten. */
	uint64_t first = h1 > size - 1 ? h1 - (size - 1) : 0;
	first = MAX(first, __atomic_load_n(&r->clear_from, __ATOMIC_RELAXED));
	if (h1 - first > max)
		first = h1 - max;
	for (uint64_t i = first; i < h1; i++)
		event_load(&out[i - first], &r->ev[i & r->mask]);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	uint64_t h2 = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t good = h2 >= size ? h2 - size + 1 : 0;
	if (good <= first)
		return (uint32_t)(h1 - first);
	if (good >= h1)
		return 0;
	memmove(out, &out[good - first], (size_t)(h1 - good) * sizeof(*out));
	return (uint32_t)(h1 - good);
}

void elog_clear(void)
{
	pthread_mutex_lock(&elog.lock);
	for (uint32_t t = 0; t < ELOG_MAX_TRACKS; t++)
		if (elog.ring[t])
			__atomic_store_n(&elog.ring[t]->clear_from, __atomic_load_n(&elog.ring[t]->head, __ATOMIC_ACQUIRE),
					 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&elog.lock);
}

double elog_ticks_ns(uint64_t ticks)
{
	return elog.ticks_per_ns ? (double)ticks / elog.ticks_per_ns : 0;
}

double elog_ticks_to_ns(uint64_t ticks)
{
	return elog.ticks_per_ns ? (double)(int64_t)(ticks - elog.epoch) / elog.ticks_per_ns : 0;
}

enum elog_arg_kind elog_arg(const struct elog_event *e, uint32_t i, uint64_t *num, const char **str)
{
	const struct elog_type *t = elog_type_get(e->type);
	if (!t || i > 2 || (i == 2 && t->duration))
		return ELOG_ARG_NONE;
	uint64_t v = i == 0 ? e->a : i == 1 ? e->b : e->c;
	enum elog_arg_kind k = t->arg_kind[i];
	if (k == ELOG_ARG_STR)
		*str = elog_string_get((uint32_t)v);
	else if (k == ELOG_ARG_TICKS)
		*num = (uint64_t)elog_ticks_ns(v);
	else
		*num = v;
	return k;
}
