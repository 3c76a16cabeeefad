/* Software offloads for the af-packet driver: what a NIC would have done to
 * frames a local Linux stack hands to a veth.
 *
 * A host behind a veth sends TCP and UDP with the checksum left for the
 * "hardware" (the kernel reports it as TP_STATUS_CSUMNOTREADY) and TCP in
 * GSO super-frames of up to 64 KB. Before such a frame leaves sluice on a
 * wire it must carry a correct checksum and fit the MTU, so rx completes the
 * one and segments the other here.
 *
 * All functions work on one linear frame and never allocate. Offsets are
 * from the first byte of the Ethernet header. Thread-safe (no state).
 */
#ifndef SLUICE_DRIVERS_AF_PACKET_OFFLOAD_H
#define SLUICE_DRIVERS_AF_PACKET_OFFLOAD_H

#include <stdint.h>

/* Complete the TCP or UDP checksum of the IPv4 or IPv6 packet whose network
 * header starts at l3: the field is recomputed over the pseudo-header and
 * the whole L4 segment, whatever it held. Returns 0, or -1 (frame left as
 * it was) when it is not an unfragmented TCP/UDP packet over IPv4 or IPv6
 * (without extension headers) that fits in len. */
int afp_l4_csum_complete(uint8_t *frame, uint32_t len, uint32_t l3);

/* How a TCP super-frame splits into segments that fit max_l3 bytes of IP
 * packet (the MTU). */
struct afp_tso {
	uint32_t l3;       /* network header offset */
	uint32_t l4;       /* TCP header offset */
	uint32_t hdr_len;  /* L2 + L3 + TCP headers, copied into every segment */
	uint32_t payload;  /* TCP payload bytes of the super-frame */
	uint32_t mss;      /* payload bytes per segment (the last may be shorter) */
	uint32_t n_segs;
	uint8_t ip_version;
};

/* Plan the segmentation of a TCP frame of len bytes with its network header
 * at l3. Returns 0, or -1 when the frame is not TCP over IPv4 (unfragmented)
 * or IPv6 (no extension headers), is inconsistent with len, or its headers
 * leave no room for payload within max_l3. */
int afp_tso_plan(const uint8_t *frame, uint32_t len, uint32_t l3, uint32_t max_l3, struct afp_tso *t);

/* Write segment i (< t->n_segs) of frame into out, which has room for
 * t->hdr_len + t->mss bytes: headers copied, IPv4 length, id and header
 * checksum or IPv6 payload length set, TCP sequence number advanced, FIN and
 * PSH kept on the last segment only and CWR on the first only, TCP
 * checksum complete. Returns the segment's length. */
uint32_t afp_tso_segment(const uint8_t *frame, const struct afp_tso *t, uint32_t i, uint8_t *out);

#endif
