/* IPv6 shared by the ip6 nodes: the header (RFC 8200 §3), the extension
 * headers they walk (§4), ICMPv6 (RFC 4443) and Neighbor Discovery
 * (RFC 4861) constants, the address classes of RFC 4291, the checksum over
 * the pseudo-header (RFC 8200 §8.1) and the scratch the ip6 nodes keep in a
 * buffer's opaque bytes.
 *
 * Addresses are struct in6_addr and header fields stay in network byte
 * order everywhere in the datapath, as in nodes/ip4/ip4.h, whose
 * one's-complement helpers (RFC 1071) the checksums here reuse.
 */
#ifndef SLUICE_NODES_IP6_H
#define SLUICE_NODES_IP6_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "graph/buffer.h"
#include "nodes/ip4/ip4.h"

#define IP6_HDR_LEN 40
#define IP6_HOP_LIMIT_DEFAULT 64
#define IP6_MIN_MTU 1280 /* RFC 8200 §5 */

/* Next Header values (IANA "Assigned Internet Protocol Numbers"). */
#define IP6_NH_HOP_BY_HOP 0
#define IP6_NH_TCP 6
#define IP6_NH_UDP 17
#define IP6_NH_ROUTING 43
#define IP6_NH_FRAGMENT 44
#define IP6_NH_ESP 50
#define IP6_NH_AH 51
#define IP6_NH_ICMP6 58
#define IP6_NH_NONE 59
#define IP6_NH_DEST_OPTS 60
#define IP6_NH_MOBILITY 135 /* RFC 6275 */
#define IP6_NH_HIP 139      /* RFC 7401 */
#define IP6_NH_SHIM6 140    /* RFC 5533 */

/* Extension-header walk bounds: RFC 8200 sets none; RFC 7112 asks the
 * whole chain to sit in the first fragment, and RFC 8504 §5.3 lets a node
 * bound the number and the length of headers and options. */
#define IP6_EXT_MAX 8          /* headers per packet */
#define IP6_EXT_MAX_BYTES 512  /* bytes of all of them together */
#define IP6_OPT_MAX 16         /* options per Hop-by-Hop or Destination Options header */

/* Hop-by-Hop and Destination options (RFC 8200 §4.2, RFC 2711). */
#define IP6_OPT_PAD1 0
#define IP6_OPT_PADN 1
#define IP6_OPT_ROUTER_ALERT 5
#define IP6_ROUTER_ALERT_MLD 0 /* RFC 2711 value: MLD (RFC 2710) */

#define IP6_RH_TYPE0 0 /* RFC 5095: deprecated */

/* ICMPv6 types and codes (RFC 4443 §2.1, RFC 4861 §4, RFC 2710/3810). */
#define ICMP6_DEST_UNREACH 1
#define ICMP6_PACKET_TOO_BIG 2
#define ICMP6_TIME_EXCEEDED 3
#define ICMP6_PARAM_PROBLEM 4
#define ICMP6_PP_HEADER 0      /* erroneous header field */
#define ICMP6_PP_NEXT_HEADER 1 /* unrecognized Next Header type */
#define ICMP6_PP_OPTION 2      /* unrecognized IPv6 option */
#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define ICMP6_MLD_QUERY 130
#define ICMP6_MLD_REPORT 131
#define ICMP6_MLD_DONE 132
#define ICMP6_ND_RS 133
#define ICMP6_ND_RA 134
#define ICMP6_ND_NS 135
#define ICMP6_ND_NA 136
#define ICMP6_ND_REDIRECT 137
#define ICMP6_MLD2_REPORT 143
#define ICMP6_HDR_LEN 8
#define ICMP6_INFO_MIN 128 /* types below are errors (RFC 4443 §2.1) */

#define ND_HOP_LIMIT 255 /* RFC 4861 §7.1: NS and NA only from on-link */
#define ND_OPT_SOURCE_LLADDR 1
#define ND_OPT_TARGET_LLADDR 2
#define ND_NA_F_ROUTER 0x80000000u /* in the first word after the ICMPv6 header, host order */
#define ND_NA_F_SOLICITED 0x40000000u
#define ND_NA_F_OVERRIDE 0x20000000u
#define ND_MSG_LEN 24 /* NS and NA: ICMPv6 header, flags or reserved, target */

/* Behind a 14-byte Ethernet header the IPv6 header is only 2-byte
 * aligned: its fields are typed so (a typedef may lower alignment; a packed
 * struct would make every &h->src a warning), and an address is still a
 * struct in6_addr to every function taking one. */
