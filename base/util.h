/* Small helpers every subsystem uses: branch hints, cycle counter, time. */
#ifndef SLUICE_BASE_UTIL_H
#define SLUICE_BASE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define CACHE_LINE_SIZE 64
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
/* Arguments are evaluated twice: pass values, not loads of shared state. */
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define ROUND_UP(x, a) ((((x) + (a) - 1) / (a)) * (a))
#define PREFETCH_READ(p) __builtin_prefetch((p), 0, 3)
#define PREFETCH_WRITE(p) __builtin_prefetch((p), 1, 3)

static inline uint64_t cpu_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static inline uint64_t time_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Ticks per second of cpu_ticks(), measured once at first use (about 20 ms). */
double cpu_ticks_per_second(void);

/* One log line to stderr (and the log file once the daemon opens it):
 * "sluice: <subsystem>: message". Thread-safe. */
void base_log(const char *subsystem, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Redirect log lines to a FILE in addition to stderr (NULL: stderr only). */
void base_log_set_file(FILE *f);

#endif
