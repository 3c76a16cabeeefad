/* Neighbor Discovery's option walk (RFC 4861 §4.6), shared by ip6-nd (NS,
 * NA) and ip6-rs (RS). */
#ifndef SLUICE_NODES_IP6_ND_H
#define SLUICE_NODES_IP6_ND_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The options of the len-byte message at p from offset off: false unless
 * each has a non-zero length within the message (§4.6: such a message is
 * discarded). The MAC of the last link-layer address option of type want
 * goes to mac, *has set. */
static inline bool ip6_nd_options(const uint8_t *p, uint32_t off, uint32_t len, uint8_t want, uint8_t mac[6],
				  bool *has)
{
	while (off + 2 <= len) {
		uint32_t olen = p[off + 1] * 8u;
		if (olen == 0 || off + olen > len)
			return false;
		if (p[off] == want && olen >= 8) {
			memcpy(mac, p + off + 2, 6);
			*has = true;
		}
		off += olen;
	}
	return off == len;
}

#endif
