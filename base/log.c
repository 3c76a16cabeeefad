/* Log lines and the cycle-counter calibration. */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "base/log_ring.h"
#include "base/util.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_file;

void base_log_set_file(FILE *f)
{
	pthread_mutex_lock(&log_lock);
	log_file = f;
	pthread_mutex_unlock(&log_lock);
}

static void log_to(FILE *f, const char *subsystem, const char *fmt, va_list ap)
{
	fprintf(f, "sluice: %s: ", subsystem);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
}

static pthread_once_t ring_once = PTHREAD_ONCE_INIT;
static struct log_ring ring;
static bool ring_ok;

static void ring_init(void)
{
	ring_ok = log_ring_init(&ring, LOG_RING_SIZE) == 0;
}

struct log_ring *base_log_ring(void)
{
	pthread_once(&ring_once, ring_init);
	return ring_ok ? &ring : NULL;
}

void base_log(const char *subsystem, const char *fmt, ...)
{
	va_list ap;
	struct log_ring *r = base_log_ring();
	if (r) {
		char text[LOG_RING_TEXT + 64]; /* longer is cut in the ring anyway */
		va_start(ap, fmt);
		vsnprintf(text, sizeof(text), fmt, ap);
		va_end(ap);
		log_ring_put(r, subsystem, text);
	}
	pthread_mutex_lock(&log_lock);
	va_start(ap, fmt);
	log_to(stderr, subsystem, fmt, ap);
	va_end(ap);
	if (log_file && log_file != stderr) {
		va_start(ap, fmt);
		log_to(log_file, subsystem, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&log_lock);
}

static pthread_once_t calib_once = PTHREAD_ONCE_INIT;
static double ticks_per_second;

static void calibrate(void)
{
	uint64_t t0 = time_now_ns(), c0 = cpu_ticks();
	struct timespec d = { 0, 20 * 1000 * 1000 };
	nanosleep(&d, NULL);
	uint64_t t1 = time_now_ns(), c1 = cpu_ticks();
	ticks_per_second = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
}

double cpu_ticks_per_second(void)
{
	pthread_once(&calib_once, calibrate);
	return ticks_per_second;
}
