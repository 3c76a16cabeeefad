/* The packet generator: streams of packets built from a template, produced
 * by the `pg-input` input node.
 *
 * A stream is a template (Ethernet, optionally IPv4 with UDP, TCP or ICMP, or
 * raw bytes) plus per-packet edits: the frame size (fixed, incrementing over
 * a range, or random in it), IPv4 addresses and L4 ports incrementing over a
 * range, with the IPv4 header checksum and the L4 checksum kept right for
 * every packet. Each stream feeds one next node of pg-input, runs on one
 * graph thread, honours a packet limit and a rate, and stamps rx_if.
 *
 * Thread-safety: every function here is a control call, made from the main
 * thread or a control thread (CLI). Once a graph is attached, changes take
 * the graph barrier, so the datapath never sees a half-made change. Counters
 * read through pg_stream_info may be read at any time.
 */
#ifndef SLUICE_NODES_PG_H
#define SLUICE_NODES_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct graph;

#define PG_NAME_MAX 32     /* stream and node names, with the NUL */
#define PG_DATA_MAX 2048   /* raw `data` template bytes */
#define PG_SIZE_MIN 14     /* an Ethernet header */
#define PG_SIZE_MAX 9216   /* also bounded by the pool's buffer data size */

enum pg_size_mode {
	PG_SIZE_FIXED = 0, /* size_min == size_max */
	PG_SIZE_INCREMENT, /* size_min, size_min + 1, ... size_max, size_min, ... */
	PG_SIZE_RANDOM,    /* uniform in [size_min, size_max] */
};

enum pg_l4 {
	PG_L4_UDP = 0,
	PG_L4_TCP,
	PG_L4_ICMP, /* echo request; the sequence number counts packets */
	PG_L4_NONE, /* IPv4 header then payload, protocol 253 (experimental) */
};

struct pg_stream_config {
	char name[PG_NAME_MAX];
	uint64_t limit;    /* packets to send once enabled; 0: unlimited */
	uint64_t rate_pps; /* packets per second; 0: as fast as the loop runs */

	enum pg_size_mode size_mode;
	uint32_t size_min; /* bytes from the Ethernet header on, no FCS */
	uint32_t size_max;

	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	uint16_t ethertype; /* 0x0800 builds IPv4; anything else: Ethernet + payload */

	/* IPv4 (host byte order). Addresses run src_ip, src_ip + 1, ...
	 * src_ip + src_ip_count - 1 and wrap; a count of 0 or 1 keeps them fixed. */
	uint32_t src_ip;
	uint32_t src_ip_count;
	uint32_t dst_ip;
	uint32_t dst_ip_count;
	uint8_t ttl;
	uint8_t dscp; /* 0..63 */
	enum pg_l4 proto;

	/* UDP/TCP ports, each running from the first to the last and wrapping;
	 * a last port of 0 (or equal to the first) keeps the port fixed. */
	uint16_t src_port;
	uint16_t src_port_last;
	uint16_t dst_port;
	uint16_t dst_port_last;

	/* Raw template: when data_len > 0 the packet is these bytes (zero-padded
	 * or cut to the frame size) and the header fields above are unused.
	 * Nothing is rewritten per packet. */
	uint16_t data_len;
	uint8_t data[PG_DATA_MAX];

	char next_node[PG_NAME_MAX]; /* default "ethernet-input" */
	uint32_t rx_if;              /* stamped in every buffer's rx_if */
	uint16_t thread_index;       /* graph thread that produces the stream, default 0 */
	bool enabled;                /* start producing as soon as added */
};

/* Fill a config with the defaults: 64-byte UDP packets 10.0.0.1:1234 ->
 * 10.0.1.1:4321 from 02:00:00:00:00:01 to 02:00:00:00:00:02, TTL 64,
 * unlimited, as fast as possible, to ethernet-input, rx_if 0, thread 0,
 * not enabled (a new stream waits for pg_stream_enable, as in VPP). */
