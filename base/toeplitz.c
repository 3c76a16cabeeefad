/* The Toeplitz hash: the bitwise reference and the per-byte tables.
 *
 * The table entry for input byte i and value v is the XOR, over the set
 * bits of v, of the 32-bit key window starting at that bit's stream
 * position (8i for the top bit of v, 8i + 7 for the bottom one). The hash
 * is linear over GF(2), so the XOR of the entries of every input byte is
 * the hash of the whole input.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "base/bytes.h"
#include "base/toeplitz.h"

const uint8_t toeplitz_default_key[TOEPLITZ_KEY_SIZE_DEFAULT] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* Key bit `bit` (0 = MSB of key[0]); bits past the key are 0. */
static inline uint32_t key_bit(const uint8_t *key, size_t key_len, size_t bit)
{
	size_t byte = bit / 8;
	return byte < key_len ? (key[byte] >> (7 - bit % 8)) & 1u : 0;
}

/* The 32 key bits starting at bit `start`, big-endian. */
static uint32_t key_window(const uint8_t *key, size_t key_len, size_t start)
{
	uint32_t w = 0;
	for (size_t b = 0; b < 32; b++)
		w = (w << 1) | key_bit(key, key_len, start + b);
	return w;
}

uint32_t toeplitz_hash(const uint8_t *key, size_t key_len, const uint8_t *in, size_t n)
{
	uint32_t h = 0;
	for (size_t i = 0; i < 8 * n; i++)
		if ((in[i / 8] >> (7 - i % 8)) & 1u)
			h ^= key_window(key, key_len, i);
	return h;
}

int toeplitz_table_init(struct toeplitz_table *tbl, const uint8_t *key, size_t key_len)
{
	if (key_len == 0 || key_len > TOEPLITZ_KEY_SIZE_MAX)
		return -EINVAL;
	for (size_t i = 0; i < TOEPLITZ_INPUT_MAX; i++) {
		uint32_t win[8]; /* win[b]: the window of bit b of byte i (b = 0 is its MSB) */
		for (size_t b = 0; b < 8; b++)
			win[b] = key_window(key, key_len, 8 * i + b);
		for (uint32_t v = 0; v < 256; v++) {
			uint32_t h = 0;
			for (size_t b = 0; b < 8; b++)
				if (v & (0x80u >> b))
					h ^= win[b];
			tbl->t[i][v] = h;
		}
	}
	return 0;
}

static struct toeplitz_table default_table;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void default_init(void)
{
	toeplitz_table_init(&default_table, toeplitz_default_key, sizeof(toeplitz_default_key));
}

const struct toeplitz_table *toeplitz_default_table(void)
{
	pthread_once(&default_once, default_init);
	return &default_table;
}

size_t toeplitz_ip4_input(uint8_t *out, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, int ports)
{
	put32(out, src);
	put32(out + 4, dst);
	if (!ports)
		return TOEPLITZ_IP4_LEN;
	put16(out + 8, sport);
	put16(out + 10, dport);
	return TOEPLITZ_IP4_L4_LEN;
}

size_t toeplitz_ip6_input(uint8_t *out, const uint8_t src[16], const uint8_t dst[16], uint16_t sport,
			  uint16_t dport, int ports)
{
	memcpy(out, src, 16);
	memcpy(out + 16, dst, 16);
	if (!ports)
		return TOEPLITZ_IP6_LEN;
	put16(out + 32, sport);
	put16(out + 34, dport);
	return TOEPLITZ_IP6_L4_LEN;
}
