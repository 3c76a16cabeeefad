/* Checksum completion and TCP segmentation for af-packet rx (see offload.h).
 *
 * The Internet checksum is summed 8 bytes at a time in host order with the
 * carry folded back in (RFC 1071 section 2: byte order does not matter as
 * long as the result is stored the way it was summed), so no byte swapping
 * happens per word. Every region summed before the last starts and ends at
 * an even offset of the checksummed stream, as the method requires.
 */
#include <stdbool.h>
#include <string.h>

#include "base/bytes.h"
#include "drivers/af_packet/offload.h"

#define IP_PROTO_TCP 6
#define IP_PROTO_UDP 17
#define TCP_FIN 0x01
#define TCP_PSH 0x08
#define TCP_CWR 0x80

static uint64_t sum_bytes(uint64_t s, const uint8_t *p, uint32_t n)
{
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		s += w;
		s += s < w;
		p += 8;
		n -= 8;
	}
	if (n) {
		uint64_t w = 0;
		memcpy(&w, p, n); /* zero padding after the last byte, as the RFC pads */
		s += w;
		s += s < w;
	}
	return s;
}

static uint16_t fold(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Store ~sum as it was summed (host order of network bytes). */
static void put_csum(uint8_t *field, uint64_t s, bool udp)
{
	uint16_t c = (uint16_t)~fold(s);
	if (udp && c == 0)
		c = 0xffff; /* 0 means "no checksum" in UDP */
	memcpy(field, &c, 2);
}

static void ip4_header_csum(uint8_t *ip, uint32_t ihl)
{
	ip[10] = ip[11] = 0;
	put_csum(ip + 10, sum_bytes(0, ip, ihl), false);
}

/* The L4 part of a packet: where it starts, how long the IP header says it
 * is, its protocol, and the pseudo-header's sum. */
struct l4_view {
	uint32_t l4;
	uint32_t l4_len;
	uint8_t proto;
	uint8_t ip_version;
	uint64_t pseudo;
};

static int l4_view(const uint8_t *f, uint32_t len, uint32_t l3, struct l4_view *v)
{
	if (l3 + 20 > len)
		return -1;
	uint8_t tail[12] = { 0 };
	v->ip_version = f[l3] >> 4;
	if (v->ip_version == 4) {
		uint32_t ihl = (f[l3] & 0xfu) * 4;
		uint32_t tot = get16(f + l3 + 2);
		if (ihl < 20 || tot < ihl || l3 + tot > len || (get16(f + l3 + 6) & 0x3fff))
			return -1; /* short, or a fragment (MF set or an offset) */
		v->proto = f[l3 + 9];
		v->l4 = l3 + ihl;
		v->l4_len = tot - ihl;
		/* source, destination, then zero, protocol, L4 length */
		tail[1] = v->proto;
		put16(tail + 2, (uint16_t)v->l4_len);
		v->pseudo = sum_bytes(sum_bytes(0, f + l3 + 12, 8), tail, 4);
	} else if (v->ip_version == 6) {
		if (l3 + 40 > len)
			return -1;
		v->proto = f[l3 + 6]; /* extension headers are not followed */
		v->l4 = l3 + 40;
		v->l4_len = get16(f + l3 + 4);
		if (v->l4 + v->l4_len > len)
			return -1;
		/* source, destination, then 32-bit length, three zeros, next header */
		put32(tail, v->l4_len);
		tail[7] = v->proto;
		v->pseudo = sum_bytes(sum_bytes(0, f + l3 + 8, 32), tail, 8);
	} else {
		return -1;
	}
	return 0;
}

int afp_l4_csum_complete(uint8_t *frame, uint32_t len, uint32_t l3)
{
	struct l4_view v;
	if (l4_view(frame, len, l3, &v) < 0)
		return -1;
	uint32_t field;
	if (v.proto == IP_PROTO_TCP && v.l4_len >= 20)
		field = 16;
	else if (v.proto == IP_PROTO_UDP && v.l4_len >= 8)
		field = 6;
	else
		return -1;
	uint8_t *l4 = frame + v.l4;
	l4[field] = l4[field + 1] = 0;
	put_csum(l4 + field, sum_bytes(v.pseudo, l4, v.l4_len), v.proto == IP_PROTO_UDP);
	return 0;
}

int afp_tso_plan(const uint8_t *frame, uint32_t len, uint32_t l3, uint32_t max_l3, struct afp_tso *t)
{
	struct l4_view v;
	if (l4_view(frame, len, l3, &v) < 0 || v.proto != IP_PROTO_TCP || v.l4_len < 20)
		return -1;
	uint32_t thl = (frame[v.l4 + 12] >> 4) * 4u;
	uint32_t l3_hdr = v.l4 - l3;
	if (thl < 20 || thl > v.l4_len || l3_hdr + thl >= max_l3)
		return -1;
	t->l3 = l3;
	t->l4 = v.l4;
	t->hdr_len = v.l4 + thl;
	t->payload = v.l4_len - thl;
	t->mss = max_l3 - l3_hdr - thl;
	t->n_segs = t->payload ? (t->payload + t->mss - 1) / t->mss : 1;
	t->ip_version = v.ip_version;
	return 0;
}

uint32_t afp_tso_segment(const uint8_t *frame, const struct afp_tso *t, uint32_t i, uint8_t *out)
{
	uint32_t off = i * t->mss;
	uint32_t n = t->payload - off < t->mss ? t->payload - off : t->mss;
	uint32_t thl = t->hdr_len - t->l4;
	memcpy(out, frame, t->hdr_len);
	memcpy(out + t->hdr_len, frame + t->hdr_len + off, n);

	uint8_t *ip = out + t->l3;
	if (t->ip_version == 4) {
		uint32_t ihl = t->l4 - t->l3;
		put16(ip + 2, (uint16_t)(ihl + thl + n));
		put16(ip + 4, (uint16_t)(get16(ip + 4) + i));
		ip4_header_csum(ip, ihl);
	} else {
		put16(ip + 4, (uint16_t)(thl + n));
	}
	uint8_t *tcp = out + t->l4;
	put32(tcp + 4, get32(tcp + 4) + off);
	if (i + 1 < t->n_segs)
		tcp[13] &= (uint8_t)~(TCP_FIN | TCP_PSH);
	if (i > 0)
		tcp[13] &= (uint8_t)~TCP_CWR;
	afp_l4_csum_complete(out, t->hdr_len + n, t->l3);
	return t->hdr_len + n;
}
