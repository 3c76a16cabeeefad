/* sched/impair.h, seeded, on a simulated clock: the samplers exactly.
 *
 *   - delay distributions: Kolmogorov-Smirnov at alpha = 0.001 of 100,000
 *     departure times the impairer computed (read from timestamp_ns right
 *     after enqueue, at a fixed now: no clock, no capture) against the
 *     distribution itself (uniform; normal; netem's pareto and
 *     paretonormal from their formulas, here written again); and a normal
 *     sample against the uniform CDF must fail the same test;
 *   - random loss: the count within the 99.9% binomial interval;
 *   - Gilbert-Elliott: simple Gilbert (1-h 100%, 1-k 0): loss share
 *     p/(p+r) and mean loss burst 1/r within 99.9% bounds (a Markov
 *     chain's variance), bursts == Bad entries; a general case's share;
 *   - duplicate, reorder (gap 1 and gap 5), corrupt shares within their
 *     99.9% intervals; duplicates and corrupted packets in fresh buffers,
 *     one bit flipped per corrupted packet;
 *   - rate: serialisation times exact; never early under every option;
 *   - one slot of 40 packets (its chunks) releases in arrival order, also
 *     when half came through the coarse wheel.
 * Every seed is fixed: a run repeats bit for bit, so nothing can flake.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/buffer.h"
#include "sched/impair.h"
#include "tests/check_run.h"

#define MS 1000000ull
#define US 1000ull
#define Z999 3.2905 /* two-sided 99.9% normal quantile */
#define BATCH 256
/* Under the sanitizers the samples are cut by IMPAIR_SCALE (meson sets 5);
 * every bound below is computed from the sample's size. */
#ifndef IMPAIR_SCALE
#define IMPAIR_SCALE 1
#endif
#define SCALED(n) ((uint32_t)((n) / IMPAIR_SCALE))

static void setup(void)
{
	char err[256];
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 8192;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
}

static void teardown(void)
{
	buffer_thread_unregister();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}

static struct sched_impair *make(const char *words, uint32_t max_held)
{
	char err[256], buf[512];
	char *argv[32];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", words);
	for (char *w = strtok(buf, " "); w && argc < 32; w = strtok(NULL, " "))
		argv[argc++] = w;
	struct sched_impair_config c;
	ck_assert_msg(sched_impair_parse(&c, argc, argv, err, sizeof(err)) == 0, "%s: %s", words, err);
	struct sched_impair *m = sched_impair_create(max_held, 1, err, sizeof(err));
	ck_assert_msg(m, "%s", err);
	ck_assert_int_eq(sched_impair_set(m, &c, err, sizeof(err)), 0);
	return m;
}

static uint32_t pkt(uint32_t len, uint32_t tag)
{
	uint32_t bi;
	ck_assert_uint_eq(buffer_alloc(&bi, 1, -1), 1);
	struct buffer *b = buffer_get(bi);
	b->current_length = (uint16_t)len;
	uint8_t *d = buffer_data(b);
	for (uint32_t i = 0; i < len; i++)
		d[i] = (uint8_t)(i * 7 + 3);
	memcpy(d, &tag, sizeof(tag));
	return bi;
}

static void free_all(struct sched_impair *m)
{
	uint32_t out[BATCH], n;
	while ((n = sched_impair_flush(m, out, BATCH)) != 0)
		buffer_free(out, n);
}

/* ---- Kolmogorov-Smirnov ---- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* D = sup |F_n - F| for a sample with ties and an F with atoms: at each
 * distinct value v, |F_n(v) - F(v)| and |F_n(v-) - F(v-)|. */
static double ks(int64_t *x, uint32_t n, double (*cdf)(double, bool left))
{
	qsort(x, n, sizeof(x[0]), cmp_i64);
	double d = 0;
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i;
		while (j < n && x[j] == x[i])
			j++;
		double hi = fabs((double)j / n - cdf((double)x[i], false));
		double lo = fabs((double)i / n - cdf((double)x[i], true));
		d = fmax(d, fmax(hi, lo));
		i = j;
	}
	return d;
}

static double ks_crit(uint32_t n)
{
	return sqrt(-0.5 * log(0.001 / 2)) / sqrt((double)n);
}

#define MU (50.0 * MS)
#define SIGMA (10.0 * MS)

