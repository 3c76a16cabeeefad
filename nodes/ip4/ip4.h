/* IPv4 shared by the ip4 nodes: the header, ICMP constants, the Internet
 * checksum (RFC 1071) and its incremental update (RFC 1624), and the scratch
 * the ip4 nodes keep in a buffer's opaque bytes.
 *
 * Addresses and header fields stay in network byte order everywhere in the
 * datapath; the one's-complement sum is byte-order independent (RFC 1071
 * §2(B)), so checksums are computed on the words as they lie in memory.
 */
#ifndef SLUICE_NODES_IP4_H
#define SLUICE_NODES_IP4_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "graph/buffer.h"

#define IP4_HDR_LEN 20
#define IP4_PROTO_ICMP 1
#define IP4_FLAG_DF 0x4000 /* in frag_off, host order */
#define IP4_FRAG_MASK 0x3fff /* MF and the offset: non-zero for a fragment */
#define IP4_TTL_DEFAULT 64

#define ICMP4_ECHO_REPLY 0
#define ICMP4_DEST_UNREACH 3
#define ICMP4_HOST_UNREACH 1 /* code of DEST_UNREACH (RFC 792) */
#define ICMP4_FRAG_NEEDED 4 /* code of DEST_UNREACH */
#define ICMP4_ADMIN_PROHIBITED 13 /* code of DEST_UNREACH (RFC 1812 §5.2.7.1) */
#define ICMP4_ECHO_REQUEST 8
#define ICMP4_TIME_EXCEEDED 11
#define ICMP4_TTL_EXCEEDED 0 /* code of TIME_EXCEEDED */
#define ICMP4_HDR_LEN 8
/* What an ICMP error quotes of the offending packet: its IP header and the
 * first 8 bytes of its payload (RFC 792; RFC 1812 §4.3.2.3 allows more). */
#define ICMP4_ERROR_QUOTE_PAYLOAD 8

struct ip4_header {
	uint8_t ver_ihl; /* version 4 in the high nibble, header length in words below */
	uint8_t tos;
	uint16_t total_length;
	uint16_t id;
	uint16_t frag_off; /* flags and fragment offset */
	uint8_t ttl;
	uint8_t protocol;
	uint16_t checksum;
	uint32_t src;
	uint32_t dst;
} __attribute__((packed, aligned(2))); /* behind a 14-byte Ethernet header: 2-byte aligned */
_Static_assert(sizeof(struct ip4_header) == IP4_HDR_LEN, "IPv4 header without options");

struct icmp4_header {
	uint8_t type;
	uint8_t code;
	uint16_t checksum;
	uint16_t id;  /* echo; unused for time-exceeded */
	uint16_t seq; /* echo; next-hop MTU (low half) for frag-needed */
};
_Static_assert(sizeof(struct icmp4_header) == ICMP4_HDR_LEN, "ICMP header");

/* What the ip4 nodes keep in buffer->opaque while they own a packet. */
struct ip4_opaque {
	uint32_t adj_index; /* set by ip4-lookup */
	uint8_t flags;      /* IP4_OPAQUE_F_* */
};
_Static_assert(sizeof(struct ip4_opaque) <= sizeof(((struct buffer *)0)->opaque), "fits the opaque");

/* Made by sluice itself (echo reply, ICMP error): ip4-rewrite sends it with
 * the TTL it has, without a decrement. */
#define IP4_OPAQUE_F_LOCAL_ORIGIN (1u << 0)

static inline struct ip4_opaque *ip4_opaque(struct buffer *b)
{
	return (struct ip4_opaque *)b->opaque;
}

static inline uint32_t ip4_header_bytes(const struct ip4_header *h)
{
	return (uint32_t)(h->ver_ihl & 0xf) * 4;
}

/* ---- the Internet checksum ---- */

/* Add len bytes at p to a running 32-bit one's-complement accumulator (an
 * odd last byte is padded with zero, RFC 1071). Returns the new sum,
 * unfolded: keep adding, then ip4_csum_fold. */
