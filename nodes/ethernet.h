/* Ethernet constants and the trace helpers the device nodes share. */
#ifndef SLUICE_NODES_ETHERNET_H
#define SLUICE_NODES_ETHERNET_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/buffer.h"

#define ETH_HDR_LEN 14
#define ETH_TYPE_IP4 0x0800
#define ETH_TYPE_ARP 0x0806
#define ETH_TYPE_IP6 0x86dd
#define ETH_TRACE_NAME_SIZE 16 /* interface names in trace records, truncated */

/* Bytes of the whole packet, chain included. */
static inline uint32_t eth_packet_length(const struct buffer *b)
{
	return b->current_length + ((b->flags & BUFFER_F_NEXT_PRESENT) ? b->total_length_not_including_first : 0);
}

/* Copy the first 14 bytes of the packet (zeros past its end) for a trace. */
static inline void eth_trace_header(uint8_t hdr[ETH_HDR_LEN], struct buffer *b)
{
	memset(hdr, 0, ETH_HDR_LEN);
	memcpy(hdr, buffer_data(b), b->current_length < ETH_HDR_LEN ? b->current_length : ETH_HDR_LEN);
}

/* An interface's name for a trace record ("?" for none): records outlive
 * interfaces, so they keep the name, not a pointer. */
static inline void eth_trace_name(char name[ETH_TRACE_NAME_SIZE], uint32_t if_index)
{
	const struct device *d = dev_by_index(if_index);
	memset(name, 0, ETH_TRACE_NAME_SIZE);
	memcpy(name, d ? d->name : "?", strnlen(d ? d->name : "?", ETH_TRACE_NAME_SIZE));
}

/* "02:00:00:00:00:01" into buf (at least 18 bytes). */
static inline const char *eth_format_mac(char *buf, const uint8_t m[6])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

/* An interface's name for a show command ("-" for none). */
static inline const char *eth_if_name(uint32_t if_index)
{
	const struct device *d = dev_by_index(if_index);
	return d ? d->name : "-";
}

/* "02:00:00:00:00:01 -> 02:00:00:00:00:02 type 0x0800" */
static inline int eth_format_header(char *buf, size_t len, const uint8_t h[ETH_HDR_LEN])
{
	return snprintf(buf, len,
			"%02x:%02x:%02x:%02x:%02x:%02x -> %02x:%02x:%02x:%02x:%02x:%02x type 0x%04x", h[6],
			h[7], h[8], h[9], h[10], h[11], h[0], h[1], h[2], h[3], h[4], h[5],
			(unsigned)(h[12] << 8 | h[13]));
}

#endif
