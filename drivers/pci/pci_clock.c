/* The drivers' clock: see pci_clock.h. */
#include <errno.h>
#include <stddef.h>
#include <time.h>

#include "drivers/pci/pci.h"
#include "drivers/pci/pci_clock.h"

static uint64_t real_now_ns(void *ctx)
{
	(void)ctx;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void real_sleep_us(void *ctx, uint32_t us)
{
	(void)ctx;
	struct timespec ts = { .tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000 };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static const struct pci_clock_ops real_clock = { .now_ns = real_now_ns, .sleep_us = real_sleep_us };
static const struct pci_clock_ops *clock_ops = &real_clock;
static void *clock_ctx;

void pci_clock_set(const struct pci_clock_ops *ops, void *ctx)
{
	clock_ops = ops ? ops : &real_clock;
	clock_ctx = ops ? ctx : NULL;
}

uint64_t pci_clock_now_ns(void)
{
	return clock_ops->now_ns(clock_ctx);
}

void pci_clock_sleep_us(uint32_t us)
{
	clock_ops->sleep_us(clock_ctx, us);
}

int pci_wait_reg(struct pci_io *io, uint32_t reg, uint32_t mask, uint32_t want, uint32_t timeout_us,
		 uint32_t step_us)
{
	uint64_t deadline = pci_clock_now_ns() + (uint64_t)timeout_us * 1000u;
	for (;;) {
		bool late = pci_clock_now_ns() >= deadline;
		if ((pci_read32(io, reg) & mask) == want)
			return 0;
		if (late)
			return -ETIMEDOUT;
		pci_clock_sleep_us(step_us);
	}
}
