/* The whole IPv4 forwarding path on one core:
 *
 *   ip4-bench-source -> ethernet-input -> ip4-input -> ip4-lookup
 *     -> ip4-rewrite -> interface-output -> null-tx (nul1 frees)
 *
 * every registered node in the graph, as the daemon has it, with 1 route
 * (0.0.0.0/0) or with the ~1.07M routes of bench/ip4/routes.h, all via one
 * statically resolved next hop on nul1 (`set ip neighbor nul1 198.19.0.2
 * MAC static`). Packets arrive on nul0 (L3, 198.18.0.1/24).
 *
 * The source is this file's input node: each poll it takes a vector of
 * fresh buffers and writes a prebuilt 64-byte UDP frame into each, with the
 * destination and header checksum of the next of 65,536 precomputed
 * destinations (each a random address inside a random route of the table,
 * one that the FIB sends to the next hop), so that the generator's cost is
 * one 64-byte copy and two stores per packet and stays out of the ip4
 * nodes' figures.
 *
 * Rate: graph_main_poll in a loop on the calling thread (pinned with --cpu)
 * for --seconds after --warmup; printed: packets out of nul1 per second.
 *
 * Instructions: with --polls N it runs N polls inside ip4_path_polls() and
 * prints the packets forwarded; run it under `valgrind --tool=callgrind
 * --toggle-collect=ip4_path_polls` and divide each node function's
 * inclusive Ir by those packets (bench/ip4/run.sh does).
 *
 * --routes ecmp: 0.0.0.0/0 over two next hops (a load balance), so every
 * packet pays the flow hash and a bucket (nodes/ip4/ip4_fib.h).
 *
 * Usage: sluice-bench-ip4-path [--routes one|full|ecmp] [--seconds S]
 *          [--warmup S] [--cpu N] [--no-huge] [--polls N] [--vector N]
 *          [--seed N] [--route-div N]
 *
 * --route-div N divides each depth's count of the mix by N (QUICK runs).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"

#include "bench/ip4/routes.h"
#include "bench/path.h"

#define N_DST 65536 /* a power of two */
#define FRAME_BYTES 64

struct opts {
	bool full, ecmp, no_huge;
	double seconds, warmup;
	int cpu;
	uint64_t polls;
	uint32_t vector;
	uint64_t seed;
	uint32_t route_div; /* the mix divided (QUICK: fewer routes to add) */
};

/* ---- the source node ---- */

static struct {
	uint8_t frame[FRAME_BYTES]; /* Ethernet + IPv4 + UDP, dst and csum patched */
	uint32_t dst[N_DST];        /* network order */
	uint16_t csum[N_DST];       /* network order */
	struct path_source s;
} src;

static void patch_dst(uint8_t *p, uint32_t k)
{
	memcpy(p + 14 + 16, &src.dst[k], 4);
	memcpy(p + 14 + 10, &src.csum[k], 2);
}

PATH_SOURCE_DEFINE("ip4-bench-source", src, FRAME_BYTES, N_DST, patch_dst)

/* One's-complement sum of the 20-byte header, the plain way. */
static uint16_t header_csum(const uint8_t *h)
{
	uint32_t s = 0;
	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons((uint16_t)~s);
}

static void build_frame(const uint8_t dmac[6])
{
	uint8_t *p = src.frame;
	static const uint8_t smac[6] = { 0x02, 0xaa, 0, 0, 0, 1 };
	memset(p, 0, FRAME_BYTES);
	memcpy(p, dmac, 6);
	memcpy(p + 6, smac, 6);
	p[12] = 0x08;
	uint8_t *ip = p + 14;
	ip[0] = 0x45;
	ip[3] = FRAME_BYTES - 14; /* total length */
	ip[6] = 0x40;             /* DF */
	ip[8] = 64;               /* TTL */
	ip[9] = 17;               /* UDP */
	uint32_t s = htonl(IPV4(198, 18, 0, 2));
	memcpy(ip + 12, &s, 4);
	uint8_t *udp = ip + 20;
	udp[0] = 0x30, udp[1] = 0x39, udp[2] = 0x00, udp[3] = 0x35;
	udp[5] = FRAME_BYTES - 14 - 20;
}