static inline uint32_t ip4_csum_add(uint32_t sum, const void *p, uint32_t len)
{
	const uint8_t *b = p;
	uint64_t s = sum;
	while (len >= 4) {
		uint32_t w;
		memcpy(&w, b, 4);
		s += w;
		b += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t w;
		memcpy(&w, b, 2);
		s += w;
		b += 2;
		len -= 2;
	}
	if (len) {
		uint8_t last[2] = { b[0], 0 };
		uint16_t w;
		memcpy(&w, last, 2);
		s += w;
	}
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

/* Fold a 32-bit accumulator to 16 bits (end-around carry). */
static inline uint16_t ip4_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The checksum to store for len bytes at p (checksum field zeroed first). */
static inline uint16_t ip4_csum(const void *p, uint32_t len)
{
	return (uint16_t)~ip4_csum_fold(ip4_csum_add(0, p, len));
}

/* True when the header (options included) sums to all ones: valid. */
static inline bool ip4_header_csum_ok(const struct ip4_header *h)
{
	return ip4_csum_fold(ip4_csum_add(0, h, ip4_header_bytes(h))) == 0xffff;
}

/* Recompute and store the header checksum. */
static inline void ip4_header_csum_set(struct ip4_header *h)
{
	h->checksum = 0;
	h->checksum = ip4_csum(h, ip4_header_bytes(h));
}

/* RFC 1624 eqn. 3: the new checksum after one 16-bit word of the covered
 * data changes from old_word to new_word: HC' = ~(~HC + ~m + m'). All three
 * as they lie in memory. Unlike eqn. 2 it never yields 0xffff (-0) for a
 * sum that must be 0x0000 (the RFC's §4 example). */
static inline uint16_t ip4_csum_update16(uint16_t csum, uint16_t old_word, uint16_t new_word)
{
	uint32_t s = (uint16_t)~csum;
	s += (uint16_t)~old_word;
	s += new_word;
	return (uint16_t)~ip4_csum_fold(s);
}

/* The same for a 32-bit word (an address). */
static inline uint16_t ip4_csum_update32(uint16_t csum, uint32_t old_word, uint32_t new_word)
{
	uint32_t s = (uint16_t)~csum;
	s += (uint16_t)~old_word + (uint16_t)~(old_word >> 16);
	s += (new_word & 0xffff) + (new_word >> 16);
	return (uint16_t)~ip4_csum_fold(s);
}

/* Decrement the TTL and patch the checksum (RFC 1624 eqn. 3 on the
 * TTL/protocol word). The caller has checked ttl > 1. */
static inline void ip4_ttl_decrement(struct ip4_header *h)
{
	uint16_t old_word, new_word;
	memcpy(&old_word, &h->ttl, 2);
	h->ttl--;
	memcpy(&new_word, &h->ttl, 2);
	h->checksum = ip4_csum_update16(h->checksum, old_word, new_word);
}

/* One's-complement sum of the len bytes that follow skip bytes of the
 * first buffer, walking the chain. A segment that starts at an odd offset
 * of the message has its bytes in the other halves of the 16-bit words:
 * its folded sum is byte-swapped (RFC 1071 §2(B)). Returns false when the
 * chain holds fewer than len bytes. (icmp4-echo; ip6-local too.) */
static inline bool ip4_chain_sum(struct buffer *b, uint32_t skip, uint32_t len, uint32_t *sum)
{
	uint32_t s = 0, done = 0;
	const uint8_t *p = buffer_data(b) + skip;
	uint32_t have = b->current_length - skip;
	for (;;) {
		uint32_t k = have < len - done ? have : len - done;
		uint16_t part = ip4_csum_fold(ip4_csum_add(0, p, k));
		s += (done & 1) ? (uint16_t)((part >> 8) | (part << 8)) : part;
		done += k;
		if (done == len)
			break;
		if (!(b->flags & BUFFER_F_NEXT_PRESENT))
			return false;
		b = buffer_get(b->next_buffer);
		p = buffer_data(b);
		have = b->current_length;
	}
	*sum = s;
	return true;
}

/* The rate limit of ICMP errors (RFC 1812 §4.3.2.8, RFC 4443 §2.4(f)): a
 * token bucket per thread, in nanoseconds of credit, rate per second in
 * bursts of burst; shared by ip4-rewrite and the ICMPv6 errors. */
struct icmp_rate_bucket {
	uint64_t credit_ns;
	uint64_t last_ns;
};

/* Whether one more error may go now; *now is read once per frame (0: not
 * yet). */
static inline bool icmp_rate_take(struct icmp_rate_bucket *bk, uint64_t *now, uint32_t rate, uint32_t burst)
{
	const uint64_t cost = 1000000000ull / rate;
	if (!*now)
		*now = time_now_ns();
	bk->credit_ns = MIN(bk->credit_ns + (*now - bk->last_ns), cost * burst);
	bk->last_ns = *now;
	if (bk->credit_ns < cost)
		return false;
	bk->credit_ns -= cost;
	return true;
}

/* "ADDR/L" of family af (AF_INET or AF_INET6) into addr (network order)
 * and *plen; plen_optional lets "ADDR" through with the full length and
 * *had_plen (when not NULL) false. The CLI's parser for both families. */
static inline bool ip_parse_prefix(int af, const char *w, void *addr, uint8_t *plen, bool plen_optional,
				   bool *had_plen)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned long max = af == AF_INET ? 32 : 128;
	const char *slash = strchr(w, '/');
	if (had_plen)
		*had_plen = slash != NULL;
	if (!slash) {
		*plen = (uint8_t)max;
		return plen_optional && inet_pton(af, w, addr) == 1;
	}
	size_t n = (size_t)(slash - w);
	if (n >= sizeof(buf) || !slash[1] || slash[1] == '-' || slash[1] == '+')
		return false;
	memcpy(buf, w, n);
	buf[n] = 0;
	char *end;
	unsigned long l = strtoul(slash + 1, &end, 10);
	if (*end || l > max)
		return false;
	*plen = (uint8_t)l;
	return inet_pton(af, buf, addr) == 1;
}

