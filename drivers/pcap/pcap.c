/* The pcap driver: packets from a capture file, packets into a capture file.
 *
 *   cap0 { driver pcap  rx-file in.pcap  rx-loops 3  tx-file out.pcap }
 *   cap1 { driver pcap  rx-file in.pcap  rx-pace recorded }
 *
 * rx reads a pcap or pcapng file (libpcap tells them apart) as fast as the
 * graph takes it (rx-pace fast, the default) or at the pace it was recorded
 * (rx-pace recorded: each frame is handed up once as much time has passed
 * since the pass began as separates it from the pass's first frame in the
 * file; a frame stamped earlier than the one before it goes at once), rx-loops
 * times (0: forever), then produces nothing. Paced, a poll with nothing due
 * allocates nothing and, when its thread may sleep, wakes it when the
 * next frame is due (graph_thread_wake_within: a timerfd). A
 * frame longer than a buffer's data area arrives as a chain of buffers, as
 * a NIC receives a jumbo frame; one the pool cannot hold now is counted as
 * RX-dropped, and one beyond PCAP_RX_MAX_CHAIN buffers as RX-errors. tx appends every frame to tx-file (pcap, Ethernet link type,
 * stamped with the time of the burst) through a 1 MB stdio buffer, so the
 * file sees one write per megabyte, not one per packet; stop flushes and
 * destroy closes, so the file is complete and readable after either. Without
 * tx-file nothing is taken and the caller counts TX-dropped. A write that
 * fails (disk full) is logged once and shown by `show hardware`; from then
 * on nothing is taken, so every frame sent counts as TX-dropped, and the
 * frames that were waiting in the stdio buffer are lost with it.
 * One rx queue and one tx queue: a file has one position.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drivers/device.h"
#include "graph/buffer.h"
#include "graph/node.h"

#define PCAP_PATH_SIZE 240
#define PCAP_TX_SNAPLEN 65535
#define PCAP_TX_STDIO_BUFFER (1u << 20)
#define PCAP_RX_MAX_CHAIN 64 /* buffers after the first: 128 KB at the default data size */

enum pcap_pace { PCAP_PACE_FAST = 0, PCAP_PACE_RECORDED };
static const char *const pcap_pace_names[] = { "fast", "recorded", NULL };

struct pcap_conf {
	char rx_file[PCAP_PATH_SIZE];
	char tx_file[PCAP_PATH_SIZE];
	uint32_t rx_loops;
	uint32_t rx_pace; /* enum pcap_pace */
};
_Static_assert(sizeof(struct pcap_conf) <= CONF_DRIVER_CONF_SIZE, "pcap conf fits");

static const struct conf_key pcapdev_keys[] = {
	{ .name = "rx-file", .type = CONF_STRING, CONF_FIELD(struct pcap_conf, rx_file),
	  .doc = "pcap or pcapng file to receive from" },
	{ .name = "rx-loops", .type = CONF_UINT, .def = "1", CONF_FIELD(struct pcap_conf, rx_loops),
	  .doc = "times to read rx-file (0: forever)" },
	{ .name = "rx-pace", .type = CONF_ENUM, .def = "fast", .choices = pcap_pace_names,
	  CONF_FIELD(struct pcap_conf, rx_pace), .doc = "fast, or recorded: the file's own timing" },
	{ .name = "tx-file", .type = CONF_STRING, CONF_FIELD(struct pcap_conf, tx_file), .flags = CONF_F_FILE_OUT,
	  .doc = "pcap file to write what is sent" },
	{ 0 },
};

static const struct conf_driver pcapdev_conf_driver = {
	.name = "pcap",
	.doc = "rx from a pcap/pcapng file, tx to a pcap file",
	.keys = pcapdev_keys,
	.size = sizeof(struct pcap_conf),
};

struct pcap_dev {
	struct device dev;
	pcap_t *rx;             /* NULL: no rx file, or finished */
	uint32_t rx_loops;      /* 0: forever */
	uint32_t rx_loops_done;
	uint64_t rx_pass_packets; /* frames read in the current pass */
	bool rx_paced;
	/* paced: a frame read but not yet due (valid until the next read), and
	 * the pass's first frame's stamp and the time it was handed up */
	struct pcap_pkthdr *rx_held_h;
	const u_char *rx_held_data;
	uint64_t rx_pass_stamp_ns;
	uint64_t rx_pass_start_ns;
	pcap_t *tx_dead;        /* the link type and snaplen pcap_dump needs */
	pcap_dumper_t *tx;
	FILE *tx_file;
	int tx_error;           /* errno of the write that failed (disk full): tx takes nothing more */
	char *tx_stdio;         /* the FILE's buffer */
	uint8_t *tx_linear;     /* chained buffers are copied here before writing */
	char rx_path[PCAP_PATH_SIZE];
};