static double phi(double z)
{
	return 0.5 * erfc(-z / sqrt(2.0));
}

static double normal_inv(double u)
{
	double lo = -12, hi = 12;
	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;
		if (phi(mid) < u)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

static double cdf_uniform(double x, bool left)
{
	(void)left;
	double u = (x - (MU - SIGMA)) / (2 * SIGMA);
	return u < 0 ? 0 : u > 1 ? 1 : u;
}

static double cdf_normal(double x, bool left)
{
	(void)left;
	return phi((x - MU) / SIGMA);
}

/* netem's pareto: (4/3) * (X - 1.5), X pareto of shape 3 on [1, inf),
 * clamped at 4 jitters (an atom there). */
static double cdf_pareto(double x, bool left)
{
	double z = (x - MU) / SIGMA;
	if (z >= 4 && !left)
		return 1;
	if (z > 4)
		z = 4;
	double y = 0.75 * z + 1.5;
	return y <= 1 ? 0 : 1 - pow(y, -3);
}

/* paretonormal: quantile 0.25 normal + 0.75 pareto, clamped to 4
 * jitters; its CDF by bisection on that quantile. */
static double pn_q(double u)
{
	double n = fmax(-4, fmin(4, normal_inv(u)));
	double p = u >= 1 ? 4 : fmin(4, (4.0 / 3.0) * (pow(1 - u, -1.0 / 3.0) - 1.5));
	return fmax(-4, fmin(4, 0.25 * n + 0.75 * p));
}

/* Tabulated once on 2^16 + 1 quantiles; between them linear in u (an
 * error under 2^-16 in F, against a critical D of 0.006). */
#define PN_GRID 65536
static double pn_table[PN_GRID + 1];

static double cdf_pn(double x, bool left)
{
	double z = (x - MU) / SIGMA;
	if (!pn_table[PN_GRID])
		for (uint32_t i = 0; i <= PN_GRID; i++)
			pn_table[i] = pn_q((double)i / PN_GRID);
	if (z >= 4 && !left)
		return 1;
	if (z < pn_table[0])
		return 0;
	uint32_t lo = 0, hi = PN_GRID;
	while (hi - lo > 1) { /* the last grid point with Q <= z */
		uint32_t mid = (lo + hi) / 2;
		if (pn_table[mid] <= z && (z < 4 || !left || pn_table[mid] < 4))
			lo = mid;
		else
			hi = mid;
	}
	double q0 = pn_table[lo], q1 = pn_table[hi];
	double f = q1 > q0 ? (fmin(z, q1) - q0) / (q1 - q0) : 0;
	return ((double)lo + f) / PN_GRID;
}

#define N_KS SCALED(100000u)

/* N_KS delays (departure - now) from the impairer, through enqueue. */
static int64_t *sample_delays(const char *words)
{
	struct sched_impair *m = make(words, 1u << 20);
	int64_t *x = malloc(N_KS * sizeof(*x));
	uint64_t now = 1000 * MS;
	uint32_t bi[BATCH], dropped[2 * BATCH], dup[BATCH], n_dup;
	for (uint32_t k = 0; k < N_KS; k += BATCH) {
		uint32_t n = N_KS - k < BATCH ? N_KS - k : BATCH;
		ck_assert_uint_eq(buffer_alloc(bi, n, -1), n);
		ck_assert_uint_eq(sched_impair_enqueue(m, bi, n, now, dropped, dup, &n_dup), 0);
		for (uint32_t i = 0; i < n; i++)
			x[k + i] = (int64_t)buffer_get(bi[i])->timestamp_ns - (int64_t)now;
		free_all(m);
	}
	sched_impair_destroy(m);
	return x;
}

static void check_ks(const char *words, double (*cdf)(double, bool), bool expect_fit)
{
	int64_t *x = sample_delays(words);
	double d = ks(x, N_KS, cdf), crit = ks_crit(N_KS);
	printf("KS %-60s D %.5f (critical %.5f at alpha 0.001)\n", words, d, crit);
	if (expect_fit)
		ck_assert_msg(d < crit, "%s: D %.5f >= %.5f", words, d, crit);
	else
		ck_assert_msg(d > crit, "%s: D %.5f: the test cannot tell the distributions apart", words, d);
	free(x);
}

START_TEST(test_ks_uniform)
{
	check_ks("delay 50ms jitter 10ms seed 11", cdf_uniform, true);
}
END_TEST

START_TEST(test_ks_normal)
{
	check_ks("delay 50ms jitter 10ms distribution normal seed 12", cdf_normal, true);
	/* The test can fail: a normal sample is not uniform. */
	check_ks("delay 50ms jitter 10ms distribution normal seed 12", cdf_uniform, false);
}
END_TEST

START_TEST(test_ks_pareto)
{
	check_ks("delay 50ms jitter 10ms distribution pareto seed 13", cdf_pareto, true);
	check_ks("delay 50ms jitter 10ms distribution pareto seed 13", cdf_normal, false);
}
END_TEST

START_TEST(test_ks_paretonormal)
{
	check_ks("delay 50ms jitter 10ms distribution paretonormal seed 14", cdf_pn, true);
	check_ks("delay 50ms jitter 10ms distribution paretonormal seed 14", cdf_pareto, false);
}
END_TEST

/* ---- shares ---- */

/* Whether k successes in n trials fit probability p at 99.9%. */
static void check_binomial(const char *what, uint64_t k, uint64_t n, double p)
{
	double mean = n * p, sd = sqrt(n * p * (1 - p));
	printf("%-28s %llu of %llu, expected %.1f +- %.1f\n", what, (unsigned long long)k, (unsigned long long)n, mean,
	       Z999 * sd);
	ck_assert_msg(fabs((double)k - mean) <= Z999 * sd, "%s: %llu of %llu, outside %.1f +- %.1f", what,
		      (unsigned long long)k, (unsigned long long)n, mean, Z999 * sd);
}

/* Push n packets through at one time, one by one; lost[i] says which
 * were dropped; everything released is freed. Returns the stats. */
static void run(struct sched_impair *m, uint32_t n, uint8_t *lost, struct sched_impair_stats *st)
{
	uint32_t dropped[2], dup[1], n_dup, out[BATCH];
	uint64_t now = 5 * MS;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t bi = pkt(64, i);
		uint32_t d = sched_impair_enqueue(m, &bi, 1, now, dropped, dup, &n_dup);
		if (lost)
			lost[i] = d == 1 && dropped[0] == bi;
		buffer_free(dropped, d);
		uint32_t k;
		while ((k = sched_impair_dequeue(m, now, out, BATCH)) != 0)
			buffer_free(out, k);
		if (sched_impair_held(m) > 4096)
			free_all(m);
	}
	free_all(m);
	sched_impair_stats(m, st);
}

