/* The whole IPv6 forwarding path on one core, bench/ip4/path.c's pattern:
 *
 *   ip6-bench-source -> ethernet-input -> ip6-input -> ip6-lookup
 *     -> ip6-rewrite -> interface-output -> null-tx (nul1 frees)
 *
 * every registered node, with one route (::/0) or --routes N routes
 * shaped like the public IPv6 table (bench/ip6/fib6bench.h's set, the
 * FIB bench's: half /48s, /32s, /44s ... under 2^17 allocations), all via
 * one statically resolved next hop on nul1 (`set ip neighbor nul1
 * 2001:db8:19::2 MAC static`), in a main FIB of --groups 256-entry groups
 * (default N * 5/4 + 65536, run.sh's sizing; set through
 * ip6_fib_config_set_default as startup.conf's key does). Packets arrive
 * on nul0 (2001:db8:18::1/64). The source writes a prebuilt 78-byte UDP
 * frame (64 bytes of IPv6) into fresh buffers with the next of 65,536
 * precomputed destinations (with N routes: fib6bench.h's lookup addresses,
 * a route picked uniformly with random host bits; with one: random global
 * unicast); no checksum changes with the destination here since nothing
 * checks UDP's. Routes the FIB refused, and packets not forwarded, are
 * printed: the figures are only the path's when both are 0.
 *
 * Instructions: --polls N runs N polls inside ip6_path_polls(); run it
 * under `valgrind --tool=callgrind --toggle-collect=ip6_path_polls` and
 * divide each node function's inclusive Ir by the packets printed.
 *
 * Usage: sluice-bench-ip6-path [--routes one|N] [--groups N] [--seconds S]
 *          [--polls N] [--vector N] [--cpu N]
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "bench/path.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_route.h"

/* The route set and lookup addresses of the FIB bench; its other helpers
 * (timing, page reports, options) are not used here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "bench/ip6/fib6bench.h"
#pragma GCC diagnostic pop

#define N_DST 65536
#define FRAME_BYTES (14 + 64)

static struct {
	uint8_t frame[FRAME_BYTES];
	struct in6_addr dst[N_DST];
	struct path_source s;
} src;

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void patch_dst(uint8_t *p, uint32_t k)
{
	memcpy(p + 14 + 24, &src.dst[k], 16);
}

PATH_SOURCE_DEFINE("ip6-bench-source", src, FRAME_BYTES, N_DST, patch_dst)

static void build_frame(const uint8_t dmac[6])
{
	uint8_t *p = src.frame;
	static const uint8_t smac[6] = { 0x02, 0xaa, 0, 0, 0, 1 };
	memset(p, 0, FRAME_BYTES);
	memcpy(p, dmac, 6);
	memcpy(p + 6, smac, 6);
	p[12] = 0x86;
	p[13] = 0xdd;
	uint8_t *ip = p + 14;
	ip[0] = 0x60;
	ip[5] = 64 - 40; /* payload length */
	ip[6] = 17;      /* UDP */
	ip[7] = 64;      /* hop limit */
	inet_pton(AF_INET6, "2001:db8:18::2", ip + 8);
	uint8_t *udp = ip + 40;
	udp[0] = 0x30, udp[1] = 0x39, udp[2] = 0x00, udp[3] = 0x35;
	udp[5] = 64 - 40;
}

/* A global unicast address in 2000::/3 outside 2001:db8::/32. */
static void random_global(struct in6_addr *a)
{
	uint64_t x = rnd(), y = rnd();
	memcpy(a->s6_addr, &x, 8);
	memcpy(a->s6_addr + 8, &y, 8);
	a->s6_addr[0] = (uint8_t)(0x20 | (a->s6_addr[0] & 0x1f));
	if (a->s6_addr[0] == 0x20 && a->s6_addr[1] == 0x01)
		a->s6_addr[1] = 0x02;
}

PATH_POLLS_DEFINE(ip6_path_polls)

static int fail(const char *what, const char *err)
{
	fprintf(stderr, "ip6-path: %s: %s\n", what, err);
	return 1;
}

/* The FIB's size for n routes, before the first address makes it. */
static int size_fib(uint32_t n_routes, uint32_t n_groups, char *err, size_t errlen)
{
	struct ip6_fib_config c;
	ip6_fib_config_default(&c);
	if (n_groups)
		c.n_groups = n_groups;
	else if (n_routes)
		c.n_groups = n_routes + n_routes / 4 + 65536;
	return ip6_fib_config_set_default(&c, err, errlen);
}