typedef uint32_t ip6_u32_a2 __attribute__((aligned(2)));

struct ip6_header {
	ip6_u32_a2 ver_tc_flow; /* version 6 in the top nibble, traffic class, flow label */
	uint16_t payload_length;
	uint8_t next_header;
	uint8_t hop_limit;
	ip6_addr_a2 src;
	ip6_addr_a2 dst;
};
_Static_assert(_Alignof(struct ip6_header) == 2, "2-byte aligned behind Ethernet");
_Static_assert(sizeof(struct ip6_header) == IP6_HDR_LEN, "IPv6 fixed header");

struct icmp6_header {
	uint8_t type;
	uint8_t code;
	uint16_t checksum;
	ip6_u32_a2 data; /* echo: id and sequence; PTB: MTU; Param Problem: pointer; ND: flags */
};
_Static_assert(sizeof(struct icmp6_header) == ICMP6_HDR_LEN, "ICMPv6 header");

/* What the ip6 nodes keep in buffer->opaque while they own a packet:
 * ip6-input leaves where the upper layer starts (past the extension
 * headers) and what it is. */
struct ip6_opaque {
	uint32_t adj_index; /* for ip6-lookup */
	uint16_t l4_offset; /* from the IPv6 header */
	uint8_t l4_proto;   /* the last Next Header of the chain (IP6_NH_FRAGMENT: a fragment) */
	uint8_t flags;      /* IP6_OPAQUE_F_* */
};
_Static_assert(sizeof(struct ip6_opaque) <= sizeof(((struct buffer *)0)->opaque), "fits the opaque");

#define IP6_OPAQUE_F_LOCAL_ORIGIN (1u << 0)  /* made by sluice: no hop-limit decrement */
#define IP6_OPAQUE_F_ROUTER_ALERT (1u << 1)  /* Hop-by-Hop router alert (MLD) */

static inline struct ip6_opaque *ip6_opaque(struct buffer *b)
{
	return (struct ip6_opaque *)b->opaque;
}

/* ---- addresses (RFC 4291) ---- */

static inline bool ip6_addr_is_multicast(const ip6_addr_a2 *a)
{
	return a->s6_addr[0] == 0xff;
}

/* The scope of a multicast address (RFC 4291 §2.7): 1 interface-local,
 * 2 link-local, 5 site, 8 organization, 14 global. */
static inline uint8_t ip6_mcast_scope(const ip6_addr_a2 *a)
{
	return a->s6_addr[1] & 0xf;
}

static inline bool ip6_addr_is_unspecified(const ip6_addr_a2 *a)
{
	static const uint8_t zero[16];
	return memcmp(a->s6_addr, zero, 16) == 0;
}

static inline bool ip6_addr_is_loopback(const ip6_addr_a2 *a)
{
	static const uint8_t one[16] = { [15] = 1 };
	return memcmp(a->s6_addr, one, 16) == 0;
}

/* fe80::/10 (RFC 4291 §2.5.6). */
static inline bool ip6_addr_is_link_local(const ip6_addr_a2 *a)
{
	return a->s6_addr[0] == 0xfe && (a->s6_addr[1] & 0xc0) == 0x80;
}

/* ::ffff:0:0/96 (IPv4-mapped, §2.5.5.2) and the deprecated IPv4-compatible
 * ::/96 (§2.5.5.1) beyond :: and ::1: never on the wire (RFC 4038 §4.2,
 * RFC 5156 §2.2). */
static inline bool ip6_addr_is_v4_embedded(const ip6_addr_a2 *a)
{
	static const uint8_t zero10[10];
	if (memcmp(a->s6_addr, zero10, 10) != 0)
		return false;
	uint16_t w5 = (uint16_t)(a->s6_addr[10] << 8 | a->s6_addr[11]);
	return w5 == 0xffff || (w5 == 0 && !ip6_addr_is_unspecified(a) && !ip6_addr_is_loopback(a));
}

