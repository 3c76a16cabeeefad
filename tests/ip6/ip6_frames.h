/* IPv6 frames for the tests/ip6 suites, written byte by byte and
 * independently of nodes/ip6, so that a test compares the nodes' output
 * with bytes it did not get from them. */
#ifndef SLUICE_TESTS_IP6_FRAMES_H
#define SLUICE_TESTS_IP6_FRAMES_H

#include <arpa/inet.h>
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "tests/pkt_build.h"

/* out = the address written s (the test's own, so it must parse). */
static inline void a6(uint8_t out[16], const char *s)
{
	ck_assert_int_eq(inet_pton(AF_INET6, s, out), 1);
}

/* The upper-layer checksum (RFC 8200 §8.1, RFC 4443 §2.3) the slow way:
 * the pseudo-header and the message copied together, then RFC 1071. */
static inline uint16_t ref_csum6(const uint8_t src[16], const uint8_t dst[16], uint8_t nh, const uint8_t *l4,
				 uint32_t len)
{
	static uint8_t tmp[4096];
	memcpy(tmp, src, 16);
	memcpy(tmp + 16, dst, 16);
	put32(tmp + 32, len);
	put32(tmp + 36, nh);
	memcpy(tmp + 40, l4, len);
	return ref_csum(tmp, 40 + len);
}

/* An IPv6 header at p. */
static inline uint32_t ip6hdr(uint8_t *p, const uint8_t src[16], const uint8_t dst[16], uint8_t nh, uint8_t hlim,
			      uint16_t plen)
{
	put32(p, 0x60000000u);
	put16(p + 4, plen);
	p[6] = nh;
	p[7] = hlim;
	memcpy(p + 8, src, 16);
	memcpy(p + 24, dst, 16);
	return 40;
}

/* Ethernet + IPv6 + an ICMPv6 message of l4_len bytes at p + 54, whose
 * checksum is filled in. Returns the frame's length. */
static inline uint32_t icmp6_frame(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], const uint8_t src[16],
				   const uint8_t dst[16], uint8_t hlim, uint32_t l4_len)
{
	uint32_t n = eth(p, dmac, smac, 0x86dd);
	n += ip6hdr(p + n, src, dst, 58, hlim, (uint16_t)l4_len);
	put16(p + n + 2, 0);
	put16(p + n + 2, ref_csum6(src, dst, 58, p + n, l4_len));
	return n + l4_len;
}

/* A Neighbor Solicitation's message (RFC 4861 §4.3) for target at m, with
 * a source link-layer option when sll is not NULL. Returns its length. */
static inline uint32_t icmp6_ns_msg(uint8_t *m, const uint8_t target[16], const uint8_t *sll)
{
	memset(m, 0, 32);
	m[0] = 135;
	memcpy(m + 8, target, 16);
	if (!sll)
		return 24;
	m[24] = 1;
	m[25] = 1;
	memcpy(m + 26, sll, 6);
	return 32;
}

/* A Neighbor Advertisement's message (RFC 4861 §4.4) for target at m, with
 * flags (R 0x80, S 0x40, O 0x20) and a target link-layer option. */
static inline uint32_t icmp6_na_msg(uint8_t *m, uint8_t flags, const uint8_t target[16], const uint8_t tll[6])
{
	memset(m, 0, 32);
	m[0] = 136;
	m[4] = flags;
	memcpy(m + 8, target, 16);
	m[24] = 2;
	m[25] = 1;
	memcpy(m + 26, tll, 6);
	return 32;
}

#endif
