/* The impairment's words (impair.h: sched_impair_parse/format), shared by
 * the CLI and the tests; units through startup.conf's value parsers, so
 * times and rates read as everywhere else (20ms, 100mbit).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/conf.h"
#include "sched/impair.h"

static int unit(enum conf_type type, const char *what, const char *text, uint64_t *v, char *err, size_t errlen)
{
	struct conf_key k = { .name = what, .type = type, .offset = 0, .size = sizeof(uint64_t) };
	char e[CONF_MSG_SIZE];
	if (conf_value_parse(&k, text, v, e, sizeof(e)) == 0)
		return 0;
	snprintf(err, errlen, "%s %s: %s", what, text, e);
	return -EINVAL;
}

/* "12.5%" (the % required, as tc prints them) to a fraction of P_ONE. */
static bool percent(const char *w, uint64_t *p)
{
	char *end;
	if (!w || !*w || *w == '-')
		return false;
	double x = strtod(w, &end);
	if (end == w || strcmp(end, "%") != 0 || !(x >= 0 && x <= 100))
		return false;
	*p = (uint64_t)llround(x / 100.0 * (double)SCHED_IMPAIR_P_ONE);
	return true;
}

static bool is_percent(const char *w)
{
	uint64_t p;
	return percent(w, &p);
}

static int want_percent(const char *what, const char *w, uint64_t *p, char *err, size_t errlen)
{
	if (percent(w, p))
		return 0;
	snprintf(err, errlen, "%s %s: expected a percentage 0%%..100%% (for example 0.5%%)", what, w ? w : "(nothing)");
	return -EINVAL;
}

/* An optional CORR after a probability. */
static int opt_corr(int argc, char **argv, int *i, uint64_t *corr)
{
	if (*i + 1 < argc && is_percent(argv[*i + 1])) {
		percent(argv[++*i], corr);
	}
	return 0;
}

static int parse_delay(struct sched_impair_config *c, int argc, char **argv, int *i, char *err, size_t errlen)
{
	if (*i + 1 >= argc)
		return snprintf(err, errlen, "delay: expected a time (for example 20ms)"), -EINVAL;
	if (unit(CONF_DURATION, "delay", argv[++*i], &c->delay_ns, err, errlen))
		return -EINVAL;
	uint64_t v;
	char e[8];
	/* jitter J, or netem's bare second time */
	bool kw = *i + 1 < argc && strcmp(argv[*i + 1], "jitter") == 0;
	if (kw && *i + 2 >= argc)
		return snprintf(err, errlen, "jitter: expected a time (for example 5ms)"), -EINVAL;
	if (kw || (*i + 1 < argc && unit(CONF_DURATION, "jitter", argv[*i + 1], &v, e, sizeof(e)) == 0)) {
		*i += kw ? 2 : 1;
		if (unit(CONF_DURATION, "jitter", argv[*i], &c->jitter_ns, err, errlen))
			return -EINVAL;
		opt_corr(argc, argv, i, &c->delay_corr);
	}
	return 0;
}

static int parse_loss(struct sched_impair_config *c, int argc, char **argv, int *i, char *err, size_t errlen)
{
	const char *model = *i + 1 < argc ? argv[*i + 1] : "";
	if (strcmp(model, "random") == 0 || is_percent(model)) {
		*i += strcmp(model, "random") == 0 ? 2 : 1; /* tc takes `loss 1%` for random too */
		c->loss_model = SCHED_IMPAIR_LOSS_RANDOM;
		if (want_percent("loss random", *i < argc ? argv[*i] : NULL, &c->loss, err, errlen))
			return -EINVAL;
		return opt_corr(argc, argv, i, &c->loss_corr);
	}
	if (strcmp(model, "gemodel") == 0) {
		*i += 2;
		c->loss_model = SCHED_IMPAIR_LOSS_GEMODEL;
		if (want_percent("loss gemodel p", *i < argc ? argv[*i] : NULL, &c->ge_p, err, errlen))
			return -EINVAL;
		/* tc's defaults: r = 1 - p, 1-h = 100%, 1-k = 0 */
		c->ge_r = SCHED_IMPAIR_P_ONE - c->ge_p;
		c->ge_1h = SCHED_IMPAIR_P_ONE;
		c->ge_1k = 0;
		uint64_t *rest[] = { &c->ge_r, &c->ge_1h, &c->ge_1k };
		for (int k = 0; k < 3 && *i + 1 < argc && is_percent(argv[*i + 1]); k++)
			percent(argv[++*i], rest[k]);
		return 0;
	}
	snprintf(err, errlen, "loss %s: expected random P [CORR] or gemodel p [r [1-h [1-k]]]", model);
	return -EINVAL;
}

