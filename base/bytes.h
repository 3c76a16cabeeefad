/* Network-order (big-endian) loads and stores at any alignment: one
 * instruction each (a byte-wise version costs the packet generator ~60
 * instructions per packet). */
#ifndef SLUICE_BASE_BYTES_H
#define SLUICE_BASE_BYTES_H

#include <stdint.h>
#include <string.h>

static inline void put16(uint8_t *p, uint16_t v)
{
	v = __builtin_bswap16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put32(uint8_t *p, uint32_t v)
{
	v = __builtin_bswap32(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t get16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return __builtin_bswap16(v);
}

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return __builtin_bswap32(v);
}

#endif