START_TEST(test_loss_random)
{
	struct sched_impair_stats st;
	struct sched_impair *m = make("loss random 5% seed 21", 8192);
	run(m, SCALED(200000), NULL, &st);
	check_binomial("loss random 5%", st.lost_random, SCALED(200000), 0.05);
	ck_assert_uint_eq(st.lost_gemodel, 0);
	sched_impair_destroy(m);
	m = make("loss 1% seed 22", 8192); /* tc's short form */
	run(m, SCALED(200000), NULL, &st);
	check_binomial("loss 1%", st.lost_random, SCALED(200000), 0.01);
	sched_impair_destroy(m);
}
END_TEST

START_TEST(test_gemodel_simple)
{
	/* Simple Gilbert: lose every packet in Bad, none in Good. */
	const double p = 0.01, r = 0.10;
	const uint32_t n = SCALED(1000000);
	uint8_t *lost = malloc(n);
	struct sched_impair_stats st;
	struct sched_impair *m = make("loss gemodel 1% 10% 100% 0% seed 31", 8192);
	run(m, n, lost, &st);
	uint64_t bursts = 0, burst_pkts = 0, nlost = 0;
	double sumsq = 0;
	for (uint32_t i = 0; i < n;) {
		if (!lost[i]) {
			i++;
			continue;
		}
		uint32_t j = i;
		while (j < n && lost[j])
			j++;
		bursts++;
		burst_pkts += j - i;
		sumsq += (double)(j - i) * (j - i);
		i = j;
	}
	for (uint32_t i = 0; i < n; i++)
		nlost += lost[i];
	ck_assert_uint_eq(nlost, st.lost_gemodel);
	ck_assert_uint_eq(bursts, st.ge_bad_entries); /* every Bad stay is one burst */
	/* Share: stationary p/(p+r); a two-state chain's sum has variance
	 * n pi (1-pi) (1+lambda)/(1-lambda), lambda = 1-p-r. */
	double pi = p / (p + r), lambda = 1 - p - r;
	double sd = sqrt(n * pi * (1 - pi) * (1 + lambda) / (1 - lambda));
	printf("gemodel share %llu of %u, expected %.0f +- %.0f\n", (unsigned long long)nlost, n, n * pi, Z999 * sd);
	ck_assert(fabs((double)nlost - n * pi) <= Z999 * sd);
	/* Burst lengths: geometric, mean 1/r, sd sqrt(1-r)/r. */
	double mean = (double)burst_pkts / bursts, bsd = sqrt(1 - r) / r / sqrt((double)bursts);
	printf("gemodel mean burst %.3f over %llu bursts, expected %.3f +- %.3f\n", mean, (unsigned long long)bursts,
	       1 / r, Z999 * bsd);
	ck_assert(fabs(mean - 1 / r) <= Z999 * bsd);
	double var = sumsq / bursts - mean * mean;
	ck_assert_msg(fabs(var - (1 - r) / (r * r)) < 0.15 * (1 - r) / (r * r), "burst variance %.2f", var);
	free(lost);
	sched_impair_destroy(m);
}
END_TEST

