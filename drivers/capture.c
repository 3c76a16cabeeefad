/* pcap capture (see capture.h): preallocated slots filled by the datapath,
 * written to the file by the control side.
 *
 * Slot s belongs to whoever claimed s with the atomic add on n_claimed; it
 * copies the packet and then stores ready with release order, so the writer,
 * which loads ready with acquire order, sees the copied bytes. The writer
 * writes slots strictly in claim order and stops at the first one not yet
 * ready. Once max slots are claimed the claimant of the last one disarms the
 * datapath (what = 0); claims past max touch nothing. When all max slots are
 * written no thread can touch them any more, so the writer frees them with
 * the file closed.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "drivers/capture.h"
#include "drivers/device.h"
#include "graph/buffer.h"
#include "graph/node.h"

#define CAPTURE_STDIO_BUFFER (1u << 20)

struct dev_capture_hot dev_capture = { .what = 0, .if_index = DEV_INDEX_INVALID };

struct slot {
	uint64_t ts_ns; /* CLOCK_REALTIME */
	uint32_t len;    /* the packet's length on the wire */
	uint32_t caplen; /* bytes kept */
	uint32_t ready;
};

static struct {
	pthread_mutex_t lock; /* writer side: flush vs start/stop */
	uint64_t n_claimed;   /* atomic; may pass max by the claims that lost */
	uint32_t max;
	uint32_t snaplen;
	struct slot *slots;
	uint8_t *data; /* max x snaplen */
	/* writer side only */
	uint32_t n_written;
	uint32_t what; /* as armed, for status */
	bool started;  /* since the last stop */
	pcap_t *dead;
	pcap_dumper_t *dumper; /* open until all max are written, or stop */
	FILE *file;
	char *stdio_buf;
	char path[256];
	/* selection: set under the barrier, read by the datapath */
	struct pkt_filter *filter;
	uint32_t drop_first, drop_count;
	char drop_node[64];
	char drop_reason[128];
} cap = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- datapath ---- */

static void copy_packet(struct slot *s, uint8_t *dst, struct buffer *b, uint32_t snaplen)
{
	uint32_t len = 0, off = 0;
	for (;;) {
		uint32_t k = MIN((uint32_t)b->current_length, snaplen - off);
		memcpy(dst + off, buffer_data(b), k);
		off += k;
		len += b->current_length;
		if (!(b->flags & BUFFER_F_NEXT_PRESENT))
			break;
		b = buffer_get(b->next_buffer);
	}
	s->len = len;
	s->caplen = off;
}

