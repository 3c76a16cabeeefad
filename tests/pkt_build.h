/* Test helpers that write packets byte by byte, independent of the
 * nodes' own headers (tests/ip4, tests/lcp). */
#ifndef SLUICE_TESTS_PKT_BUILD_H
#define SLUICE_TESTS_PKT_BUILD_H

#include <stdint.h>
#include <string.h>

#include "base/bytes.h"

/* RFC 1071 the slow way: big-endian 16-bit words, carries folded at the end. */
static inline uint16_t ref_csum(const uint8_t *p, uint32_t n)
{
	uint64_t s = 0;
	for (uint32_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)(p[n - 1] << 8);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* An Ethernet header at p; returns its length. */
static inline uint32_t eth(uint8_t *p, const uint8_t dst[6], const uint8_t src[6], uint16_t type)
{
	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	put16(p + 12, type);
	return 14;
}

/* An Ethernet/IPv4 ARP packet (RFC 826) behind an Ethernet header,
 * zero-padded to pad_to bytes; host-order addresses. Returns its length. */
static inline uint32_t arp_frame(uint8_t *p, const uint8_t edst[6], const uint8_t esrc[6], uint16_t op,
				 const uint8_t sha[6], uint32_t spa, const uint8_t tha[6], uint32_t tpa, uint32_t pad_to)
{
	uint32_t n = eth(p, edst, esrc, 0x0806);
	put16(p + n, 1);
	put16(p + n + 2, 0x0800);
	p[n + 4] = 6;
	p[n + 5] = 4;
	put16(p + n + 6, op);
	memcpy(p + n + 8, sha, 6);
	put32(p + n + 14, spa);
	memcpy(p + n + 18, tha, 6);
	put32(p + n + 24, tpa);
	n += 28;
	while (n < pad_to)
		p[n++] = 0;
	return n;
}

#endif
