/* ICMPv6 error messages (see icmp6_error.h). */
#include <string.h>

#include "base/util.h"
#include "nodes/ethernet.h"
#include "nodes/ip6/icmp6_error.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_interface.h"

#define ERROR_HDRS (IP6_HDR_LEN + ICMP6_HDR_LEN)

/* RFC 4443 §2.4(e). */
static bool allowed(struct buffer *b, const struct ip6_header *h, uint8_t type, uint8_t code)
{
	if (ip6_addr_is_unspecified(&h->src) || ip6_addr_is_multicast(&h->src))
		return false;
	bool group = ip6_addr_is_multicast(&h->dst) || (b->flags & BUFFER_F_L2_GROUP);
	if (group && type != ICMP6_PACKET_TOO_BIG && !(type == ICMP6_PARAM_PROBLEM && code == ICMP6_PP_OPTION))
		return false;
	const struct ip6_opaque *o = ip6_opaque(b);
	if (o->l4_proto == IP6_NH_ICMP6) {
		if ((uint32_t)o->l4_offset + 1 > b->current_length)
			return false;
		uint8_t t = buffer_data(b)[o->l4_offset];
		if (t < ICMP6_INFO_MIN || t == ICMP6_ND_REDIRECT)
			return false;
	}
	return true;
}

enum icmp6_error_verdict icmp6_error_make(struct icmp6_error_bucket *bk, uint64_t *now, struct buffer *b, uint8_t type,
					  uint8_t code, uint32_t param)
{
	const struct ip6_header *h = (const struct ip6_header *)buffer_data(b);
	/* Room in front for the new headers and Ethernet; the frame's own
	 * Ethernet header lies just before the IPv6 one. */
	if (b->current_length < IP6_HDR_LEN || b->l2_len != ETH_HDR_LEN ||
	    b->current_data - ERROR_HDRS - ETH_HDR_LEN < -BUFFER_HEADROOM || !allowed(b, h, type, code))
		return ICMP6_ERROR_NOT_ALLOWED;
	struct in6_addr src, dst = h->src;
	if (ip6_addr_is_multicast(&h->dst) || !ip6_is_for_us(b->rx_if, &h->dst)) {
		if (!ip6_if_source_for(b->rx_if, &h->src, &src))
			return ICMP6_ERROR_NOT_ALLOWED;
	} else {
		src = h->dst;
	}
	if (!icmp_rate_take(&bk->rate, now, ICMP6_ERROR_RATE, ICMP6_ERROR_BURST))
		return ICMP6_ERROR_RATE_LIMITED;
	uint8_t peer_mac[6];
	memcpy(peer_mac, buffer_data(b) - ETH_HDR_LEN + 6, 6);
	if (b->flags & BUFFER_F_NEXT_PRESENT) {
		buffer_free(&b->next_buffer, 1);
		b->flags &= ~BUFFER_F_NEXT_PRESENT;
		b->total_length_not_including_first = 0;
	}
	uint32_t quote = MIN((uint32_t)b->current_length, IP6_MIN_MTU - ERROR_HDRS);
	buffer_advance(b, -ERROR_HDRS);
	b->current_length = (uint16_t)(ERROR_HDRS + quote);
	struct ip6_header *ip = (struct ip6_header *)buffer_data(b);
	struct icmp6_header *icmp = (struct icmp6_header *)(ip + 1);
	*ip = (struct ip6_header){
		.ver_tc_flow = htonl(6u << 28),
		.payload_length = htons((uint16_t)(ICMP6_HDR_LEN + quote)),
		.next_header = IP6_NH_ICMP6,
		.hop_limit = IP6_HOP_LIMIT_DEFAULT,
		.src = src,
		.dst = dst,
	};
	*icmp = (struct icmp6_header){ .type = type, .code = code, .data = htonl(param) };
	icmp->checksum = ip6_l4_csum(ip, icmp, ICMP6_HDR_LEN + quote, IP6_NH_ICMP6);
	ip6_opaque(b)->flags |= IP6_OPAQUE_F_LOCAL_ORIGIN;
	b->flags &= ~BUFFER_F_L2_GROUP;
	ip6_eth_push(b, peer_mac);
	return ICMP6_ERROR_BUILT;
}
