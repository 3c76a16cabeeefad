/* The registry of buffer holders and the attribution `show buffers` prints.
 *
 * Why a registry rather than a walk over known structures: graph/ knows no
 * device, distributor or scheduler, yet the leak finder must name them all.
 * Each subsystem says what it holds; the pools say what is in use; the
 * difference names the leak. One mutex covers registration and the walk, so
 * a holder never runs after it unregistered.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/buffer.h"

struct holder {
	char name[BUFFER_HOLDER_NAME_SIZE];
	buffer_holder_fn_t *fn;
	void *ctx;
};

struct buffer_tally {
	struct buffer_attribution *a;
	uint32_t cap;
	const char *holder;
	bool failed;
};

static pthread_mutex_t holders_lock = PTHREAD_MUTEX_INITIALIZER;
static struct holder holders[BUFFER_MAX_HOLDERS];
static uint32_t n_holders;

int buffer_holder_register(const char *name, buffer_holder_fn_t *fn, void *ctx)
{
	int rc = 0;
	pthread_mutex_lock(&holders_lock);
	for (uint32_t i = 0; i < n_holders && !rc; i++)
		if (holders[i].fn == fn && holders[i].ctx == ctx)
			rc = -EEXIST;
	if (!rc && n_holders == BUFFER_MAX_HOLDERS)
		rc = -ENOSPC;
	if (!rc) {
		struct holder *h = &holders[n_holders++];
		snprintf(h->name, sizeof(h->name), "%s", name);
		h->fn = fn;
		h->ctx = ctx;
	}
	pthread_mutex_unlock(&holders_lock);
	return rc;
}

void buffer_holder_unregister(buffer_holder_fn_t *fn, void *ctx)
{
	pthread_mutex_lock(&holders_lock);
	for (uint32_t i = 0; i < n_holders; i++) {
		if (holders[i].fn != fn || holders[i].ctx != ctx)
			continue;
		memmove(&holders[i], &holders[i + 1], (n_holders - i - 1) * sizeof(holders[0]));
		n_holders--;
		break;
	}
	pthread_mutex_unlock(&holders_lock);
}

void buffer_tally_add(struct buffer_tally *t, const char *where, uint64_t n)
{
	struct buffer_attribution *a = t->a;
	if (a->n_holdings == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 64;
		struct buffer_holding *h = realloc(a->holdings, cap * sizeof(*h));
		if (!h) {
			t->failed = true;
			return;
		}
		a->holdings = h;
		t->cap = cap;
	}
	struct buffer_holding *h = &a->holdings[a->n_holdings++];
	snprintf(h->holder, sizeof(h->holder), "%s", t->holder);
	snprintf(h->where, sizeof(h->where), "%s", where ? where : "");
	h->n = n;
	a->n_attributed += n;
}

static void pools_sum(struct buffer_attribution *a)
{
	struct buffer_pool_stats st;
	for (uint32_t p = 0; buffer_pool_stats(p, &st) == 0; p++) {
		a->n_total += st.n_total;
		a->n_free_pool += st.n_free_pool;
		a->n_cached += st.n_cached;
		a->n_in_use += st.n_in_use;
	}
}

int buffer_attribute(struct buffer_attribution *a)
{
	memset(a, 0, sizeof(*a));
	struct buffer_tally t = { .a = a };
	pthread_mutex_lock(&holders_lock);
	for (uint32_t i = 0; i < n_holders && !t.failed; i++) {
		uint32_t before = a->n_holdings;
		t.holder = holders[i].name;
		holders[i].fn(holders[i].ctx, &t);
		if (a->n_holdings == before)
			buffer_tally_add(&t, NULL, 0);
	}
	pthread_mutex_unlock(&holders_lock);
	if (t.failed) {
		buffer_attribution_free(a);
		return -ENOMEM;
	}
	pools_sum(a);
	a->n_unattributed = (int64_t)a->n_in_use - (int64_t)a->n_attributed;
	return 0;
}

void buffer_attribution_free(struct buffer_attribution *a)
{
	free(a->holdings);
	memset(a, 0, sizeof(*a));
}