START_TEST(test_gemodel_general)
{
	/* p 2%, r 20%, 1-h 60%, 1-k 1%: share pi_B 0.6 + pi_G 0.01. */
	const double p = 0.02, r = 0.2;
	const uint32_t n = SCALED(1000000);
	struct sched_impair_stats st;
	struct sched_impair *m = make("loss gemodel 2% 20% 60% 1% seed 32", 8192);
	run(m, n, NULL, &st);
	double pib = p / (p + r), share = pib * 0.6 + (1 - pib) * 0.01;
	/* Bound: the Bad time's chain variance times 0.6^2 plus Bernoulli
	 * noise, generously: both at their maximum. */
	double lambda = 1 - p - r;
	double sd = sqrt(n * (0.36 * pib * (1 - pib) * (1 + lambda) / (1 - lambda) + share * (1 - share)));
	printf("gemodel general %llu of %u, expected %.0f +- %.0f\n", (unsigned long long)st.lost_gemodel, n,
	       n * share, Z999 * sd);
	ck_assert(fabs((double)st.lost_gemodel - n * share) <= Z999 * sd);
	sched_impair_destroy(m);
	/* tc's defaults: gemodel p alone is r = 1-p, 1-h 100%, 1-k 0. */
	m = make("loss gemodel 3%", 16);
	sched_impair_stats(m, &st);
	ck_assert_uint_eq(st.cfg.ge_r, SCHED_IMPAIR_P_ONE - st.cfg.ge_p);
	ck_assert_uint_eq(st.cfg.ge_1h, SCHED_IMPAIR_P_ONE);
	ck_assert_uint_eq(st.cfg.ge_1k, 0);
	sched_impair_destroy(m);
}
END_TEST

START_TEST(test_duplicate)
{
	struct sched_impair *m = make("duplicate 5% seed 41", 8192);
	const uint32_t n = SCALED(100000);
	uint32_t dropped[2], dup[1], n_dup, out[4];
	uint64_t dups = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t bi = pkt(100, i);
		ck_assert_uint_eq(sched_impair_enqueue(m, &bi, 1, 7 * MS, dropped, dup, &n_dup), 0);
		uint32_t k = sched_impair_dequeue(m, 7 * MS, out, 4);
		ck_assert_uint_eq(k, 1 + n_dup);
		if (n_dup) { /* the copy: a fresh buffer, the same bytes, released first (netem) */
			dups++;
			ck_assert_uint_eq(out[0], dup[0]);
			ck_assert_uint_ne(out[0], out[1]);
			ck_assert_uint_eq(buffer_get(out[0])->current_length, 100);
			ck_assert_mem_eq(buffer_data(buffer_get(out[0])), buffer_data(buffer_get(out[1])), 100);
			buffer_data(buffer_get(out[0]))[5] ^= 0xff; /* writing one leaves the other */
			ck_assert_uint_eq(buffer_data(buffer_get(out[1]))[5], (uint8_t)(5 * 7 + 3));
		}
		buffer_free(out, k);
	}
	struct sched_impair_stats st;
	sched_impair_stats(m, &st);
	ck_assert_uint_eq(st.duplicated, dups);
	check_binomial("duplicate 5%", dups, n, 0.05);
	sched_impair_destroy(m);
}
END_TEST