/* ---- rx ---- */

static pcap_t *rx_open(const char *path, char *err, size_t errlen)
{
	char pe[PCAP_ERRBUF_SIZE];
	/* Nanosecond stamps whatever the file holds (libpcap scales them). */
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, pe);
	if (!p)
		snprintf(err, errlen, "pcap: rx-file %s: %s", path, pe);
	return p;
}

static inline uint64_t stamp_ns(const struct pcap_pkthdr *h)
{
	return (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec; /* tv_usec holds ns */
}

/* End of a pass: reopen for the next one, or finish. Returns whether rx
 * goes on. A pass that produced nothing ends rx even when looping forever,
 * so an empty file does not reopen on every poll. */
static bool rx_next_pass(struct pcap_dev *pd)
{
	pcap_close(pd->rx);
	pd->rx = NULL;
	pd->rx_loops_done++;
	if ((pd->rx_loops && pd->rx_loops_done >= pd->rx_loops) || pd->rx_pass_packets == 0)
		return false;
	char err[PCAP_ERRBUF_SIZE + PCAP_PATH_SIZE + 32];
	pd->rx = rx_open(pd->rx_path, err, sizeof(err));
	pd->rx_pass_packets = 0;
	if (!pd->rx)
		base_log("pcap", "%s: %s", pd->dev.name, err);
	return pd->rx != NULL;
}

/* The next frame of the file, passes and damage handled; false at the
 * end of rx. */
static bool rx_read(struct pcap_dev *pd, struct dev_counters *c, struct pcap_pkthdr **h, const u_char **data)
{
	while (pd->rx) {
		int r = pcap_next_ex(pd->rx, h, data);
		if (likely(r == 1)) {
			if (pd->rx_pass_packets++ == 0 && pd->rx_paced) {
				pd->rx_pass_stamp_ns = stamp_ns(*h);
				pd->rx_pass_start_ns = time_now_ns();
			}
			return true;
		}
		if (r != PCAP_ERROR_BREAK) { /* a damaged file: stop reading it */
			base_log("pcap", "%s: rx-file: %s", pd->dev.name, pcap_geterr(pd->rx));
			stat_add(&c->rx_errors, 1);
			pd->rx_pass_packets = 0;
		}
		rx_next_pass(pd);
	}
	return false;
}

/* Paced: whether the frame may go now (its offset in the pass has passed). */
static bool rx_due(const struct pcap_dev *pd, const struct pcap_pkthdr *h, uint64_t now)
{
	uint64_t stamp = stamp_ns(h);
	if (stamp <= pd->rx_pass_stamp_ns)
		return true;
	return now - pd->rx_pass_start_ns >= stamp - pd->rx_pass_stamp_ns;
}

/* Paced, the held frame not due: a sleeping thread wakes when it is
 * (graph/sleep.c's timerfd), instead of polling for it. */
static void rx_wake_when_due(const struct pcap_dev *pd, uint64_t now)
{
	uint64_t at = pd->rx_pass_start_ns + (stamp_ns(pd->rx_held_h) - pd->rx_pass_stamp_ns);
	struct graph_thread *t = graph_thread_self();
	if (t)
		graph_thread_wake_within(t, at > now ? at - now : 0);
}

/* The bytes beyond the first buffer into a chain of buffers taken from
 * the pool now: jumbo frames are rare, the common frame pays one branch.
 * Returns 0, or the counter to charge when the frame cannot be kept. */
static int rx_chain(struct buffer *b, const u_char *data, uint32_t len, uint32_t size)
{
	uint32_t extra[PCAP_RX_MAX_CHAIN];
	uint32_t n = (len - 1) / size;
	if (n > PCAP_RX_MAX_CHAIN)
		return -EMSGSIZE;
	uint32_t got = buffer_alloc(extra, n, -1);
	if (got != n) {
		buffer_free(extra, got);
		return -ENOBUFS;
	}
	memcpy(buffer_data(b), data, size);
	b->current_length = (uint16_t)size;
	struct buffer *tail = b;
	for (uint32_t i = 0, off = size; i < n; i++) {
		uint32_t k = len - off < size ? len - off : size;
		struct buffer *x = buffer_get(extra[i]);
		memcpy(buffer_data(x), data + off, k);
		x->current_length = (uint16_t)k;
		tail->flags |= BUFFER_F_NEXT_PRESENT;
		tail->next_buffer = extra[i];
		tail = x;
		off += k;
	}
	b->total_length_not_including_first = len - size;
	return 0;
}

static uint32_t pcapdev_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct pcap_dev *pd = container_of(dev, struct pcap_dev, dev);
	struct dev_counters *c = &dev->rxq[queue].c;
	uint64_t now = 0;
	if (pd->rx_paced) {
		/* Nothing allocated while the next frame is not due. */
		if (!pd->rx_held_h && !rx_read(pd, c, &pd->rx_held_h, &pd->rx_held_data))
			return 0;
		now = time_now_ns();
		if (!rx_due(pd, pd->rx_held_h, now)) {
			rx_wake_when_due(pd, now);
			return 0;
		}
	} else if (!pd->rx) {
		return 0;
	}
	/* Short of buffers, read fewer: the rest waits in the file. */
	uint32_t got = buffer_alloc(bi, n, -1);
	if (unlikely(!got))
		graph_thread_no_block(graph_thread_self()); /* buffers come back without a wakeup */
	uint32_t k = 0;
	uint32_t data_size = buffer_main.data_size;
	while (k < got) {
		struct pcap_pkthdr *h;
		const u_char *data;
		if (pd->rx_held_h) {
			h = pd->rx_held_h;
			data = pd->rx_held_data;
			pd->rx_held_h = NULL;
		} else {
			if (!rx_read(pd, c, &h, &data))
				break;
			if (pd->rx_paced && !rx_due(pd, h, now)) {
				pd->rx_held_h = h;
				pd->rx_held_data = data;
				break;
			}
		}
		struct buffer *b = buffer_get(bi[k]);
		if (likely(h->caplen <= data_size)) {
			memcpy(buffer_data(b), data, h->caplen);
			b->current_length = (uint16_t)h->caplen;
		} else {
			int e = rx_chain(b, data, h->caplen, data_size);
			if (e) {
				stat_add(e == -ENOBUFS ? &c->rx_dropped : &c->rx_errors, 1);
				continue;
			}
		}
		k++;
	}
	if (k < got)
		buffer_free(bi + k, got - k);
	return k;
}