static int setup(uint32_t n_routes, struct device *in, struct device *out, char *err, size_t errlen)
{
	static const uint8_t nh_mac[6] = { 0x02, 0xbb, 0, 0, 0, 2 };
	struct in6_addr a, b, nh, p;
	inet_pton(AF_INET6, "2001:db8:18::1", &a);
	inet_pton(AF_INET6, "2001:db8:19::1", &b);
	inet_pton(AF_INET6, "2001:db8:19::2", &nh);
	if (ip6_if_addr_add(in->index, &a, 64, err, errlen) || ip6_if_addr_add(out->index, &b, 64, err, errlen) ||
	    ip6_nbr_set(out->index, &nh, nh_mac, true, err, errlen))
		return -1;
	memset(&p, 0, sizeof(p));
	if (!n_routes)
		return ip6_route_add(&p, 0, &nh, out->index, err, errlen);
	struct route6 *r = malloc(n_routes * sizeof(*r));
	if (!r)
		return -1;
	uint32_t n = make_routes6(r, n_routes, 0), n_failed = 0;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(p.s6_addr, r[i].a, 16);
		n_failed += ip6_route_add(&p, r[i].len, &nh, out->index, err, errlen) != 0;
	}
	addr_restart();
	static uint8_t batch[BATCH][16];
	for (uint32_t i = 0; i < N_DST; i += BATCH) {
		fill_batch6(batch, r, n);
		memcpy(&src.dst[i], batch, sizeof(batch));
	}
	free(r);
	struct ip6_fib_stats st;
	ip6_fib_stats(ip6_fib_main, &st);
	printf("ip6-path: %u routes offered, %u refused (last: %s), %u in the FIB, %u of %u groups\n", n, n_failed,
	       n_failed ? err : "-", st.n_routes, st.n_groups_used, st.n_groups);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t n_routes = 0, n_groups = 0, vector = FRAME_SIZE;
	uint64_t polls = 0;
	double seconds = 3;
	int cpu = -1;
	char err[256];
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--routes"))
			n_routes = strcmp(argv[i + 1], "one") ? (uint32_t)strtoul(argv[i + 1], NULL, 10) : 0;
		else if (!strcmp(argv[i], "--groups"))
			n_groups = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--polls"))
			polls = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--vector"))
			vector = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--cpu"))
			cpu = atoi(argv[i + 1]);
	}
	if (!vector || vector > FRAME_SIZE || !(argc % 2))
		return fail("usage", "[--routes one|N] [--groups N] [--seconds S] [--polls N] [--vector N] [--cpu N]");
	path_pin(cpu); /* best effort */
	const char *what;
	struct device *in, *out;
	struct graph *g = path_graph_up(false, &in, &out, &what, err, sizeof(err));
	if (!g)
		return fail(what, err);
	if (!n_routes)
		for (uint32_t i = 0; i < N_DST; i++)
			random_global(&src.dst[i]);
	if (size_fib(n_routes, n_groups, err, sizeof(err)) || setup(n_routes, in, out, err, sizeof(err)))
		return fail("routes", err);
	build_frame(in->mac);
	src.s.vector = vector;
	src.s.rx_if = in->index;
	printf("ip6-path: %u routes (%s), vector %u, %u-byte frames\n", n_routes ? n_routes : 1,
	       n_routes ? "shaped like the public table" : "::/0", vector, FRAME_BYTES);
	for (int i = 0; i < 1000; i++)
		graph_main_poll(g);
	uint64_t sent0 = src.s.produced, out0 = path_forwarded(out);
	if (polls) {
		ip6_path_polls(g, polls);
		printf("ip6-path: polls %llu packets %llu forwarded %llu\n", (unsigned long long)polls,
		       (unsigned long long)(src.s.produced - sent0), (unsigned long long)(path_forwarded(out) - out0));
	} else {
		uint64_t start = time_now_ns(), end = start + (uint64_t)(seconds * 1e9), now;
		while ((now = time_now_ns()) < end)
			ip6_path_polls(g, 64);
		double secs = (double)(now - start) / 1e9;
		uint64_t fw = path_forwarded(out) - out0;
		printf("ip6-path: %.3f s, %llu forwarded, %.2f Mpps\n", secs, (unsigned long long)fw, (double)fw / secs / 1e6);
	}
	path_graph_down(g, ip6_main_free);
	return 0;
}