void pg_stream_config_default(struct pg_stream_config *cfg);

/* Check a config without adding it (names, sizes against the headers and the
 * buffer data size, ranges). Returns 0 or -EINVAL with a message in err.
 * Does not check that the next node exists. */
int pg_stream_config_check(const struct pg_stream_config *cfg, char *err, size_t errlen);

/* Bind the generator to a built graph: resolves every stream's next node as
 * an arc of pg-input (adding arcs with graph_add_next as needed). Streams may
 * be added before or after. Returns 0 or a negative errno with the reason in
 * err (pg-input is not in the graph, a stream's next node is missing). */
int pg_attach(struct graph *g, char *err, size_t errlen);

/* Unbind from the graph (before graph_destroy). Streams stay defined. */
void pg_detach(void);

/* Add a stream. Returns 0 or a negative errno with a message in err:
 * -EINVAL bad config, -EEXIST name taken, -ENOENT next node not in the
 * attached graph (or, before attach, not a registered node), -ENOMEM. */
int pg_stream_add(const struct pg_stream_config *cfg, char *err, size_t errlen);

/* Start or stop a stream. Enabling starts a new run: the limit counts from
 * zero again and the rate bucket starts empty. Returns 0 or -ENOENT. */
int pg_stream_enable(const char *name, bool enable);

/* Remove a stream. Returns 0 or -ENOENT. */
int pg_stream_delete(const char *name);

/* Remove every stream. */
void pg_stream_delete_all(void);

struct pg_stream_info {
	char name[PG_NAME_MAX];
	bool enabled;           /* false again once the limit is reached */
	uint64_t packets_sent;  /* in the current run (since the last enable) */
	uint64_t packets_total; /* since the stream was added */
	uint64_t bytes_total;
	const struct pg_stream_config *config; /* valid until the stream is deleted */
};

/* Number of streams; iterate with pg_stream_info(i) for i < count, in the
 * order they were added. */
uint32_t pg_stream_count(void);

/* Describe stream i (0-based) or the stream called name. Returns 0 or -ENOENT. */
int pg_stream_info(uint32_t i, struct pg_stream_info *info);
int pg_stream_info_by_name(const char *name, struct pg_stream_info *info);

/* ---- startup.conf: the `packet-generator` section ----
 *
 *   packet-generator {
 *     s0 { limit 0  rate 1mpps  size 64-1518  size-mode random
 *          src-mac 02:00:00:00:00:01  dst-mac 02:00:00:00:00:02
 *          src-ip 10.0.0.1-10.0.0.100  dst-ip 10.0.1.1  protocol udp
 *          src-port 1024-2047  dst-port 4321  ttl 64  dscp 0
 *          next-node ethernet-input  rx-if 0  thread 0 }
 *     raw { data 0200000000020200000000010806...  next-node error-drop  disabled }
 *   }
 *
 * Streams from the file start enabled unless `disabled` is written.
 */
#define PG_CONF_MAX_STREAMS 16

struct pg_conf {
	uint32_t n_streams;
	struct pg_stream_config streams[PG_CONF_MAX_STREAMS];
};

struct conf_section;
extern const struct conf_section pg_conf_section; /* struct pg_conf */

/* Add every stream of a parsed section (after pg_attach or before it).
 * All or nothing: on error the streams added so far are deleted again.
 * Returns 0 or a negative errno with a message in err. */
int pg_conf_apply(const struct pg_conf *conf, char *err, size_t errlen);

/* Error codes of pg-input, as `show errors` lists them under the node. */
enum pg_input_error {
	PG_INPUT_ERROR_NO_BUFFERS = 0, /* packets not generated: buffer pool exhausted */
	PG_INPUT_ERROR_DROPPED,        /* packets a stream sent straight to error-drop */
	PG_INPUT_N_ERROR,
};

#endif