int sched_impair_parse(struct sched_impair_config *c, int argc, char **argv, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	if (argc == 0) {
		snprintf(err, errlen, "expected delay, loss, duplicate, reorder, corrupt, rate or seed (or off)");
		return -EINVAL;
	}
	for (int i = 0; i < argc; i++) {
		const char *w = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = 0;
		if (strcmp(w, "delay") == 0) {
			rc = parse_delay(c, argc, argv, &i, err, errlen);
		} else if (strcmp(w, "distribution") == 0) {
			int d = -1;
			for (int k = 0; next && k < SCHED_IMPAIR_N_DIST; k++)
				if (strcmp(next, sched_impair_dist_names[k]) == 0)
					d = k;
			if (d < 0)
				return snprintf(err, errlen, "distribution %s: expected uniform, normal, pareto or paretonormal",
						next ? next : "(nothing)"), -EINVAL;
			c->dist = (uint8_t)d;
			i++;
		} else if (strcmp(w, "loss") == 0) {
			rc = parse_loss(c, argc, argv, &i, err, errlen);
		} else if (strcmp(w, "duplicate") == 0 || strcmp(w, "corrupt") == 0 || strcmp(w, "reorder") == 0) {
			uint64_t *p = w[0] == 'd' ? &c->duplicate : w[0] == 'c' ? &c->corrupt : &c->reorder;
			uint64_t *corr = w[0] == 'd' ? &c->duplicate_corr : w[0] == 'c' ? &c->corrupt_corr : &c->reorder_corr;
			if (want_percent(w, next, p, err, errlen))
				return -EINVAL;
			i++;
			opt_corr(argc, argv, &i, corr);
			if (w[0] == 'r' && i + 1 < argc && strcmp(argv[i + 1], "gap") == 0) {
				char *end;
				const char *g = i + 2 < argc ? argv[i + 2] : "";
				unsigned long x = strtoul(g, &end, 10);
				if (!*g || *end || x < 1 || x > 1000000)
					return snprintf(err, errlen, "gap %s: expected 1..1000000 packets", g), -EINVAL;
				c->gap = (uint32_t)x;
				i += 2;
			}
		} else if (strcmp(w, "rate") == 0) {
			if (!next)
				return snprintf(err, errlen, "rate: expected a rate (for example 100mbit)"), -EINVAL;
			if (unit(CONF_RATE, "rate", next, &c->rate_bps, err, errlen))
				return -EINVAL;
			i++;
			if (i + 1 < argc && strcmp(argv[i + 1], "packet-overhead") == 0) {
				char *end;
				const char *o = i + 2 < argc ? argv[i + 2] : "";
				long x = strtol(o, &end, 10);
				if (!*o || *end || x < -SCHED_IMPAIR_OVERHEAD_MAX || x > SCHED_IMPAIR_OVERHEAD_MAX)
					return snprintf(err, errlen, "packet-overhead %s: expected -%d..%d bytes", o,
							SCHED_IMPAIR_OVERHEAD_MAX, SCHED_IMPAIR_OVERHEAD_MAX), -EINVAL;
				c->packet_overhead = (int32_t)x;
				i += 2;
			}
		} else if (strcmp(w, "seed") == 0) {
			char *end;
			unsigned long long x = next ? strtoull(next, &end, 0) : 0;
			if (!next || !*next || *end || !x)
				return snprintf(err, errlen, "seed %s: expected a number 1..2^64-1", next ? next : "(nothing)"),
				       -EINVAL;
			c->seed = x;
			i++;
		} else {
			snprintf(err, errlen, "unknown word %s: expected delay, distribution, loss, duplicate, reorder, corrupt, "
				 "rate or seed", w);
			return -EINVAL;
		}
		if (rc)
			return rc;
	}
	if (c->dist != SCHED_IMPAIR_DIST_UNIFORM && !c->jitter_ns)
		return snprintf(err, errlen, "distribution %s: needs a jitter (delay D jitter J)",
				sched_impair_dist_names[c->dist]), -EINVAL;
	if (c->reorder && !c->gap)
		c->gap = 1;
	return sched_impair_check(c, err, errlen);
}