START_TEST(test_corrupt)
{
	struct sched_impair *m = make("corrupt 2% seed 51", 8192);
	const uint32_t n = SCALED(100000);
	uint32_t dropped[2], dup[1], n_dup, out[2];
	uint64_t flipped = 0, fresh = 0;
	uint8_t ref[200];
	for (uint32_t i = 0; i < 200; i++)
		ref[i] = (uint8_t)(i * 7 + 3);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t bi = pkt(200, 0x5a5a5a5a);
		memcpy(ref, buffer_data(buffer_get(bi)), 4);
		ck_assert_uint_eq(sched_impair_enqueue(m, &bi, 1, 7 * MS, dropped, dup, &n_dup), 0);
		ck_assert_uint_eq(sched_impair_dequeue(m, 7 * MS, out, 2), 1);
		const uint8_t *d = buffer_data(buffer_get(out[0]));
		uint32_t bits = 0;
		for (uint32_t k = 0; k < 200; k++)
			bits += (uint32_t)__builtin_popcount(d[k] ^ ref[k]);
		ck_assert_uint_le(bits, 1);
		flipped += bits;
		fresh += out[0] != bi;
		ck_assert_uint_eq(bits, out[0] != bi); /* corrupted exactly when moved to a fresh buffer */
		buffer_free(out, 1);
	}
	struct sched_impair_stats st;
	sched_impair_stats(m, &st);
	ck_assert_uint_eq(st.corrupted, flipped);
	check_binomial("corrupt 2%", flipped, n, 0.02);
	sched_impair_destroy(m);
}
END_TEST

/* Reorder: a share departs at once (departure == now), the rest after
 * the delay; with gap 5 the 4 after each reordered one are always
 * delayed. */
static uint64_t reorder_run(const char *words, uint32_t n, uint32_t gap)
{
	struct sched_impair *m = make(words, 1u << 20);
	uint32_t dropped[2], dup[1], n_dup, since = 1000;
	uint64_t now = 3 * MS, at_once = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t bi;
		ck_assert_uint_eq(buffer_alloc(&bi, 1, -1), 1);
		buffer_get(bi)->current_length = 64;
		ck_assert_uint_eq(sched_impair_enqueue(m, &bi, 1, now, dropped, dup, &n_dup), 0);
		uint64_t t = buffer_get(bi)->timestamp_ns;
		ck_assert(t == now || t == now + 10 * MS);
		if (t == now) {
			ck_assert_uint_ge(since + 1, gap); /* not inside the gap */
			since = 0;
			at_once++;
		} else {
			since++;
		}
		if (sched_impair_held(m) >= 4096)
			free_all(m);
	}
	free_all(m);
	struct sched_impair_stats st;
	sched_impair_stats(m, &st);
	ck_assert_uint_eq(st.reordered, at_once);
	sched_impair_destroy(m);
	return at_once;
}

START_TEST(test_reorder)
{
	const uint32_t n = SCALED(200000);
	check_binomial("reorder 10%", reorder_run("delay 10ms reorder 10% seed 61", n, 1), n, 0.10);
	/* gap 5: cycles of 4 delayed + a geometric(0.1) wait (mean 10, var
	 * 90): renewal count mean n/14, variance n * 90 / 14^3. */
	uint64_t k = reorder_run("delay 10ms reorder 10% gap 5 seed 62", n, 5);
	double mean = n / 14.0, sd = sqrt(n * 90.0 / (14.0 * 14.0 * 14.0));
	printf("reorder 10%% gap 5 %llu of %u, expected %.0f +- %.0f\n", (unsigned long long)k, n, mean, Z999 * sd);
	ck_assert(fabs((double)k - mean) <= Z999 * sd);
}
END_TEST

/* Rate: 10 packets of 1000 bytes (+24 overhead) at 10mbit, all at t0:
 * departures every 819,200 ns exactly, in order; then 1ms delay on top
 * behind the last held (netem: delay counts from the latest departure). */