/* Copy b into the next slot; false once max slots are claimed. */
static bool capture_one(struct buffer *b, uint64_t now)
{
	uint32_t max = cap.max;
	uint64_t k = __atomic_fetch_add(&cap.n_claimed, 1, __ATOMIC_RELAXED);
	if (k >= max) {
		__atomic_store_n(&dev_capture.what, 0, __ATOMIC_RELAXED);
		return false;
	}
	struct slot *s = &cap.slots[k];
	copy_packet(s, cap.data + k * cap.snaplen, b, cap.snaplen);
	s->ts_ns = now;
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
	if (k + 1 == max) {
		__atomic_store_n(&dev_capture.what, 0, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

void dev_capture_packets(uint32_t if_index, const uint32_t *bi, uint32_t n)
{
	uint32_t want_if = __atomic_load_n(&dev_capture.if_index, __ATOMIC_RELAXED);
	if (want_if != DEV_INDEX_INVALID && want_if != if_index)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	const struct pkt_filter *f = cap.filter; /* freed only under the barrier */
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		if (f && !pkt_filter_match(f, b))
			continue; /* refused: takes no slot */
		if (!capture_one(b, now))
			return;
	}
}

/* ---- writer ---- */

static void release_slots(void)
{
	free(cap.slots);
	free(cap.data);
	cap.slots = NULL;
	cap.data = NULL;
}

static void close_file(void)
{
	if (cap.dumper)
		pcap_dump_close(cap.dumper); /* flushes and closes cap.file */
	else if (cap.file)
		fclose(cap.file);
	if (cap.dead)
		pcap_close(cap.dead);
	free(cap.stdio_buf);
	cap.dumper = NULL;
	cap.file = NULL;
	cap.dead = NULL;
	cap.stdio_buf = NULL;
}

/* Write ready slots in order, up to budget; caller holds the lock. */
static uint32_t write_ready(uint32_t budget)
{
	uint64_t n_claimed = __atomic_load_n(&cap.n_claimed, __ATOMIC_RELAXED); /* once: MIN reads twice */
	uint64_t claimed = MIN(n_claimed, (uint64_t)cap.max);
	uint32_t k = 0;
	while (k < budget && cap.n_written < claimed) {
		struct slot *s = &cap.slots[cap.n_written];
		if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
			break;
		struct pcap_pkthdr h = {
			.ts = { .tv_sec = (time_t)(s->ts_ns / 1000000000ull),
				.tv_usec = (suseconds_t)(s->ts_ns % 1000000000ull / 1000) },
			.caplen = s->caplen,
			.len = s->len,
		};
		pcap_dump((u_char *)cap.dumper, &h, cap.data + (size_t)cap.n_written * cap.snaplen);
		cap.n_written++;
		k++;
	}
	return k;
}

/* Replace the selection of packets; p NULL: none (every packet). The
 * caller holds the lock and the datapath is parked. */
static void capture_select(const struct dev_capture_params *p)
{
	pkt_filter_free(cap.filter);
	cap.filter = p ? p->filter : NULL;
	cap.drop_first = p ? p->drop_error_first : 0;
	cap.drop_count = p ? p->drop_error_count : 0;
	snprintf(cap.drop_node, sizeof(cap.drop_node), "%s", p && p->drop_node ? p->drop_node : "");
	snprintf(cap.drop_reason, sizeof(cap.drop_reason), "%s", p && p->drop_reason ? p->drop_reason : "");
}

uint32_t dev_capture_flush(uint32_t budget)
{
	if (pthread_mutex_trylock(&cap.lock))
		return 0; /* the control thread is stopping or starting it */
	uint32_t k = 0;
	if (cap.dumper) {
		k = write_ready(budget);
		if (cap.n_written == cap.max) {
			close_file();
			release_slots();
			base_log("pcap", "capture: %u packets written to %s", cap.n_written, cap.path);
		}
	}
	pthread_mutex_unlock(&cap.lock);
	return k;
}

int dev_capture_stop(uint64_t *n, char *path, size_t pathlen)
{
	__atomic_store_n(&dev_capture.what, 0, __ATOMIC_RELAXED);
	pthread_mutex_lock(&cap.lock);
	if (!cap.started) {
		pthread_mutex_unlock(&cap.lock);
		return -ENOENT;
	}
	if (cap.dumper) {
		write_ready(UINT32_MAX);
		close_file();
	}
	release_slots();
	capture_select(NULL); /* the datapath is parked: no one reads the filter */
	cap.started = false;
	*n = cap.n_written;
	if (path)
		snprintf(path, pathlen, "%s", cap.path);
	pthread_mutex_unlock(&cap.lock);
	return 0;
}

static int capture_start(const struct dev_capture_params *p, bool *file_taken, bool *filter_taken, char *err,
			 size_t errlen)
{
	uint32_t snaplen = p->snaplen ? p->snaplen : DEV_CAPTURE_SNAPLEN_DEFAULT;
	if (!p->what || (p->what & ~(DEV_CAPTURE_RX | DEV_CAPTURE_TX | DEV_CAPTURE_DROP))) {
		snprintf(err, errlen, "capture what: rx, tx and/or drop");
		return -EINVAL;
	}
	if (!p->max || p->max > DEV_CAPTURE_MAX_PACKETS || snaplen < 14 || snaplen > 65535 ||
	    (uint64_t)p->max * snaplen > DEV_CAPTURE_MAX_BYTES) {
		snprintf(err, errlen, "max %u x %u bytes per packet: at most %u packets and %llu MB", p->max, snaplen,
			 DEV_CAPTURE_MAX_PACKETS, DEV_CAPTURE_MAX_BYTES >> 20);
		return -EINVAL;
	}
	if (!p->path || !p->path[0] || strlen(p->path) >= sizeof(cap.path)) {
		snprintf(err, errlen, "a file name of at most %zu bytes is needed", sizeof(cap.path) - 1);
		return -EINVAL;
	}
	pthread_mutex_lock(&cap.lock);
	int rc = 0;
	if (cap.dumper) {
		snprintf(err, errlen, "a capture to %s is running (pcap capture off first)", cap.path);
		rc = -EBUSY;
		goto out;
	}
	__atomic_store_n(&dev_capture.what, 0, __ATOMIC_RELAXED);
	release_slots();
	/* Touch every page now, so that the datapath takes no page fault. */
	cap.slots = calloc(p->max, sizeof(*cap.slots));
	cap.data = malloc((size_t)p->max * snaplen);
	cap.stdio_buf = malloc(CAPTURE_STDIO_BUFFER);
	cap.dead = pcap_open_dead(DLT_EN10MB, (int)snaplen);
	if (!cap.slots || !cap.data || !cap.stdio_buf || !cap.dead) {
		snprintf(err, errlen, "out of memory for %u packets of %u bytes", p->max, snaplen);
		rc = -ENOMEM;
		goto fail;
	}
	memset(cap.data, 0, (size_t)p->max * snaplen);
	*file_taken = p->file != NULL;
	cap.file = p->file ? p->file : fopen(p->path, "wb");
	if (!cap.file || (p->file && ftruncate(fileno(p->file), 0) < 0)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", p->path, strerror(errno));
		goto fail;
	}
	setvbuf(cap.file, cap.stdio_buf, _IOFBF, CAPTURE_STDIO_BUFFER);
	cap.dumper = pcap_dump_fopen(cap.dead, cap.file);
	if (!cap.dumper) {
		snprintf(err, errlen, "%s: %s", p->path, pcap_geterr(cap.dead));
		rc = -EIO;
		goto fail;
	}
	snprintf(cap.path, sizeof(cap.path), "%s", p->path);
	cap.max = p->max;
	cap.snaplen = snaplen;
	cap.n_claimed = 0;
	cap.n_written = 0;
	cap.what = p->what;
	cap.started = true;
	capture_select(p);
	*filter_taken = true;
	dev_capture.if_index = p->if_index;
	__atomic_store_n(&dev_capture.what, p->what, __ATOMIC_RELEASE);
	goto out;
fail:
	close_file();
	release_slots();
out:
	pthread_mutex_unlock(&cap.lock);
	return rc;
}

int dev_capture_start(const struct dev_capture_params *p, char *err, size_t errlen)
{
	bool taken = false, filter_taken = false;
	int rc = capture_start(p, &taken, &filter_taken, err, errlen);
	if (p->file && !taken)
		fclose(p->file);
	if (!filter_taken)
		pkt_filter_free(p->filter);
	return rc;
}

void dev_capture_get_status(struct dev_capture_status *st)
{
	pthread_mutex_lock(&cap.lock);
	memset(st, 0, sizeof(*st));
	st->open = cap.dumper != NULL;
	st->what = __atomic_load_n(&dev_capture.what, __ATOMIC_RELAXED);
	st->max = cap.started ? cap.max : 0;
	uint64_t n_claimed = __atomic_load_n(&cap.n_claimed, __ATOMIC_RELAXED);
	st->captured = cap.started ? MIN(n_claimed, (uint64_t)cap.max) : 0;
	st->written = cap.started ? cap.n_written : 0;
	snprintf(st->path, sizeof(st->path), "%s", cap.started ? cap.path : "");
	snprintf(st->filter, sizeof(st->filter), "%s", cap.started && cap.filter ? pkt_filter_expr(cap.filter) : "");
	snprintf(st->drop_node, sizeof(st->drop_node), "%s", cap.started ? cap.drop_node : "");
	snprintf(st->drop_reason, sizeof(st->drop_reason), "%s", cap.started ? cap.drop_reason : "");
	pthread_mutex_unlock(&cap.lock);
}

/* error-drop sees a packet wherever the dropping node left it: an IPv4 drop
 * starts at its IP header. It is written from the Ethernet header
 * ethernet-input recorded (l2_len, l3_offset) when that is still in front,
 * as the file's link type and a filter expect; error-drop frees the buffer
 * right after the tap, so moving its start back harms no one. */
static void drop_frame_start(struct buffer *b)
{
	if (b->l2_len && b->current_data == (int16_t)b->l3_offset)
		buffer_advance(b, -(int)b->l2_len);
}

void dev_capture_drop_tap(void *arg, const uint32_t *bi, uint32_t n)
{
	(void)arg;
	if (!dev_capture_on(DEV_CAPTURE_DROP))
		return;
	uint32_t first = cap.drop_first, count = cap.drop_count;
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		/* unsigned: an error below first wraps past count */
		if (count && (uint32_t)(b->error - first) >= count)
			continue;
		drop_frame_start(b);
		dev_capture_packets(b->rx_if, bi + i, 1);
	}
}