/* ---- tx ---- */

/* The packet as one run of bytes: the buffer itself, or its chain copied. */
static const uint8_t *tx_bytes(struct pcap_dev *pd, struct buffer *b, uint32_t *len)
{
	if (likely(!(b->flags & BUFFER_F_NEXT_PRESENT))) {
		*len = b->current_length;
		return buffer_data(b);
	}
	uint32_t off = 0;
	for (;;) {
		uint32_t k = MIN((uint32_t)b->current_length, PCAP_TX_SNAPLEN - off);
		memcpy(pd->tx_linear + off, buffer_data(b), k);
		off += k;
		if (!(b->flags & BUFFER_F_NEXT_PRESENT) || off == PCAP_TX_SNAPLEN)
			break;
		b = buffer_get(b->next_buffer);
	}
	*len = off;
	return pd->tx_linear;
}

static uint32_t pcapdev_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	struct pcap_dev *pd = container_of(dev, struct pcap_dev, dev);
	(void)queue;
	if (!pd->tx || pd->tx_error)
		return 0;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct pcap_pkthdr h = { .ts = { .tv_sec = ts.tv_sec, .tv_usec = ts.tv_nsec / 1000 } };
	for (uint32_t i = 0; i < n; i++) {
		uint32_t len;
		const uint8_t *p = tx_bytes(pd, buffer_get(bi[i]), &len);
		h.caplen = h.len = len;
		pcap_dump((u_char *)pd->tx, &h, p);
	}
	if (unlikely(ferror(pd->tx_file))) {
		pd->tx_error = errno ? errno : EIO;
		base_log("pcap", "%s: tx-file: %s: nothing more is written, what is sent counts as TX-dropped", dev->name,
			  strerror(pd->tx_error));
		return 0; /* this burst is not in the file either: the caller drops and counts it */
	}
	buffer_free(bi, n);
	return n;
}

/* ---- control ---- */

static void pcapdev_stop(struct device *dev)
{
	struct pcap_dev *pd = container_of(dev, struct pcap_dev, dev);
	if (pd->tx && pcap_dump_flush(pd->tx) != 0)
		base_log("pcap", "%s: tx-file: flush failed", dev->name);
}

static void pcapdev_destroy(struct device *dev)
{
	struct pcap_dev *pd = container_of(dev, struct pcap_dev, dev);
	if (pd->rx)
		pcap_close(pd->rx);
	if (pd->tx)
		pcap_dump_close(pd->tx); /* flushes and closes tx_file */
	else if (pd->tx_file)
		fclose(pd->tx_file);
	if (pd->tx_dead)
		pcap_close(pd->tx_dead);
	free(pd->tx_stdio);
	free(pd->tx_linear);
	free(pd);
}