/* Destinations the FIB sends out of out_if through a next hop: from random
 * routes of the table, or random addresses with one route. */
static int pick_destinations(const struct route *r, uint32_t n_routes, uint32_t out_if)
{
	for (uint32_t i = 0, tries = 0; i < N_DST; tries++) {
		if (tries > 100u * N_DST)
			return -1;
		uint32_t a;
		if (n_routes) {
			const struct route *x = &r[rnd64() % n_routes];
			uint32_t host = x->len >= 32 ? 0 : (uint32_t)rnd64() & (~0u >> x->len);
			a = x->prefix | host;
		} else {
			a = (uint32_t)rnd64();
		}
		uint8_t first = (uint8_t)(a >> 24);
		if (first == 0 || first == 127 || first >= 224)
			continue;
		const struct ip4_adj *adj = ip4_adj_get(ip4_fib_main, ip4_fib_lookup(ip4_fib_main, a));
		if (adj->kind != IP4_ADJ_LB && (adj->kind != IP4_ADJ_REWRITE || adj->if_index != out_if))
			continue;
		src.dst[i] = htonl(a);
		uint8_t h[20];
		memcpy(h, src.frame + 14, 20);
		memcpy(h + 16, &src.dst[i], 4);
		src.csum[i] = header_csum(h);
		i++;
	}
	return 0;
}

PATH_POLLS_DEFINE(ip4_path_polls)

static void usage(void)
{
	fprintf(stderr, "usage: sluice-bench-ip4-path [--routes one|full|ecmp] [--seconds S] [--warmup S] [--cpu N] "
			"[--no-huge] [--polls N] [--vector N] [--seed N] [--route-div N]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .seconds = 3, .warmup = 1, .cpu = -1, .vector = FRAME_SIZE, .route_div = 1 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--no-huge")) {
			o->no_huge = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		const char *v = argv[++i];
		if (!strcmp(a, "--routes") && (!strcmp(v, "one") || !strcmp(v, "full") || !strcmp(v, "ecmp"))) {
			o->full = !strcmp(v, "full");
			o->ecmp = !strcmp(v, "ecmp");
		}
		else if (!strcmp(a, "--seconds"))
			o->seconds = atof(v);
		else if (!strcmp(a, "--warmup"))
			o->warmup = atof(v);
		else if (!strcmp(a, "--cpu"))
			o->cpu = atoi(v);
		else if (!strcmp(a, "--polls"))
			o->polls = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--vector"))
			o->vector = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--seed"))
			o->seed = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--route-div"))
			o->route_div = (uint32_t)strtoul(v, NULL, 10);
		else
			usage();
	}
	if (!o->vector || o->vector > FRAME_SIZE || !o->route_div)
		usage();
}

