/* The log ring (base/log_ring.h): a fixed array written round, under a
 * mutex held for one entry's copy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log_ring.h"

int log_ring_init(struct log_ring *r, uint32_t size)
{
	memset(r, 0, sizeof(*r));
	if (!size)
		return -EINVAL;
	r->entries = calloc(size, sizeof(*r->entries));
	if (!r->entries)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	r->size = size;
	r->next_seq = r->first = 1;
	return 0;
}

void log_ring_free(struct log_ring *r)
{
	if (!r->entries)
		return;
	pthread_mutex_destroy(&r->lock);
	free(r->entries);
	r->entries = NULL;
}

void log_ring_put(struct log_ring *r, const char *subsystem, const char *text)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	size_t n = strlen(text);
	pthread_mutex_lock(&r->lock);
	uint64_t seq = r->next_seq++;
	struct log_ring_entry *e = &r->entries[(seq - 1) % r->size];
	e->seq = seq;
	e->time_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	e->cut = n >= sizeof(e->text);
	snprintf(e->subsystem, sizeof(e->subsystem), "%s", subsystem);
	memcpy(e->text, text, e->cut ? sizeof(e->text) - 1 : n);
	e->text[e->cut ? sizeof(e->text) - 1 : n] = 0;
	r->lines++;
	if (r->next_seq - r->first > r->size) {
		r->first = r->next_seq - r->size;
		r->overwritten++;
	}
	pthread_mutex_unlock(&r->lock);
}

uint32_t log_ring_read(struct log_ring *r, uint64_t from, struct log_ring_entry *out, uint32_t max,
		       uint64_t *lost)
{
	pthread_mutex_lock(&r->lock);
	uint64_t start = from > r->first ? from : r->first;
	if (start > r->next_seq)
		start = r->next_seq;
	if (r->next_seq - start > max)
		start = r->next_seq - max;
	if (lost) {
		uint64_t want = from ? from : 1;
		*lost = r->first > want ? r->first - want : 0;
	}
	uint32_t n = 0;
	for (uint64_t seq = start; seq < r->next_seq; seq++)
		out[n++] = r->entries[(seq - 1) % r->size];
	pthread_mutex_unlock(&r->lock);
	return n;
}

void log_ring_counters(struct log_ring *r, uint64_t *lines, uint64_t *overwritten)
{
	pthread_mutex_lock(&r->lock);
	*lines = r->lines;
	*overwritten = r->overwritten;
	pthread_mutex_unlock(&r->lock);
}

void log_ring_clear(struct log_ring *r)
{
	pthread_mutex_lock(&r->lock);
	r->next_seq = r->first = 1;
	pthread_mutex_unlock(&r->lock);
}
