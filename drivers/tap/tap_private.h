/* The tap driver's insides: the device, its rings, the control thread. */
#ifndef SLUICE_DRIVERS_TAP_PRIVATE_H
#define SLUICE_DRIVERS_TAP_PRIVATE_H

#include <stdalign.h>
#include <stdatomic.h>

#include "drivers/tap/tap.h"

/* A bounded single-producer single-consumer ring of byte slots (one
 * frame each, its length first). The producer owns head, the consumer
 * tail; each publishes with a release store and reads the other's with an
 * acquire load (C11 atomics), so neither takes a lock. */
struct tap_ring {
	alignas(64) _Atomic uint32_t head; /* next slot to fill (producer) */
	alignas(64) _Atomic uint32_t tail; /* next slot to take (consumer) */
	alignas(64) uint32_t mask;         /* slots - 1 (a power of two) */
	uint32_t slot_size;                /* bytes of frame a slot holds */
	uint8_t *mem;                      /* slots * (4 + slot_size) bytes */
};

static inline uint8_t *tap_slot(const struct tap_ring *r, uint32_t i, uint32_t **len)
{
	uint8_t *s = r->mem + (size_t)(i & r->mask) * (4 + r->slot_size);
	*len = (uint32_t *)s;
	return s + 4;
}

/* Filled slots, as the consumer sees them. */
static inline uint32_t tap_ring_count(struct tap_ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_acquire) -
	       atomic_load_explicit(&r->tail, memory_order_relaxed);
}

/* Free slots, as the producer sees them. */
static inline uint32_t tap_ring_room(struct tap_ring *r)
{
	return r->mask + 1 -
	       (atomic_load_explicit(&r->head, memory_order_relaxed) -
		atomic_load_explicit(&r->tail, memory_order_acquire));
}

struct tap_dev {
	struct device dev;
	int fd;   /* the TAP, non-blocking; -1 once closed */
	int sock; /* AF_INET datagram socket in the TAP's namespace, for ioctls */
	_Atomic bool running; /* admin up: the thread moves frames */
	_Atomic bool gone;    /* the TAP was deleted from Linux: its fd polls as an error */
	char host_if[TAP_IFNAME_SIZE];
	char netns[TAP_NETNS_SIZE];
	struct tap_ring rx;                  /* fd -> datapath (control thread produces) */
	struct tap_ring tx[DEV_MAX_QUEUES];  /* datapath -> fd, one per tx queue */
	/* written by the control thread only */
	struct tap_host_stats st;
};

/* tap_host.c: make the TAP in its namespace (fd, sock, ifindex set), and
 * its Linux-side settings. 0 or a negative errno with the reason in err. */
int tap_host_open(struct tap_dev *td, char *err, size_t errlen);

/* tap_thread.c: hand a device to the control thread (started with the
 * first) and take it back (stopped with the last; on return the thread no
 * longer touches td). */
int tap_thread_add(struct tap_dev *td, char *err, size_t errlen);
void tap_thread_remove(struct tap_dev *td);

#endif
