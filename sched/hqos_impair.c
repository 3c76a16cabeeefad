/* Impairment per subscriber (hqos.h's hqos_sub_set_impair): an impairer
 * (sched/impair.h) in front of the subscriber's queues, as netem is the
 * child qdisc of an HTB class in Linux: a packet of that subscriber first
 * waits its departure time (delay, jitter, rate) or is lost, duplicated,
 * corrupted, reordered there; what the impairer releases then queues and
 * is shaped as any arrival. The same place as class impairment (egress.h:
 * before the shaper's class queues).
 *
 * The impairers are few (HQOS_IMPAIR_MAX) beside up to 64K subscribers:
 * a flag in the subscriber's state (in_use == SUB_IMPAIRED) sends its
 * arrivals here, and dequeue visits the impairers only when there are any.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sched/hqos_private.h"

static struct hq_imp *imp_of(const struct hqos *h, uint32_t id)
{
	for (uint32_t i = 0; i < h->n_imp; i++)
		if (h->imp[i].sub == id)
			return (struct hq_imp *)&h->imp[i];
	return NULL;
}

/* A drop for hqos_take_impair_drops, its reason kept in opaque[4] (the
 * link uses opaque[0..3]). */
static void idrop_push(struct hqos *h, uint32_t bi)
{
	*hq_link(bi) = NIL;
	if (h->n_idrop)
		*hq_link(h->idrop_tail) = bi;
	else
		h->idrop_head = bi;
	h->idrop_tail = bi;
	__atomic_store_n(&h->n_idrop, h->n_idrop + 1, __ATOMIC_RELAXED);
}

uint32_t hqos_take_impair_drops(struct hqos *h, uint32_t *out, uint32_t max)
{
	uint32_t n = 0;
	while (n < max && n < h->n_idrop) {
		out[n] = h->idrop_head;
		h->idrop_head = *hq_link(h->idrop_head);
		n++;
	}
	__atomic_store_n(&h->n_idrop, h->n_idrop - n, __ATOMIC_RELAXED);
	return n;
}

int hqos_sub_set_impair(struct hqos *h, uint32_t id, const struct sched_impair_config *c, char *err,
			size_t errlen)
{
	static const struct sched_impair_config off;
	if (id >= h->n_alloc || !h->sub[id].in_use) {
		snprintf(err, errlen, "no subscriber %u", id);
		return -ENOENT;
	}
	if (!c)
		c = &off;
	int rc = sched_impair_check(c, err, errlen);
	if (rc)
		return rc;
	struct hq_imp *x = imp_of(h, id);
	bool on = sched_impair_active(c);
	if (!x && !on)
		return 0;
	if (!x) {
		if (h->n_imp == HQOS_IMPAIR_MAX) {
			snprintf(err, errlen, "%u subscribers impaired on this port already", HQOS_IMPAIR_MAX);
			return -ENOSPC;
		}
		struct sched_impair *m = sched_impair_create(h->cfg.max_held, 0x5eb50000ull + id, err, errlen);
		if (!m)
			return -ENOMEM;
		x = &h->imp[h->n_imp];
		x->sub = id;
		x->m = m;
		h->n_imp++;
	}
	if ((rc = sched_impair_set(x->m, c, err, errlen)) != 0)
		return rc;
	h->sub[id].in_use = on ? SUB_IMPAIRED : 1;
	return 0;
}

const struct sched_impair *hqos_sub_impair(const struct hqos *h, uint32_t id)
{
	const struct hq_imp *x = imp_of(h, id);
	return x ? x->m : NULL;
}

uint32_t hqos_impair_count(const struct hqos *h)
{
	return h->n_imp;
}

const struct sched_impair *hqos_impair_at(const struct hqos *h, uint32_t k, uint32_t *id)
{
	*id = h->imp[k].sub;
	return h->imp[k].m;
}

void hqos_impair_in(struct hqos *h, uint32_t id, uint32_t bi, uint64_t now_ns)
{
	struct hq_imp *x = imp_of(h, id);
	uint32_t dropped[2], dup[1], n_dup;
	uint32_t d = sched_impair_enqueue(x->m, &bi, 1, now_ns, dropped, dup, &n_dup);
	for (uint32_t i = 0; i < d; i++)
		idrop_push(h, dropped[i]);
}

/* Released packets queue as arrivals at now; those the queue refuses (or
 * pushes out) are dropped with HQOS_DROP_IMPAIR_LIMIT. */
void hqos_impair_release(struct hqos *h, uint64_t now_ns)
{
	uint32_t out[64];
	for (uint32_t i = 0; i < h->n_imp; i++) {
		struct hq_imp *x = &h->imp[i];
		if (sched_impair_next_ns(x->m) > now_ns)
			continue;
		uint32_t n;
		do {
			n = sched_impair_dequeue(x->m, now_ns, out, 64);
			for (uint32_t k = 0; k < n; k++) {
				uint32_t victim = NIL, r = hqos_enqueue_one(h, out[k], x->sub, now_ns, &victim);
				if (r == 1)
					continue;
				uint32_t gone = r == 2 ? victim : out[k];
				buffer_get(gone)->opaque[4] = HQOS_DROP_IMPAIR_LIMIT;
				idrop_push(h, gone);
			}
		} while (n == 64);
	}
}

uint64_t hqos_impair_next_ns(const struct hqos *h)
{
	uint64_t next = UINT64_MAX;
	for (uint32_t i = 0; i < h->n_imp; i++) {
		uint64_t t = sched_impair_next_ns(h->imp[i].m);
		next = t < next ? t : next;
	}
	return next;
}

uint64_t hqos_impair_remove(struct hqos *h, uint32_t id)
{
	struct hq_imp *x = imp_of(h, id);
	uint32_t out[64], n;
	uint64_t freed = 0;
	if (!x)
		return 0;
	while ((n = sched_impair_flush(x->m, out, 64)) != 0) {
		buffer_free(out, n);
		freed += n;
	}
	sched_impair_destroy(x->m);
	*x = h->imp[--h->n_imp];
	h->sub[id].in_use = 1;
	return freed;
}