static inline bool ip6_addr_eq(const ip6_addr_a2 *a, const ip6_addr_a2 *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* ff02::1 (all nodes) and ff02::2 (all routers), RFC 4291 §2.7.1. */
static inline bool ip6_addr_is_all_nodes(const ip6_addr_a2 *a)
{
	static const struct in6_addr all = { .s6_addr = { 0xff, 2, [15] = 1 } };
	return ip6_addr_eq(a, &all);
}

static inline bool ip6_addr_is_all_routers(const ip6_addr_a2 *a)
{
	static const struct in6_addr all = { .s6_addr = { 0xff, 2, [15] = 2 } };
	return ip6_addr_eq(a, &all);
}

/* ff02::16: all MLDv2-capable routers, where MLDv2 reports go (RFC 3810
 * §5.2.14). */
static inline bool ip6_addr_is_mld2_routers(const ip6_addr_a2 *a)
{
	static const struct in6_addr all = { .s6_addr = { 0xff, 2, [15] = 0x16 } };
	return ip6_addr_eq(a, &all);
}

/* The solicited-node multicast address of a (RFC 4291 §2.7.1):
 * ff02::1:ff00:0/104 and a's low 24 bits. */
static inline void ip6_solicited_node(ip6_addr_a2 *out, const ip6_addr_a2 *a)
{
	static const uint8_t pfx[13] = { 0xff, 2, [11] = 1, [12] = 0xff };
	memcpy(out->s6_addr, pfx, 13);
	memcpy(out->s6_addr + 13, a->s6_addr + 13, 3);
}

/* Whether m is some solicited-node multicast address. */
static inline bool ip6_addr_is_solicited_node(const ip6_addr_a2 *m)
{
	static const uint8_t pfx[13] = { 0xff, 2, [11] = 1, [12] = 0xff };
	return memcmp(m->s6_addr, pfx, 13) == 0;
}

/* The Ethernet multicast MAC of an IPv6 multicast address (RFC 2464 §7):
 * 33:33 and its last 32 bits. */
static inline void ip6_mcast_mac(uint8_t mac[6], const ip6_addr_a2 *a)
{
	mac[0] = 0x33;
	mac[1] = 0x33;
	memcpy(mac + 2, a->s6_addr + 12, 4);
}

/* The link-local address of a MAC: fe80::/64 and the modified EUI-64
 * interface identifier (RFC 4291 §2.5.1 and appendix A: ff:fe in the
 * middle, the universal/local bit inverted; RFC 2464 §4). */
static inline void ip6_link_local_from_mac(ip6_addr_a2 *out, const uint8_t mac[6])
{
	memset(out, 0, sizeof(*out));
	out->s6_addr[0] = 0xfe;
	out->s6_addr[1] = 0x80;
	out->s6_addr[8] = mac[0] ^ 0x02;
	out->s6_addr[9] = mac[1];
	out->s6_addr[10] = mac[2];
	out->s6_addr[11] = 0xff;
	out->s6_addr[12] = 0xfe;
	out->s6_addr[13] = mac[3];
	out->s6_addr[14] = mac[4];
	out->s6_addr[15] = mac[5];
}

/* Whether a and b share their first plen bits. */
static inline bool ip6_prefix_match(const ip6_addr_a2 *a, const ip6_addr_a2 *b, uint8_t plen)
{
	uint32_t bytes = plen / 8, bits = plen % 8;
	if (memcmp(a->s6_addr, b->s6_addr, bytes) != 0)
		return false;
	if (!bits)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - bits));
	return ((a->s6_addr[bytes] ^ b->s6_addr[bytes]) & mask) == 0;
}

/* "2001:db8::1" into buf (at least INET6_ADDRSTRLEN bytes). */
static inline const char *ip6_format_addr(char *buf, const ip6_addr_a2 *a)
{
	return inet_ntop(AF_INET6, a, buf, INET6_ADDRSTRLEN);
}

/* ---- checksums (RFC 8200 §8.1) ---- */

/* The unfolded one's-complement sum of the pseudo-header: both addresses,
 * the upper-layer length and the next header value. */
static inline uint32_t ip6_pseudo_sum(const struct ip6_header *h, uint32_t l4_len, uint8_t proto)
{
	uint32_t tail[2] = { htonl(l4_len), htonl(proto) };
	uint32_t s = ip4_csum_add(0, &h->src, 32);
	return ip4_csum_add(s, tail, sizeof(tail));
}

/* The checksum to store for the l4_len bytes at l4 (checksum field zeroed
 * first), behind header h. */
static inline uint16_t ip6_l4_csum(const struct ip6_header *h, const void *l4, uint32_t l4_len, uint8_t proto)
{
	return (uint16_t)~ip4_csum_fold(ip4_csum_add(ip6_pseudo_sum(h, l4_len, proto), l4, l4_len));
}

/* True when the l4_len bytes at l4 with the pseudo-header sum to all ones. */
static inline bool ip6_l4_csum_ok(const struct ip6_header *h, const void *l4, uint32_t l4_len, uint8_t proto)
{
	return ip4_csum_fold(ip4_csum_add(ip6_pseudo_sum(h, l4_len, proto), l4, l4_len)) == 0xffff;
}

#endif