START_TEST(test_rate)
{
	struct sched_impair *m = make("rate 10mbit packet-overhead 24", 64);
	uint32_t bi[10], dropped[20], dup[10], n_dup;
	uint64_t t0 = 100 * MS;
	for (uint32_t i = 0; i < 10; i++)
		bi[i] = pkt(1000, i);
	ck_assert_uint_eq(sched_impair_enqueue(m, bi, 10, t0, dropped, dup, &n_dup), 0);
	for (uint32_t i = 0; i < 10; i++)
		ck_assert_uint_eq(buffer_get(bi[i])->timestamp_ns, t0 + (i + 1) * 819200ull);
	ck_assert_uint_eq(sched_impair_next_ns(m), t0 + 819200);
	uint32_t out[16];
	ck_assert_uint_eq(sched_impair_dequeue(m, t0 + 819199, out, 16), 0);
	ck_assert_uint_eq(sched_impair_dequeue(m, t0 + 819200, out, 16), 1);
	ck_assert_uint_eq(out[0], bi[0]);
	buffer_free(out, 1);
	ck_assert_uint_eq(sched_impair_dequeue(m, t0 + 10 * 819200ull, out, 16), 9);
	for (uint32_t i = 0; i < 9; i++)
		ck_assert_uint_eq(out[i], bi[i + 1]);
	buffer_free(out, 9);
	sched_impair_destroy(m);
}
END_TEST

/* Everything at once, far and near (5 ms to 3 s), on a clock that steps
 * to next_ns or by random amounts: no packet leaves before its departure,
 * next_ns is never after the earliest held, every packet accounted for. */
START_TEST(test_never_early)
{
	const char *cfgs[] = {
		"delay 5ms jitter 4ms distribution normal loss 2% duplicate 3% reorder 5% corrupt 1% seed 71",
		"delay 40ms jitter 30ms distribution pareto duplicate 10% seed 72",
		"delay 1s jitter 900ms distribution paretonormal rate 100mbit seed 73",
		"delay 3s jitter 10ms reorder 20% gap 3 seed 74",
	};
	for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		struct sched_impair *m = make(cfgs[c], 4000);
		uint64_t now = 1000 * MS, rng = 99 + c, in = 0, out_n = 0, dropped_n = 0, dups = 0;
		uint32_t bi[16], dropped[32], dup[16], n_dup, out[BATCH];
		for (uint32_t step = 0; step < SCALED(20000); step++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			if (step < SCALED(15000) && sched_impair_held(m) < 3000) {
				uint32_t n = 1 + (uint32_t)(rng >> 60);
				ck_assert_uint_eq(buffer_alloc(bi, n, -1), n);
				for (uint32_t i = 0; i < n; i++)
					buffer_get(bi[i])->current_length = 100;
				uint32_t d = sched_impair_enqueue(m, bi, n, now, dropped, dup, &n_dup);
				buffer_free(dropped, d);
				in += n;
				dropped_n += d;
				dups += n_dup;
			}
			uint64_t next = sched_impair_next_ns(m);
			uint64_t jump = (rng >> 33) % (2 * MS);
			now = (rng >> 62) == 0 && next != UINT64_MAX && next > now ? next : now + jump;
			uint32_t k;
			while ((k = sched_impair_dequeue(m, now, out, BATCH)) != 0) {
				for (uint32_t i = 0; i < k; i++) {
					uint64_t dep = buffer_get(out[i])->timestamp_ns;
					ck_assert_msg(dep <= now, "%s: released at %llu, due %llu", cfgs[c],
						      (unsigned long long)now, (unsigned long long)dep);
					ck_assert_uint_ge(dep, next); /* next_ns was not after it */
				}
				buffer_free(out, k);
				out_n += k;
			}
		}
		/* Drain on next_ns alone. */
		for (int guard = 0; sched_impair_held(m) && guard < 100000; guard++) {
			uint64_t next = sched_impair_next_ns(m);
			ck_assert_uint_ne(next, UINT64_MAX);
			now = next > now ? next : now;
			uint32_t k = sched_impair_dequeue(m, now, out, BATCH);
			ck_assert_msg(k >= 1, "%s: nothing released at next_ns %llu", cfgs[c], (unsigned long long)now);
			for (uint32_t i = 0; i < k; i++)
				ck_assert_uint_le(buffer_get(out[i])->timestamp_ns, now);
			buffer_free(out, k);
			out_n += k;
		}
		ck_assert_uint_eq(sched_impair_held(m), 0);
		ck_assert_uint_eq(in + dups, out_n + dropped_n);
		ck_assert_uint_eq(sched_impair_next_ns(m), UINT64_MAX);
		sched_impair_destroy(m);
	}
}
END_TEST

