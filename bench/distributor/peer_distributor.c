/* rte_distributor's burst mode, timed as distributor_perf_autotest times it,
 * without the autotest's stall.
 *
 * The timed loop is the autotest's (DPDK 22.11 app/test): one worker lcore
 * looping on rte_distributor_get_pkt() with its previous packets handed
 * back, the main lcore calling rte_distributor_process() 2^21 times with
 * the same 64 mbufs whose hash.usr is 0..63; the figure is the loop's TSC
 * ticks >> 21 (per burst) and that / 64 (per packet), a mean over the run.
 *
 * What differs from the autotest, outside the timed loop only:
 *  - before timing, one burst is handed and drained, so the worker is known
 *    to be asking for packets. Without it, a worker that is not yet polling
 *    when the loop starts makes process() return without taking the burst
 *    (no active worker), and the autotest then waits for ever for packets
 *    it never handed (seen in 2 of 3 runs on a quiet 2-CPU box);
 *  - the drain after the loop and the workers' shutdown are bounded: the
 *    figure is printed before them, and a worker that does not stop within
 *    two seconds ends the process.
 *
 * --window-log2 W also times each window of 2^W calls and prints the best
 * window's ticks per packet (dist_perf.c's --window-log2, the same).
 *
 *   peer_distributor [EAL args] -- [--calls-log2 N] [--window-log2 W]
 */
#include <rte_cycles.h>
#include <rte_distributor.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BURST 64

static atomic_uint handled;
static atomic_int quit;

static int worker(void *arg)
{
	struct rte_distributor *d = arg;
	struct rte_mbuf *buf[8] = { NULL };
	unsigned int id = 0, num;

	num = rte_distributor_get_pkt(d, id, buf, buf, 0);
	while (!atomic_load_explicit(&quit, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&handled, num, memory_order_relaxed);
		num = rte_distributor_get_pkt(d, id, buf, buf, num);
	}
	atomic_fetch_add_explicit(&handled, num, memory_order_relaxed);
	rte_distributor_return_pkt(d, id, buf, num);
	return 0;
}

/* Hands process() nothing until the worker has handled `want` packets, at
 * most `ms` milliseconds; returns whether it got there. */
static int drain(struct rte_distributor *d, unsigned int want, int ms)
{
	for (int i = 0; i < ms * 10; i++) {
		if (atomic_load(&handled) >= want)
			return 1;
		rte_distributor_process(d, NULL, 0);
		usleep(100);
	}
	return atomic_load(&handled) >= want;
}

int main(int argc, char **argv)
{
	int n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "peer_distributor: EAL init failed\n");
		return 1;
	}
	argc -= n;
	argv += n;
	unsigned int log2 = 21, wlog2 = 0;
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--calls-log2"))
			log2 = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--window-log2"))
			wlog2 = (unsigned int)atoi(argv[++i]);
	}
	unsigned int window = wlog2 && wlog2 < 31 ? 1u << wlog2 : 0;
	double best = 0;
	if (rte_lcore_count() != 2) {
		fprintf(stderr, "peer_distributor: needs exactly 2 lcores (main + 1 worker)\n");
		return 1;
	}
	struct rte_distributor *d = rte_distributor_create("peer", rte_socket_id(), 1, RTE_DIST_ALG_BURST);
	struct rte_mempool *p = rte_pktmbuf_pool_create("peer_pool", 511, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
							rte_socket_id());
	struct rte_mbuf *bufs[BURST];
	if (!d || !p || rte_mempool_get_bulk(p, (void **)bufs, BURST) != 0) {
		fprintf(stderr, "peer_distributor: distributor or mbufs: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	for (unsigned int i = 0; i < BURST; i++)
		bufs[i]->hash.usr = i;
	rte_eal_mp_remote_launch(worker, d, SKIP_MAIN);

	/* Prime: one burst, handed and handled, before the clock starts. */
	unsigned int taken = 0;
	while (taken < BURST)
		taken += (unsigned int)rte_distributor_process(d, bufs + taken, BURST - taken);
	if (!drain(d, BURST, 2000)) {
		fprintf(stderr, "peer_distributor: the worker did not take the priming burst\n");
		return 1;
	}
	atomic_store(&handled, 0);

	uint64_t start = rte_rdtsc(), tw = start;
	for (unsigned int i = 0; i < (1u << log2); i++) {
		rte_distributor_process(d, bufs, BURST);
		if (window && ((i + 1) & (window - 1)) == 0) {
			uint64_t now = rte_rdtsc();
			double t = (double)(now - tw) / ((double)window * BURST);
			best = best == 0 || t < best ? t : best;
			tw = now;
		}
	}
	uint64_t end = rte_rdtsc();
	printf("Time per burst:  %llu\n", (unsigned long long)((end - start) >> log2));
	printf("Time per packet: %llu\n", (unsigned long long)(((end - start) >> log2) / BURST));
	printf("calls=%u tsc_hz=%llu\n", 1u << log2, (unsigned long long)rte_get_tsc_hz());
	if (window)
		printf("best_window=%.2f window_calls=%u\n", best, window);
	fflush(stdout);

	int drained = drain(d, (unsigned int)BURST << log2, 2000);
	printf("worker handled %u of %u packets%s\n", atomic_load(&handled), (unsigned int)BURST << log2,
	       drained ? "" : " (drain bounded: not all returned in 2 s)");
	atomic_store(&quit, 1);
	/* Unblock a worker waiting in get_pkt, then stop it; a worker that does
	 * not stop within two seconds cannot change the figure printed above. */
	for (int i = 0; i < 20000 && rte_eal_get_lcore_state(rte_get_next_lcore(-1, 1, 0)) != WAIT; i++) {
		rte_distributor_process(d, bufs, 1);
		rte_distributor_flush(d);
		usleep(100);
	}
	fflush(stdout);
	if (rte_eal_get_lcore_state(rte_get_next_lcore(-1, 1, 0)) != WAIT)
		_exit(0);
	rte_eal_mp_wait_lcore();
	return 0;
}
