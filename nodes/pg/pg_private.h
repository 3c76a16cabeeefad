/* The packet generator's stream layout, shared by its control code
 * (nodes/pg/pg.c) and its node (nodes/pg/pg-input.c). */
#ifndef SLUICE_NODES_PG_PRIVATE_H
#define SLUICE_NODES_PG_PRIVATE_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/bytes.h"
#include "graph/node.h"
#include "nodes/pg/pg.h"

#define ETH_HDR_LEN 14
#define IP4_HDR_LEN 20
#define UDP_HDR_LEN 8
#define TCP_HDR_LEN 20
#define ICMP_HDR_LEN 8
#define ETHERTYPE_IP4 0x0800
#define IP_PROTO_ICMP 1
#define IP_PROTO_TCP 6
#define IP_PROTO_UDP 17
#define IP_PROTO_EXPERIMENT 253

/* What the per-packet loop reads, fixed when the stream is added. The loop
 * works on a stack copy: its byte stores into packets could otherwise alias
 * every one of these and force a reload per field per packet. */
struct pg_edit {
	const uint8_t *tmpl;         /* size_max bytes: the packet at its largest */
	const uint32_t *payload_sum; /* [k]: one's-complement sum of the first k payload bytes */
	uint32_t src_ip, src_n;      /* first address, addresses to cycle through */
	uint32_t dst_ip, dst_n;
	uint32_t sport, sport_n;
	uint32_t dport, dport_n;
	uint32_t ip_sum; /* IPv4 header words that never change */
	uint32_t l4_sum; /* L4 header (and pseudo-header) words that never change */
	uint32_t size_min, size_max;
	uint32_t rx_if;
	uint8_t size_mode;
	uint8_t proto;
	bool ip4;
};

/* Where the per-packet sequences stand; copied in and out once per burst. */
struct pg_cursor {
	uint64_t rng;
	uint32_t size; /* next size in increment mode */
	uint32_t src_i, dst_i, sport_i, dport_i;
	uint16_t icmp_seq;
};

struct pg_stream {
	struct pg_stream_config cfg;
	struct pg_edit edit;
	uint8_t *tmpl;
	uint32_t *payload_sum;
	uint32_t hdr_len; /* bytes before the payload */
	double tokens_per_tick;
	uint16_t next_index;
	bool as_received; /* next node ethernet-input: the path a device's rx takes */

	/* written by the owning thread while enabled */
	alignas(64) bool enabled;
	struct pg_cursor cur;
	double tokens;
	uint64_t last_ticks;
	uint64_t n_sent;  /* this run */
	uint64_t n_total; /* since added */
	uint64_t n_bytes;
};

struct pg_main {
	struct pg_stream **streams;
	uint32_t n_streams;
	uint32_t n_alloc;
	struct graph *graph; /* attached graph, NULL before pg_attach */
	int node_index;      /* pg-input in it */
	int sched_next;      /* pg-input's arc to sched-ingress; -1: not in the graph */
};
extern struct pg_main pg_main;

static inline uint32_t csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint32_t)sum;
}

#endif