/* Dequeue at now, max per call, until nothing comes: each packet must be
 * want[n], want[n + 1], ... in turn (at most `limit` in all); returns the
 * new n. */
static uint32_t drain_in_order(struct sched_impair *m, uint64_t now, uint32_t max, const uint32_t *want,
			       uint32_t n, uint32_t limit)
{
	uint32_t out[16], k;
	ck_assert_uint_le(max, 16);
	while ((k = sched_impair_dequeue(m, now, out, max)) != 0) {
		ck_assert_uint_le(n + k, limit);
		for (uint32_t i = 0; i < k; i++)
			ck_assert_uint_eq(out[i], want[n + i]);
		buffer_free(out, k);
		n += k;
	}
	return n;
}

/* One slot's packets (40: several of the slot's chunks) leave in arrival
 * order: those due at a time inside the slot first, a few per call (the
 * kept ones close up behind), then the rest once the slot is over. */
START_TEST(test_slot_order)
{
	struct sched_impair *m = make("delay 1ms jitter 400ns seed 5", 100);
	uint64_t slot = ((1001 * MS) >> 10) << 10, now0 = slot + 512 - MS, mid = slot + 512;
	uint32_t bi[40], dropped[80], dup[40], n_dup, n;
	uint64_t t[40];
	ck_assert_uint_eq(buffer_alloc(bi, 40, -1), 40);
	ck_assert_uint_eq(sched_impair_enqueue(m, bi, 40, now0, dropped, dup, &n_dup), 0);
	uint32_t want[40], n_want = 0, n_due = 0;
	uint64_t next = UINT64_MAX;
	for (uint32_t i = 0; i < 40; i++) {
		t[i] = buffer_get(bi[i])->timestamp_ns;
		ck_assert_uint_eq(t[i] >> 10, slot >> 10); /* all in one slot */
		if (t[i] <= mid)
			want[n_want++] = bi[i];
	}
	n_due = n_want;
	ck_assert(n_due > 5 && n_due < 35); /* both kinds, interleaved */
	for (uint32_t i = 0; i < 40; i++)
		if (t[i] > mid) {
			want[n_want++] = bi[i];
			next = t[i] < next ? t[i] : next;
		}
	n = drain_in_order(m, mid, 5, want, 0, n_due);
	ck_assert_uint_eq(n, n_due);
	ck_assert_uint_eq(sched_impair_held(m), 40 - n_due);
	ck_assert_uint_eq(sched_impair_next_ns(m), next);
	n = drain_in_order(m, slot + 1024, 4, want, n, 40);
	ck_assert_uint_eq(n, 40);
	ck_assert_uint_eq(sched_impair_held(m), 0);
	struct sched_impair_stats st;
	sched_impair_stats(m, &st);
	ck_assert_uint_eq(st.released, 40);
	sched_impair_destroy(m);
}
END_TEST

/* A slot filled from both wheels: 20 packets filed beyond the horizon
 * (delay 20ms, the coarse wheel), then 20 filed directly into the same
 * fine slot (delay 1ms, before the wheel enters that page); entering the
 * page puts the first 20 ahead (pushed at the front of the slot's
 * chunks): all 40 leave in arrival order. */
