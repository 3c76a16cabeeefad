/* Flow-tag harness: bytes -> one received frame (chained past one buffer,
 * as a driver builds it) -> dist_buffer_tag, the software flow hash the
 * distributor computes when the NIC gave none (nodes/dist/dist_graph.c). No
 * threads, no graph.
 *
 * Each input is checked against an oracle written from base/toeplitz.h's
 * definition, not from the node: the IPv4 or IPv6 address pair, with the
 * TCP/UDP ports when a whole port pair is there and the packet is not an
 * IPv4 fragment, after one 802.1Q tag at most; otherwise the MAC pair; 0
 * below an Ethernet header; hashed by the bit-walking reference
 * toeplitz_hash with the default key (the node uses the byte tables). A
 * mismatch aborts. The same frame with a NIC hash already set must keep
 * that hash. Seeds: tests/fuzz/seeds/dist (gen_dist_seeds.py); they must
 * reach every kind of frame below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/buffer.h"
#include "graph/handoff.h"
#include "base/toeplitz.h"
#include "nodes/dist/dist_graph.h"
#include "tests/fuzz/fuzz.h"

enum kind { KIND_RUNT, KIND_MAC_PAIR, KIND_IP4, KIND_IP4_PORTS, KIND_IP6, KIND_IP6_PORTS, N_KINDS };

static const char *const kind_names[N_KINDS] = {
	[KIND_RUNT] = "shorter than an Ethernet header",
	[KIND_MAC_PAIR] = "not IP: MAC pair",
	[KIND_IP4] = "IPv4 addresses",
	[KIND_IP4_PORTS] = "IPv4 addresses and ports",
	[KIND_IP6] = "IPv6 addresses",
	[KIND_IP6_PORTS] = "IPv6 addresses and ports",
};

static uint64_t n_kind[N_KINDS];
static uint64_t n_tagged_ip; /* IP kinds reached through an 802.1Q tag */

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static bool is_tcp_or_udp(uint8_t proto)
{
	return proto == 6 || proto == 17;
}

/* What the hash should be for frame p[0..len), and which kind it is. */
static uint32_t oracle(const uint8_t *p, uint32_t len, enum kind *kind, bool *tagged)
{
	uint8_t in[TOEPLITZ_INPUT_MAX];
	size_t n = 0;
	*tagged = false;
	*kind = KIND_RUNT;
	if (len < 14)
		return 0;
	uint16_t type = get16(p + 12);
	const uint8_t *l3 = p + 14;
	uint32_t l3_len = len - 14;
	if (type == 0x8100 && l3_len >= 4) {
		*tagged = true;
		type = get16(l3 + 2);
		l3 += 4;
		l3_len -= 4;
	}
	if (type == 0x0800 && l3_len >= 20 && l3[0] >> 4 == 4) {
		uint32_t hlen = (l3[0] & 0xfu) * 4u;
		bool fragment = (get16(l3 + 6) & 0x1fff) != 0 || (l3[6] & 0x20) != 0;
		bool ports = is_tcp_or_udp(l3[9]) && !fragment && hlen >= 20 && l3_len >= hlen + 4;
		memcpy(in, l3 + 12, 8);
		n = 8;
		if (ports) {
			memcpy(in + n, l3 + hlen, 4);
			n += 4;
		}
		*kind = ports ? KIND_IP4_PORTS : KIND_IP4;
	} else if (type == 0x86dd && l3_len >= 40 && l3[0] >> 4 == 6) {
		bool ports = is_tcp_or_udp(l3[6]) && l3_len >= 44;
		memcpy(in, l3 + 8, 32);
		n = 32;
		if (ports) {
			memcpy(in + n, l3 + 40, 4);
			n += 4;
		}
		*kind = ports ? KIND_IP6_PORTS : KIND_IP6;
	} else {
		*tagged = false;
		memcpy(in, p, 12);
		n = 12;
		*kind = KIND_MAC_PAIR;
	}
	return toeplitz_hash(toeplitz_default_key, TOEPLITZ_KEY_SIZE_DEFAULT, in, n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_pool_init("fuzz_dist", 1024);
	return 0;
}

static void fail(const char *what, uint32_t got, uint32_t want)
{
	fprintf(stderr, "fuzz_dist: %s 0x%08x, want 0x%08x\n", what, got, want);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16384)
		return 0; /* beyond any frame a driver takes */
	uint32_t bi[2];
	bi[0] = buffer_chain_from_bytes(data, (uint32_t)size, -1);
	bi[1] = buffer_chain_from_bytes(data, (uint32_t)size, -1);
	if (bi[0] == BUFFER_INVALID || bi[1] == BUFFER_INVALID)
		abort(); /* the pool is far larger than two chains */
	struct buffer *b = buffer_get(bi[0]);
	enum kind kind;
	bool tagged;
	/* The node hashes what the head buffer holds. */
	uint32_t want = oracle(buffer_data(b), b->current_length, &kind, &tagged);
	uint16_t tag = dist_buffer_tag(b);
	if (b->flow_hash != want)
		fail("flow hash", b->flow_hash, want);
	if (tag != (want & HANDOFF_TAG_MASK) || b->flow_tag != tag || !(b->flags & BUFFER_F_FLOW_HASH))
		fail("flow tag", tag, want & HANDOFF_TAG_MASK);
	n_kind[kind]++;
	n_tagged_ip += tagged;

	/* A NIC hash is kept as it is, whatever the frame says. */
	struct buffer *nic = buffer_get(bi[1]);
	nic->flow_hash = ~want;
	nic->flags |= BUFFER_F_FLOW_HASH;
	if (dist_buffer_tag(nic) != (~want & HANDOFF_TAG_MASK) || nic->flow_hash != ~want)
		fail("NIC hash", nic->flow_hash, ~want);
	buffer_free(bi, 2);
	return 0;
}

int fuzz_seed_check(void)
{
	int bad = 0;
	for (int k = 0; k < N_KINDS; k++) {
		printf("%8llu  %s\n", (unsigned long long)n_kind[k], kind_names[k]);
		if (!n_kind[k]) {
			printf("not reached by any seed: %s\n", kind_names[k]);
			bad = 1;
		}
	}
	printf("%8llu  IP under an 802.1Q tag\n", (unsigned long long)n_tagged_ip);
	if (!n_tagged_ip) {
		printf("not reached by any seed: IP under an 802.1Q tag\n");
		bad = 1;
	}
	uint64_t left = buffer_n_in_use();
	if (left) {
		printf("%llu buffers still in use at the end\n", (unsigned long long)left);
		bad = 1;
	}
	buffer_thread_unregister();
	buffer_main_free();
	return bad;
}
