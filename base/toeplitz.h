/* The Toeplitz hash exactly as RSS NICs compute it (Microsoft RSS, 82599,
 * X540, X550, XL710): Microsoft's "RSS hashing functions" (Microsoft Learn,
 * Network Driver Design Guide) and the 82599 datasheet section 7.1.2.8.
 *
 * Definition: for every input bit i that is 1 (bit 0 = the most
 * significant bit of in[0]), XOR the 32 key bits starting at key bit i
 * (big-endian) into the result. The input is the header fields in network
 * byte order, source before destination:
 *
 *   IPv4 2-tuple  src addr (4) | dst addr (4)                      8 bytes
 *   IPv4 4-tuple  src addr | dst addr | src port (2) | dst port (2) 12 bytes
 *   IPv6 2-tuple  src addr (16) | dst addr (16)                    32 bytes
 *   IPv6 4-tuple  src | dst | src port | dst port                  36 bytes
 *
 * In an IPv4 or IPv6 header the two addresses are adjacent, source first,
 * and so are the ports at the start of a TCP or UDP header, so the helpers
 * take pointers straight into the packet.
 *
 * Two ways to compute it: toeplitz_hash() walks the bits with any key (the
 * reference, for tests and control code), and a struct toeplitz_table
 * precomputed once per key gives the hash with one table load and XOR per
 * input byte (the datapath: 12 loads for an IPv4 4-tuple).
 *
 * Thread-safety: everything is a pure function; a table is written only by
 * toeplitz_table_init and may then be read from any thread.
 */
#ifndef SLUICE_BASE_TOEPLITZ_H
#define SLUICE_BASE_TOEPLITZ_H

#include <stddef.h>
#include <stdint.h>

#define TOEPLITZ_KEY_SIZE_DEFAULT 40 /* Microsoft / ixgbe; i40e keys are 52 bytes */
#define TOEPLITZ_KEY_SIZE_MAX 52
#define TOEPLITZ_INPUT_MAX 36 /* IPv6 + ports: the longest input a NIC hashes */

#define TOEPLITZ_IP4_LEN 8
#define TOEPLITZ_IP4_L4_LEN 12
#define TOEPLITZ_IP6_LEN 32
#define TOEPLITZ_IP6_L4_LEN 36

/* The default key of the 82599 datasheet (7.1.2.8.3) and Microsoft's
 * verification suite, 40 bytes. */
extern const uint8_t toeplitz_default_key[TOEPLITZ_KEY_SIZE_DEFAULT];

/* Reference: the hash of in[0..n) under key[0..key_len). Only the first
 * n + 4 key bytes matter; key bits past key_len count as 0 (a NIC needs
 * key_len >= n + 4). An empty input hashes to 0. */
uint32_t toeplitz_hash(const uint8_t *key, size_t key_len, const uint8_t *in, size_t n);

/* Per-byte tables for one key: t[i][v] is the hash contribution of input
 * byte i having value v. 36 x 256 x 4 = 36 KiB; an IPv4 4-tuple touches
 * 12 KiB of it. */
struct toeplitz_table {
	uint32_t t[TOEPLITZ_INPUT_MAX][256];
};

/* Fill a table for key[0..key_len). Returns 0, or -EINVAL when key_len is
 * 0 or larger than TOEPLITZ_KEY_SIZE_MAX. */
int toeplitz_table_init(struct toeplitz_table *tbl, const uint8_t *key, size_t key_len);

/* A table for toeplitz_default_key, built on first use (thread-safe). */
const struct toeplitz_table *toeplitz_default_table(void);

/* The same value as toeplitz_hash with the table's key, for
 * n <= TOEPLITZ_INPUT_MAX. */
static inline uint32_t toeplitz_hash_table(const struct toeplitz_table *tbl, const uint8_t *in, size_t n)
{
	uint32_t h = 0;
	for (size_t i = 0; i < n; i++)
		h ^= tbl->t[i][in[i]];
	return h;
}

/* IPv4: addrs points at the source address with the destination right
 * after it (an IPv4 header + 12); ports at the source port with the
 * destination port after it (a TCP or UDP header), or NULL for the
 * 2-tuple hash. */
static inline uint32_t toeplitz_hash_ip4(const struct toeplitz_table *tbl, const uint8_t *addrs,
					 const uint8_t *ports)
{
	uint32_t h = toeplitz_hash_table(tbl, addrs, TOEPLITZ_IP4_LEN);
	if (ports)
		for (size_t i = 0; i < 4; i++)
			h ^= tbl->t[TOEPLITZ_IP4_LEN + i][ports[i]];
	return h;
}

/* IPv6: addrs points at the source address with the destination after it
 * (an IPv6 header + 8); ports as for IPv4, or NULL. */
static inline uint32_t toeplitz_hash_ip6(const struct toeplitz_table *tbl, const uint8_t *addrs,
					 const uint8_t *ports)
{
	uint32_t h = toeplitz_hash_table(tbl, addrs, TOEPLITZ_IP6_LEN);
	if (ports)
		for (size_t i = 0; i < 4; i++)
			h ^= tbl->t[TOEPLITZ_IP6_LEN + i][ports[i]];
	return h;
}

/* Build the hash input from host-order values (control code and tests):
 * writes 12 bytes (8 when ports is false) and returns the length. */
size_t toeplitz_ip4_input(uint8_t *out, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, int ports);

/* IPv6: 16-byte addresses as in the packet; writes 36 bytes (32 without
 * ports) and returns the length. */
size_t toeplitz_ip6_input(uint8_t *out, const uint8_t src[16], const uint8_t dst[16], uint16_t sport,
			  uint16_t dport, int ports);

#endif