/* ---- the flow hash (ECMP) ---- */

#define IP4_PROTO_TCP 6
#define IP4_PROTO_UDP 17
#define IP4_PROTO_SCTP 132

/* A 32-bit hash of the packet's 5-tuple: addresses, protocol and, for TCP,
 * UDP and SCTP when not a fragment, the ports (a fragment's later pieces
 * carry none, so every piece of one datagram hashes alike: one flow, one path,
 * no reordering, RFC 2992). The words are combined and mixed with MurmurHash3's
 * 64-bit finalizer (fmix64): two multiplies and three shifts, no table, no
 * per-router seed (so a test can tell which path a port takes), and full
 * avalanche, so the few low bits that choose a bucket depend on every
 * input bit; CRC32C would need SSE4.2 per target, Toeplitz (RSS) costs a
 * loop of 96 steps. Any byte order: one flow gives one value. */
static inline uint32_t ip_flow_mix(uint64_t k, uint32_t ports, uint8_t protocol)
{
	k ^= (((uint64_t)ports << 8) | protocol) * 0x9e3779b97f4a7c15ull;
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return (uint32_t)k;
}

/* (ip_flow_mix: the words of the flow, already folded into k, with the
 * ports and protocol; shared with ip6_flow_hash.) */
static inline uint32_t ip4_flow_hash(const struct ip4_header *h)
{
	uint64_t k = ((uint64_t)h->src << 32) | h->dst;
	uint32_t ports = 0, ihl = ip4_header_bytes(h);
	if ((h->protocol == IP4_PROTO_TCP || h->protocol == IP4_PROTO_UDP || h->protocol == IP4_PROTO_SCTP) &&
	    !(h->frag_off & htons(IP4_FRAG_MASK)) && ntohs(h->total_length) >= ihl + 4)
		memcpy(&ports, (const uint8_t *)h + ihl, 4);
	return ip_flow_mix(k, ports, h->protocol);
}

/* "10.1.0.2" into buf (at least 16 bytes) from a network-order address. */
static inline const char *ip4_format_addr(char *buf, uint32_t addr)
{
	return inet_ntop(AF_INET, &addr, buf, 16);
}

#endif
