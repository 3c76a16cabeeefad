/* pcap capture of interface traffic: `pcap capture rx|tx|drop [interface
 * NAME] max N file FILE [filter EXPR] [node NODE [reason TEXT]]` and
 * `pcap capture off` (VPP's spelling).
 *
 * One capture at a time. Starting it preallocates N slots of snaplen bytes;
 * the datapath (device input nodes for rx, <driver>-tx for tx) copies each
 * matching packet into the next free slot and marks it ready, with no
 * allocation and no system call; after N packets it stops on its own. With
 * a filter (graph/pkt_filter.h) only the packets it accepts take a slot;
 * with an error range only the drops counted under those errors do. The
 * file is written with libpcap from the control side only: the pcap-capture
 * process node writes ready slots in order, a bounded number per run, and
 * closes the file once all N are written; `pcap capture off` writes what is
 * left and closes it at once.
 *
 * Thread-safety: the datapath calls dev_capture_packets from any thread
 * (slots are claimed with one atomic add each). dev_capture_start and
 * dev_capture_stop run on a control thread with the datapath parked (graph
 * barrier); dev_capture_flush may run on thread 0 at any time (a mutex
 * keeps it and dev_capture_stop apart).
 */
#ifndef SLUICE_DRIVERS_CAPTURE_H
#define SLUICE_DRIVERS_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/util.h"
#include "graph/pkt_filter.h"

/* What to capture (dev_capture.what). */
#define DEV_CAPTURE_RX (1u << 0)
#define DEV_CAPTURE_TX (1u << 1)
#define DEV_CAPTURE_DROP (1u << 2)

#define DEV_CAPTURE_MAX_PACKETS 1000000u
#define DEV_CAPTURE_MAX_BYTES (1ull << 30) /* N x snaplen preallocated */
#define DEV_CAPTURE_SNAPLEN_DEFAULT 2048u

/* The line the datapath reads per burst. */
struct dev_capture_hot {
	uint32_t what;     /* DEV_CAPTURE_* being captured now; 0: off or full */
	uint32_t if_index; /* DEV_INDEX_INVALID: any interface */
};
extern struct dev_capture_hot dev_capture;

/* Whether any of `what` is being captured: one load and a branch. */
static inline bool dev_capture_on(uint32_t what)
{
	return unlikely(__atomic_load_n(&dev_capture.what, __ATOMIC_RELAXED) & what);
}

/* A graph drop tap (graph_set_drop_tap): captures dropped packets by the
 * interface they arrived on while DEV_CAPTURE_DROP is armed. */
void dev_capture_drop_tap(void *arg, const uint32_t *bi, uint32_t n);

/* Copy n packets seen on interface if_index into free slots (the caller
 * checked dev_capture_on for its direction); does nothing for another
 * interface than the one asked for. Chains are copied up to snaplen. Never
 * blocks, never allocates. */
void dev_capture_packets(uint32_t if_index, const uint32_t *bi, uint32_t n);

struct dev_capture_params {
	uint32_t what;
	uint32_t if_index;   /* DEV_INDEX_INVALID: any */
	uint32_t max;        /* packets, 1..DEV_CAPTURE_MAX_PACKETS */
	uint32_t snaplen;    /* bytes kept per packet, 0: the default */
	const char *path;
	FILE *file;          /* path opened by the caller (the CLI, held to
			      * cli-file-dir), or NULL: open path here */
	struct pkt_filter *filter; /* compiled by the caller, taken in every case; NULL: all */
	/* Drops: only those whose b->error (global error index) lies in
	 * [drop_error_first, drop_error_first + drop_error_count); count 0: all.
	 * drop_node and drop_reason name them for status (NULL: none). */
	uint32_t drop_error_first, drop_error_count;
	const char *drop_node, *drop_reason;
};

/* Open the file (or take p->file: truncated once the capture starts,
 * closed in every case), preallocate the slots and arm the datapath. 0,
 * -EBUSY (a capture is running or its file not yet written), -EINVAL,
 * -ENOMEM, or the errno of opening the file; a message for a person in
 * err. */
int dev_capture_start(const struct dev_capture_params *p, char *err, size_t errlen);

/* Write up to budget ready packets, in order; close the file once all max
 * are written. Returns the packets written. Safe on thread 0 while the
 * datapath runs. */
uint32_t dev_capture_flush(uint32_t budget);

/* Disarm, write everything captured, close the file. Returns 0 and the
 * count written in *n (the total of the capture, including what flush
 * wrote), or -ENOENT when no capture was started since the last stop. */
int dev_capture_stop(uint64_t *n, char *path, size_t pathlen);

struct dev_capture_status {
	bool open;          /* a file is open (capturing, or not yet all written) */
	uint32_t what;      /* armed directions (0 once max is reached) */
	uint32_t max;
	uint64_t captured;  /* packets copied into slots */
	uint64_t written;   /* packets written to the file */
	char path[256];
	char filter[PKT_FILTER_EXPR_MAX]; /* "" when none */
	char drop_node[64];               /* "" when drops are not selected */
	char drop_reason[128];            /* "" when every error of drop_node */
};
void dev_capture_get_status(struct dev_capture_status *st);

#endif
