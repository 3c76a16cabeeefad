/* The device models' common part: see nic_model.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "drivers/pci/pci_clock.h"
#include "tests/models/nic_model.h"

#define MAX_MODELS 8

static struct nic_model *models[MAX_MODELS];

/* ---- virtual time and delays ---- */

static uint64_t vnow_ns = 1000000000ull; /* not 0: a deadline of 0 would look unset */
static uint32_t tick_ns = NIC_MODEL_TICK_NS;
static uint64_t rng_seed = 1, rng_state = 1;
static bool slowest;
static uint64_t ticks_max;

static uint64_t clock_now(void *ctx)
{
	(void)ctx;
	return vnow_ns;
}

static void clock_sleep(void *ctx, uint32_t us)
{
	(void)ctx;
	vnow_ns += (uint64_t)us * 1000u;
}

static const struct pci_clock_ops virtual_clock = { .now_ns = clock_now, .sleep_us = clock_sleep };

uint64_t nic_model_now_ns(void)
{
	return vnow_ns;
}

void nic_model_advance_ns(uint64_t ns)
{
	vnow_ns += ns;
}

void nic_model_set_tick_ns(uint32_t ns)
{
	tick_ns = ns;
}

void nic_model_seed(uint64_t seed)
{
	rng_seed = seed;
	rng_state = seed ? seed : 1;
}

uint64_t nic_model_seed_used(void)
{
	return rng_seed;
}

void nic_model_delays_slowest(bool on)
{
	slowest = on;
}

uint64_t nic_model_delay_ns(uint64_t lo_ns, uint64_t hi_ns)
{
	if (slowest || hi_ns <= lo_ns)
		return MAX(lo_ns, hi_ns);
	/* xorshift64*: reproducible from the seed, good enough for spreading delays */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return lo_ns + (rng_state * 0x2545F4914F6CDD1Dull) % (hi_ns - lo_ns + 1);
}

/* Models tick one after the other in a poll: time moves once per poll, as
 * the first model to reach a new tick count moves it (a model starts at the
 * world's count). */

void nic_model_tick_time(struct nic_model *b)
{
	if (++b->now > ticks_max) {
		ticks_max = b->now;
		vnow_ns += tick_ns;
	}
}

static uint32_t n_live(void)
{
	uint32_t n = 0;
	for (int i = 0; i < MAX_MODELS; i++)
		n += models[i] != NULL;
	return n;
}

int nic_model_register(struct nic_model *b, const struct pci_io_ops *ops, const char *addr, uint16_t device,
		       int64_t iova_offset)
{
	int slot = 0;
	while (slot < MAX_MODELS && models[slot])
		slot++;
	if (slot == MAX_MODELS)
		return -ENOSPC;
	if (!n_live()) /* the first model: the drivers wait in virtual time */
		pci_clock_set(&virtual_clock, NULL);
	models[slot] = b;
	b->now = ticks_max;
	b->io.ops = ops;
	b->io.iova_offset = iova_offset;
	b->io.vendor = 0x8086;
	b->io.device = device;
	b->io.numa_node = -1;
	snprintf(b->io.addr, sizeof(b->io.addr), "%s", addr);
	b->tx_delay = 2;
	b->tx_batch = 64;
	return 0;
}

void nic_model_set_tx_pace(struct nic_model *b, uint32_t delay, uint32_t batch)
{
	b->tx_delay = delay;
	b->tx_batch = batch ? batch : 1;
}

int nic_model_txq_start(struct nic_model_txq *t, uint32_t qlen, uint32_t desc_size, uint32_t head)
{
	free(t->shadow);
	*t = (struct nic_model_txq){ .qlen = qlen, .desc_size = desc_size, .tail = head, .ready = head };
	t->shadow = calloc(qlen, desc_size);
	return t->shadow ? 0 : -ENOMEM;
}

void nic_model_txq_stop(struct nic_model_txq *t)
{
	free(t->shadow);
	*t = (struct nic_model_txq){ 0 };
}

bool nic_model_tx_post(struct nic_model *b, struct nic_model_txq *t, uint16_t q, const volatile void *ring,
		       uint32_t head, uint32_t tail)
{
	uint32_t owned = (t->tail + t->qlen - head) % t->qlen, added = (tail + t->qlen - t->tail) % t->qlen;
	if (owned + added >= t->qlen) {
		nic_model_fail(b,
			       "tx queue %u: tail %u hands over descriptors the NIC still owns (head %u, tail was %u): "
			       "a slot reused before its write-back",
			       q, tail, head, t->tail);
		return false;
	}
	const volatile uint8_t *r = ring;
	for (uint32_t s = t->tail; s != tail; s = (s + 1) % t->qlen)
		for (uint32_t i = 0; i < t->desc_size; i++)
			t->shadow[(size_t)s * t->desc_size + i] = r[(size_t)s * t->desc_size + i];
	if (t->n_posts == NIC_MODEL_TX_POSTS) /* many writes in one tick: the newest waits longest */
		t->n_posts--;
	t->posts[t->n_posts].tail = tail;
	t->posts[t->n_posts++].tick = b->now;
	t->tail = tail;
	return true;
}