START_TEST(test_slot_both_wheels)
{
	char err[256];
	struct sched_impair *m = make("delay 20ms", 100);
	uint64_t page = 1ull << (10 + 14), s = (((1000 * MS) / page + 1) * page) + 100 * 1024 + 512;
	uint32_t bi[40], dropped[80], dup[40], n_dup, out[16];
	ck_assert_uint_eq(buffer_alloc(bi, 40, -1), 40);
	ck_assert_uint_eq(sched_impair_enqueue(m, bi, 20, s - 20 * MS, dropped, dup, &n_dup), 0);
	struct sched_impair_config c = { .delay_ns = MS };
	ck_assert_int_eq(sched_impair_set(m, &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(sched_impair_dequeue(m, s - MS, out, 16), 0); /* the page before */
	ck_assert_uint_eq(sched_impair_enqueue(m, bi + 20, 20, s - MS, dropped, dup, &n_dup), 0);
	for (uint32_t i = 0; i < 40; i++)
		ck_assert_uint_eq(buffer_get(bi[i])->timestamp_ns, s);
	ck_assert_uint_eq(sched_impair_next_ns(m), s);
	uint32_t n = drain_in_order(m, s, 16, bi, 0, 40);
	ck_assert_uint_eq(n, 40);
	ck_assert_uint_eq(sched_impair_held(m), 0);
	sched_impair_destroy(m);
}
END_TEST

/* The words: accepted, printed back the same, refused with the reason. */
START_TEST(test_parse)
{
	struct {
		const char *in, *out;
	} ok[] = {
		{ "delay 20ms", "delay 20ms" },
		{ "delay 20ms 5ms 25%", "delay 20ms jitter 5ms 25%" },
		{ "delay 20ms jitter 5ms distribution pareto", "delay 20ms jitter 5ms distribution pareto" },
		{ "loss random 1% 25%", "loss random 1% 25%" },
		{ "loss gemodel 1% 10% 100% 0%", "loss gemodel 1% 10% 100% 0%" },
		{ "duplicate 0.5% reorder 10% gap 3 delay 1ms", "delay 1ms duplicate 0.5% reorder 10% gap 3" },
		{ "corrupt 0.1% rate 100mbit packet-overhead -4", "corrupt 0.1% rate 100mbit packet-overhead -4" },
		/* The seed is written back (last): a replay draws the same numbers. */
		{ "seed 18446744073709551615 loss random 1%", "loss random 1% seed 18446744073709551615" },
	};
	const char *bad[] = {
		"", "delay", "delay 20", "loss 101%", "loss random", "loss gemodel", "loss burst 1%", "reorder 10%",
		"delay 1ms reorder 10% gap 0", "duplicate 5", "rate fast", "rate 1bit", "distribution normal delay 1ms",
		"seed 0", "jitter 1ms", "delay 11s", "rate 1mbit packet-overhead 99999",
	};
	char err[256], buf[512], txt[512];
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char *argv[32];
		int argc = 0;
		snprintf(buf, sizeof(buf), "%s", ok[i].in);
		for (char *w = strtok(buf, " "); w; w = strtok(NULL, " "))
			argv[argc++] = w;
		struct sched_impair_config c;
		ck_assert_msg(sched_impair_parse(&c, argc, argv, err, sizeof(err)) == 0, "%s: %s", ok[i].in, err);
		sched_impair_format(&c, txt, sizeof(txt));
		ck_assert_str_eq(txt, ok[i].out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[32];
		int argc = 0;
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		for (char *w = strtok(buf, " "); w; w = strtok(NULL, " "))
			argv[argc++] = w;
		struct sched_impair_config c;
		err[0] = 0;
		ck_assert_msg(sched_impair_parse(&c, argc, argv, err, sizeof(err)) != 0, "accepted: %s", bad[i]);
		ck_assert_msg(err[0], "%s: no reason given", bad[i]);
	}
}
END_TEST

static Suite *impair_suite(void)
{
	Suite *s = suite_create("sched-impair");
	TCase *tc = tcase_create("impair");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_ks_uniform);
	tcase_add_test(tc, test_ks_normal);
	tcase_add_test(tc, test_ks_pareto);
	tcase_add_test(tc, test_ks_paretonormal);
	tcase_add_test(tc, test_loss_random);
	tcase_add_test(tc, test_gemodel_simple);
	tcase_add_test(tc, test_gemodel_general);
	tcase_add_test(tc, test_duplicate);
	tcase_add_test(tc, test_corrupt);
	tcase_add_test(tc, test_reorder);
	tcase_add_test(tc, test_rate);
	tcase_add_test(tc, test_never_early);
	tcase_add_test(tc, test_slot_order);
	tcase_add_test(tc, test_slot_both_wheels);
	tcase_add_test(tc, test_parse);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(impair_suite());
}