static int fail(const char *what, const char *err)
{
	fprintf(stderr, "ip4-path: %s: %s\n", what, err);
	return 1;
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[256];
	parse(argc, argv, &o);
	if (o.seed)
		rng_state = o.seed;
	if (path_pin(o.cpu)) {
		perror("sched_setaffinity");
		return 1;
	}
	const char *what;
	struct device *in, *out;
	struct graph *g = path_graph_up(o.no_huge, &in, &out, &what, err, sizeof(err));
	if (!g)
		return fail(what, err);
	static const uint8_t nh_mac[6] = { 0x02, 0xbb, 0, 0, 0, 2 };
	const uint32_t nh = htonl(IPV4(198, 19, 0, 2));
	if (ip4_if_addr_add(in->index, htonl(IPV4(198, 18, 0, 1)), 24, err, sizeof(err)) ||
	    ip4_if_addr_add(out->index, htonl(IPV4(198, 19, 0, 1)), 24, err, sizeof(err)) ||
	    ip4_nbr_set(out->index, nh, nh_mac, true, err, sizeof(err)))
		return fail("addresses", err);

	struct route *routes = NULL;
	uint32_t n_routes = 0;
	uint64_t t0 = time_now_ns();
	if (o.full) {
		routes = malloc(ROUTES_MAX * sizeof(*routes));
		if (!routes)
			return fail("routes", "out of memory");
		n_routes = make_routes_div(routes, o.route_div);
		for (uint32_t i = 0; i < n_routes; i++) {
			uint32_t p = htonl(routes[i].prefix);
			/* The few mix routes that cover the two connected /24s lose
			 * to them (longer); ones equal to them are refused. */
			ip4_route_add(p, routes[i].len, nh, out->index, err, sizeof(err));
		}
	} else if (o.ecmp) {
		/* 0.0.0.0/0 over two next hops of nul1: every packet hashed. */
		const uint32_t nh2 = htonl(IPV4(198, 19, 0, 3));
		const struct ip4_route_path p[2] = { { .kind = IP4_ADJ_REWRITE, .next_hop = nh, .if_index = out->index },
						     { .kind = IP4_ADJ_REWRITE, .next_hop = nh2, .if_index = out->index } };
		if (ip4_nbr_set(out->index, nh2, nh_mac, true, err, sizeof(err)) ||
		    ip4_route_src_set(IP4_SRC_CLI, 0, 0, p, 2, err, sizeof(err)))
			return fail("ecmp route", err);
	} else if (ip4_route_add(0, 0, nh, out->index, err, sizeof(err))) {
		return fail("route", err);
	}
	struct ip4_fib_stats st;
	ip4_fib_stats(ip4_fib_main, &st);
	double add_s = (double)(time_now_ns() - t0) / 1e9;

	build_frame(in->mac);
	src.s.vector = o.vector;
	src.s.rx_if = in->index;
	if (pick_destinations(routes, n_routes, out->index))
		return fail("destinations", "too few reach the next hop");
	printf("ip4-path: %u routes in the FIB (%s, added in %.1f s), %u destinations, vector %u, %u-byte frames, "
	       "%s\n",
	       st.n_routes, !o.full ? "0.0.0.0/0 and the connected ones" : o.route_div == 1 ? "the ~1.07M mix" : "the mix, divided", add_s, N_DST, o.vector,
	       FRAME_BYTES, o.no_huge ? "4 KB pages" : "hugepages when available");

	uint64_t sent0, out0;
	if (o.polls) {
		for (int i = 0; i < 1000; i++) /* warm caches and frame pools outside the region */
			graph_main_poll(g);
		sent0 = src.s.produced;
		out0 = path_forwarded(out);
		uint64_t n = ip4_path_polls(g, o.polls);
		(void)n;
		printf("ip4-path: polls %llu packets %llu forwarded %llu\n", (unsigned long long)o.polls,
		       (unsigned long long)(src.s.produced - sent0), (unsigned long long)(path_forwarded(out) - out0));
	} else {
		uint64_t end = time_now_ns() + (uint64_t)(o.warmup * 1e9);
		while (time_now_ns() < end)
			ip4_path_polls(g, 64);
		sent0 = src.s.produced;
		out0 = path_forwarded(out);
		uint64_t start = time_now_ns();
		end = start + (uint64_t)(o.seconds * 1e9);
		uint64_t now;
		while ((now = time_now_ns()) < end)
			ip4_path_polls(g, 64);
		double secs = (double)(now - start) / 1e9;
		uint64_t fw = path_forwarded(out) - out0;
		printf("ip4-path: %.3f s, %llu packets in, %llu forwarded, %.2f Mpps\n", secs,
		       (unsigned long long)(src.s.produced - sent0), (unsigned long long)fw, (double)fw / secs / 1e6);
	}
	path_graph_down(g, ip4_main_free);
	free(routes);
	return 0;
}