uint32_t nic_model_tx_ready(struct nic_model *b, struct nic_model_txq *t, uint32_t head, bool unpaced)
{
	uint32_t k = 0;
	while (k < t->n_posts && (unpaced || t->posts[k].tick + b->tx_delay <= b->now))
		t->ready = t->posts[k++].tail;
	memmove(t->posts, t->posts + k, (t->n_posts - k) * sizeof(t->posts[0]));
	t->n_posts -= k;
	uint32_t n = t->qlen ? (t->ready + t->qlen - head) % t->qlen : 0;
	return unpaced ? n : MIN(n, b->tx_batch);
}

bool nic_model_tx_unchanged(struct nic_model *b, const struct nic_model_txq *t, uint16_t q,
			    const volatile void *ring, uint32_t slot)
{
	const volatile uint8_t *r = (const volatile uint8_t *)ring + (size_t)slot * t->desc_size;
	for (uint32_t i = 0; i < t->desc_size; i++)
		if (r[i] != t->shadow[(size_t)slot * t->desc_size + i]) {
			nic_model_fail(b,
				       "tx queue %u descriptor %u: written by the driver after its tail write, before "
				       "the NIC wrote it back",
				       q, slot);
			return false;
		}
	return true;
}

void nic_model_unregister(struct nic_model *b)
{
	for (int i = 0; i < MAX_MODELS; i++)
		if (models[i] == b)
			models[i] = NULL;
	if (!n_live())
		pci_clock_set(NULL, NULL);
}

struct pci_io *nic_model_open(void *ctx, const char *addr, char *err, size_t errlen)
{
	(void)ctx;
	for (int i = 0; i < MAX_MODELS; i++) {
		struct nic_model *b = models[i];
		if (!b || strcmp(b->io.addr, addr))
			continue;
		if (b->open) {
			snprintf(err, errlen, "model %s is already open", addr);
			return NULL;
		}
		b->open = true;
		return &b->io;
	}
	snprintf(err, errlen, "PCI device %s not found (no model answers for it)", addr);
	return NULL;
}

void nic_model_on_error(struct nic_model *b, nic_model_error_fn *fn, void *ctx)
{
	b->on_error = fn;
	b->error_ctx = ctx;
}

void nic_model_on_tx(struct nic_model *b, nic_model_tx_fn *fn, void *ctx)
{
	b->on_tx = fn;
	b->tx_ctx = ctx;
}

uint64_t nic_model_errors(const struct nic_model *b)
{
	return b->n_errors;
}

const char *nic_model_last_error(const struct nic_model *b)
{
	return b->last_error;
}

void nic_model_fail(struct nic_model *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->last_error, sizeof(b->last_error), fmt, ap);
	va_end(ap);
	b->n_errors++;
	if (b->on_error)
		b->on_error(b->error_ctx, b->last_error);
}

int nic_model_dma_map(struct pci_io *io, void *va, size_t len)
{
	struct nic_model *b = container_of(io, struct nic_model, io);
	if (b->n_regions == NIC_MODEL_MAX_REGIONS)
		return -ENOSPC;
	b->regions[b->n_regions++] = (struct nic_model_region){ (uintptr_t)va, len };
	return 0;
}

void nic_model_dma_unmap(struct pci_io *io, void *va, size_t len)
{
	struct nic_model *b = container_of(io, struct nic_model, io);
	for (uint32_t i = 0; i < b->n_regions; i++)
		if (b->regions[i].va == (uintptr_t)va && b->regions[i].len == len) {
			b->regions[i] = b->regions[--b->n_regions];
			return;
		}
	nic_model_fail(b, "DMA unmap of %zu bytes at %p that were never mapped", len, va);
}

void *nic_model_dma(struct nic_model *b, uint64_t iova, size_t len, const char *what)
{
	uintptr_t va = (uintptr_t)(iova - (uint64_t)b->io.iova_offset);
	for (uint32_t i = 0; i < b->n_regions; i++) {
		const struct nic_model_region *r = &b->regions[i];
		if (va >= r->va && va - r->va <= r->len && len <= r->len - (va - r->va))
			return (void *)va;
	}
	nic_model_fail(b, "DMA outside registered memory: %s at IOVA 0x%" PRIx64 " (%zu bytes)", what, iova, len);
	return NULL;
}

void nic_model_emit(struct nic_model *b, uint16_t queue, const uint8_t *frame, uint32_t len)
{
	if (b->on_tx)
		b->on_tx(b->tx_ctx, queue, frame, len);
}

uint32_t nic_model_crc32(const uint8_t *p, uint32_t n)
{
	uint32_t c = 0xFFFFFFFF;
	for (uint32_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
	}
	return ~c;
}

/* ---- MSI-X ---- */

int nic_model_irq_set(struct pci_io *io, uint32_t n, const int *fds)
{
	struct nic_model *b = container_of(io, struct nic_model, io);
	if (n > NIC_MODEL_MAX_VECTORS)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		b->irq_fd[i] = fds[i];
	b->n_vectors = n;
	return 0;
}

void nic_model_irq_raise(struct nic_model *b, uint32_t v)
{
	if (v >= b->n_vectors) {
		nic_model_fail(b, "MSI-X vector %u raised, but the driver set up %u vectors", v, b->n_vectors);
		return;
	}
	b->irqs[v]++;
	uint64_t one = 1;
	if (write(b->irq_fd[v], &one, sizeof(one)) != sizeof(one))
		nic_model_fail(b, "MSI-X vector %u: its eventfd cannot be written", v);
}
