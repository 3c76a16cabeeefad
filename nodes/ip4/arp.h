/* ARP for IPv4 over Ethernet (RFC 826): the packet layout arp-input and
 * ip4-arp share. */
#ifndef SLUICE_NODES_ARP_H
#define SLUICE_NODES_ARP_H

#include <stdint.h>

#define ARP_HTYPE_ETHERNET 1
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2
#define ARP_PKT_LEN 28
#define ARP_FRAME_MIN 60 /* requests are padded to the Ethernet minimum (FCS excluded) */

/* Addresses are byte arrays: the IPv4 ones sit at odd offsets. */
struct arp_packet {
	uint16_t htype;
	uint16_t ptype;
	uint8_t hlen;
	uint8_t plen;
	uint16_t op;
	uint8_t sha[6];
	uint8_t spa[4];
	uint8_t tha[6];
	uint8_t tpa[4];
};
_Static_assert(sizeof(struct arp_packet) == ARP_PKT_LEN, "ARP for IPv4 over Ethernet");

#endif