void sched_impair_format_percent(uint64_t p, char *buf, size_t len)
{
	snprintf(buf, len, "%.6g%%", (double)p * 100.0 / (double)SCHED_IMPAIR_P_ONE);
}

static void time_text(uint64_t ns, char *buf, size_t len)
{
	struct conf_key k = { .type = CONF_DURATION, .offset = 0, .size = sizeof(uint64_t) };
	conf_value_format(&k, &ns, buf, len);
}

#define APPEND(...) (n += snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))

void sched_impair_format(const struct sched_impair_config *c, char *buf, size_t len)
{
	size_t n = 0;
	char a[32], b[32];
	buf[0] = 0;
	if (c->delay_ns || c->jitter_ns) {
		time_text(c->delay_ns, a, sizeof(a));
		APPEND("delay %s", a);
		if (c->jitter_ns) {
			time_text(c->jitter_ns, a, sizeof(a));
			APPEND(" jitter %s", a);
			if (c->delay_corr) {
				sched_impair_format_percent(c->delay_corr, a, sizeof(a));
				APPEND(" %s", a);
			}
			if (c->dist)
				APPEND(" distribution %s", sched_impair_dist_names[c->dist]);
		}
	}
	if (c->loss_model == SCHED_IMPAIR_LOSS_RANDOM) {
		sched_impair_format_percent(c->loss, a, sizeof(a));
		APPEND("%sloss random %s", n ? " " : "", a);
		if (c->loss_corr) {
			sched_impair_format_percent(c->loss_corr, a, sizeof(a));
			APPEND(" %s", a);
		}
	} else if (c->loss_model == SCHED_IMPAIR_LOSS_GEMODEL) {
		const uint64_t v[] = { c->ge_p, c->ge_r, c->ge_1h, c->ge_1k };
		APPEND("%sloss gemodel", n ? " " : "");
		for (int k = 0; k < 4; k++) {
			sched_impair_format_percent(v[k], a, sizeof(a));
			APPEND(" %s", a);
		}
	}
	const struct {
		const char *name;
		uint64_t p, corr;
	} ev[] = { { "duplicate", c->duplicate, c->duplicate_corr },
		   { "reorder", c->reorder, c->reorder_corr },
		   { "corrupt", c->corrupt, c->corrupt_corr } };
	for (int k = 0; k < 3; k++) {
		if (!ev[k].p)
			continue;
		sched_impair_format_percent(ev[k].p, a, sizeof(a));
		APPEND("%s%s %s", n ? " " : "", ev[k].name, a);
		if (ev[k].corr) {
			sched_impair_format_percent(ev[k].corr, b, sizeof(b));
			APPEND(" %s", b);
		}
		if (k == 1 && c->gap > 1)
			APPEND(" gap %u", c->gap);
	}
	if (c->rate_bps) {
		struct conf_key k = { .type = CONF_RATE, .offset = 0, .size = sizeof(uint64_t) };
		conf_value_format(&k, &c->rate_bps, a, sizeof(a));
		APPEND("%srate %s", n ? " " : "", a);
		if (c->packet_overhead)
			APPEND(" packet-overhead %d", c->packet_overhead);
	}
	/* The seed last, so that a written configuration (show running-config)
	 * replays to the same draws from the moment it is set. */
	if (n && c->seed)
		APPEND(" seed %" PRIu64, c->seed);
	if (!n)
		APPEND("off");
}
