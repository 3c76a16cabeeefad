/* The IPv6 address type of sluice's IPv6 code. Behind a 14-byte Ethernet
 * header an IPv6 header is only 2-byte aligned, so its addresses are too;
 * glibc's struct in6_addr is a union with 32-bit words, 4-byte aligned, and
 * reading one through a pointer of that type at a 2-byte boundary is
 * undefined behaviour (UBSan: "member access within misaligned address").
 * Every function that takes an address takes this type: the same struct
 * with its alignment lowered to 2 (GCC lets a typedef lower alignment), so
 * an address in a packet and an aligned struct in6_addr both pass. */
#ifndef SLUICE_NODES_IP6_IP6_ADDR_H
#define SLUICE_NODES_IP6_IP6_ADDR_H

#include <netinet/in.h>

typedef struct in6_addr ip6_addr_a2 __attribute__((aligned(2)));

#endif