/* `show hardware`:
 *   rx-file in.pcap: pass 2 of 3, 120 frames read in this pass, paced
 *   tx-file: open
 */
static int pcapdev_format_hw(struct device *dev, char *buf, size_t len)
{
	const struct pcap_dev *pd = container_of(dev, struct pcap_dev, dev);
	size_t o = 0;
#define OUT(...) o += (size_t)snprintf(buf + MIN(o, len), len - MIN(o, len), __VA_ARGS__)
	if (!pd->rx_path[0])
		OUT("rx-file: none\n");
	else if (!pd->rx)
		OUT("rx-file %s: finished after %u pass(es)\n", pd->rx_path, pd->rx_loops_done);
	else if (pd->rx_loops)
		OUT("rx-file %s: pass %u of %u, %" PRIu64 " frames read in this pass%s\n", pd->rx_path,
		    pd->rx_loops_done + 1, pd->rx_loops, pd->rx_pass_packets, pd->rx_paced ? ", paced" : "");
	else
		OUT("rx-file %s: pass %u (looping forever), %" PRIu64 " frames read in this pass%s\n", pd->rx_path,
		    pd->rx_loops_done + 1, pd->rx_pass_packets, pd->rx_paced ? ", paced" : "");
	if (pd->tx_error)
		OUT("tx-file: write failed: %s", strerror(pd->tx_error));
	else
		OUT("tx-file: %s", pd->tx ? "open" : "none");
#undef OUT
	return (int)o;
}

/* Its thread may sleep: frames come only from polls, paced ones by the
 * wake time rx_burst gives. */
static int pcapdev_rx_fd(struct device *dev, uint16_t queue)
{
	(void)dev;
	(void)queue;
	return DEV_RX_FD_SELF;
}

static const struct device_ops pcapdev_ops = {
	.rx_fd = pcapdev_rx_fd,
	.tx_node = "pcap-tx",
	.format_hw = pcapdev_format_hw,
	.stop = pcapdev_stop,
	.rx_burst = pcapdev_rx_burst,
	.tx_burst = pcapdev_tx_burst,
	.destroy = pcapdev_destroy,
};

static int tx_open(struct pcap_dev *pd, const char *path, char *err, size_t errlen)
{
	pd->tx_dead = pcap_open_dead(DLT_EN10MB, PCAP_TX_SNAPLEN);
	pd->tx_stdio = malloc(PCAP_TX_STDIO_BUFFER);
	pd->tx_linear = malloc(PCAP_TX_SNAPLEN);
	if (!pd->tx_dead || !pd->tx_stdio || !pd->tx_linear) {
		snprintf(err, errlen, "pcap: out of memory");
		return -ENOMEM;
	}
	pd->tx_file = fopen(path, "wb");
	if (!pd->tx_file) {
		int e = errno;
		snprintf(err, errlen, "pcap: tx-file %s: %s", path, strerror(e));
		return -e;
	}
	setvbuf(pd->tx_file, pd->tx_stdio, _IOFBF, PCAP_TX_STDIO_BUFFER);
	pd->tx = pcap_dump_fopen(pd->tx_dead, pd->tx_file);
	if (!pd->tx) {
		snprintf(err, errlen, "pcap: tx-file %s: %s", path, pcap_geterr(pd->tx_dead));
		return -EIO;
	}
	return 0;
}

static struct device *pcapdev_create(const void *conf, char *err, size_t errlen)
{
	const struct pcap_conf *c = conf;
	struct pcap_dev *pd = aligned_alloc(64, ROUND_UP(sizeof(*pd), 64));
	if (!pd) {
		snprintf(err, errlen, "pcap: out of memory");
		return NULL;
	}
	memset(pd, 0, sizeof(*pd));
	pd->dev.ops = &pcapdev_ops;
	pd->dev.n_rx_queues = 1;
	pd->dev.n_tx_queues = 1;
	pd->rx_loops = c->rx_loops;
	pd->rx_paced = c->rx_pace == PCAP_PACE_RECORDED;
	if (c->rx_file[0]) {
		snprintf(pd->rx_path, sizeof(pd->rx_path), "%s", c->rx_file);
		pd->rx = rx_open(c->rx_file, err, errlen);
		if (!pd->rx)
			goto fail;
	}
	if (c->tx_file[0] && tx_open(pd, c->tx_file, err, errlen) < 0)
		goto fail;
	return &pd->dev;
fail:
	pcapdev_destroy(&pd->dev);
	return NULL;
}

static const struct dev_driver pcapdev_driver = {
	.name = "pcap",
	.conf = &pcapdev_conf_driver,
	.create = pcapdev_create,
};
DEV_DRIVER_REGISTER(pcapdev_driver)
