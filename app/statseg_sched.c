/* The stats segment's /sched/, global /dist/ and /cli/ entries
 * (app/statseg_private.h; names in docs/stats-segment.md).
 *
 * None of them takes the barrier. Each value is a word its owner already
 * writes with a relaxed store and the segment's thread reads with a relaxed
 * load: the schedules' counters and held counts (sched_egress_stats, any
 * thread), the distributor's published counters (dist_stats_total), the CLI
 * server's atomics. The one level that has no such word is what the class
 * queues in front of the distributor hold (the evq's own count is thread
 * 0's, which is why `show sched` parks the datapath to read it); here it is
 * derived from the front's monotonic counters (sched_front_held_counted:
 * queued - sent - dist-dropped - shutdown), equal to `show sched`'s
 * whenever thread 0 is between loops, never negative. What the entries describe (which interfaces have a
 * schedule, the class names, whether the front exists) changes only in
 * commands, under the CLI command lock the writer holds. */
#include <stdio.h>
#include <string.h>

#include "app/statseg_private.h"
#include "base/log_ring.h"
#include "cli/cli.h"
#include "graph/graph.h"
#include "nodes/dist/dist_graph.h"
#include "nodes/sched/sched_io.h"

void statseg_sched_shape(struct statseg_sched_shape *s)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t i = 0; i < DEV_MAX; i++)
		if (sched_io_ifs[i].e && dev_by_index(i)) {
			s->scheduled[i] = true;
			s->n_ifs = i + 1;
		}
	s->front = sched_front.evq != NULL;
	for (uint32_t i = 0; i < s->n_ifs; i++)
		if (s->scheduled[i] && sched_io_ifs[i].hq) {
			s->n_subs += hqos_sub_count(sched_io_ifs[i].hq, &s->sub_gen[i]);
			s->imp_subs[i] = hqos_impair_count(sched_io_ifs[i].hq);
			s->n_imp_subs += s->imp_subs[i];
		}
	snprintf(s->classes[0], sizeof(s->classes[0]), "(none)");
	for (uint32_t c = 1; c < SCHED_MAX_CLASSES; c++)
		memcpy(s->classes[c], sched_class_table.cls[c].name, sizeof(s->classes[c]));
}

/* ---- layout ---- */

/* An impairer's counters under prefix, one row per d (interfaces, or
 * impaired subscribers): the held gauge and the counters into idx[], the
 * lateness histogram's index returned. */
static uint32_t layout_impair(struct statseg_writer *w, const char *prefix, struct dim d, uint32_t idx[N_SCHED_IMPAIR])
{
	static const char *const impair[N_SCHED_IMPAIR] = {
		"held",	     "lost-random", "lost-gemodel",	 "over-max-held", "duplicated", "duplicate-no-buffer",
		"reordered", "corrupted",   "corrupt-no-buffer", "delayed",	  "released",
	};
	char name[96];
	for (int k = 0; k < N_SCHED_IMPAIR; k++) {
		snprintf(name, sizeof(name), "%s/%s", prefix, impair[k]);
		idx[k] = statseg_add(w, name, k ? STATSEG_COUNTER_VECTOR : STATSEG_GAUGE_VECTOR, d, ONE);
	}
	snprintf(name, sizeof(name), "%s/release-lateness", prefix);
	return statseg_add(w, name, STATSEG_COUNTER_VECTOR, d, (struct dim){ "log2-us", SCHED_IMPAIR_LATE_BUCKETS, NONE });
}

/* Row r of an impairer's entries (layout_impair's). */
static void fill_impair(struct statseg_writer *w, const uint32_t idx[N_SCHED_IMPAIR], uint32_t late, uint32_t r,
			const struct sched_impair *m)
{
	struct sched_impair_stats is;
	sched_impair_stats(m, &is);
	const uint64_t vi[N_SCHED_IMPAIR] = { is.held,	      is.lost_random, is.lost_gemodel,	     is.over_max_held,
					      is.duplicated,  is.duplicate_no_buffer, is.reordered, is.corrupted,
					      is.corrupt_no_buffer, is.delayed, is.released };
	for (int k = 0; k < N_SCHED_IMPAIR; k++)
		statseg_put_elem(w, idx[k], r, 0, 0, vi[k]);
	for (uint32_t b = 0; b < SCHED_IMPAIR_LATE_BUCKETS; b++)
		statseg_put_elem(w, late, r, b, 0, is.late[b]);
}

static void layout_ifs(struct statseg_writer *w, const struct shape *s, struct dim cls)
{
	static const char *const per_if[N_SCHED_IF] = { "/sched/if/held", "/sched/if/enqueued", "/sched/if/released",
							 "/sched/if/dropped" };
	static const char *const per_class[N_SCHED_IF_CLASS] = { "/sched/if/class/held", "/sched/if/class/released",
								 "/sched/if/class/dropped" };
	struct entries *e = &w->e;
	const struct statseg_sched_shape *sh = &s->sched;
	e->sched_if_names = NONE;
	for (int k = 0; k < N_SCHED_IF; k++)
		e->sched_if[k] = NONE;
	for (int k = 0; k < N_SCHED_IF_CLASS; k++)
		e->sched_if_class[k] = NONE;
	for (int k = 0; k < N_SCHED_HQOS; k++)
		e->sched_hqos[k] = NONE;
	for (int k = 0; k < N_SCHED_IMPAIR; k++)
		e->sched_impair[k] = NONE;
	e->sched_impair_late = NONE;
	if (!sh->n_ifs)
		return;
	e->sched_if_names =
		statseg_add(w, "/sched/if/names", STATSEG_NAME_VECTOR, (struct dim){ "interface", sh->n_ifs, NONE }, ONE);
	struct dim i = { "interface", sh->n_ifs, e->sched_if_names };
	for (int k = 0; k < N_SCHED_IF; k++) /* the first of each list is a gauge */
		e->sched_if[k] = statseg_add(w, per_if[k], k ? STATSEG_COUNTER_VECTOR : STATSEG_GAUGE_VECTOR, i, ONE);
	for (int k = 0; k < N_SCHED_IF_CLASS; k++)
		e->sched_if_class[k] =
			statseg_add(w, per_class[k], k ? STATSEG_COUNTER_VECTOR : STATSEG_GAUGE_VECTOR, i, cls);
	static const char *const hqos[N_SCHED_HQOS] = {
		"/sched/if/hqos/held",		"/sched/if/hqos/departed-packets", "/sched/if/hqos/departed-bytes",
		"/sched/if/hqos/dropped-limit", "/sched/if/hqos/dropped-codel",    "/sched/if/hqos/marked",
	};
	for (int k = 0; k < N_SCHED_HQOS; k++) /* 0 for an interface without a hierarchy */
		e->sched_hqos[k] = statseg_add(w, hqos[k], k ? STATSEG_COUNTER_VECTOR : STATSEG_GAUGE_VECTOR, i, ONE);
	e->sched_impair_late = layout_impair(w, "/sched/if/impair", i, e->sched_impair);
}

/* /sched/subscribers/: one row per subscriber of every interface's
 * hierarchy, in interface order then subscriber id, named "IF/NAME". */
static void layout_subs(struct statseg_writer *w, const struct shape *s)
{
	static const char *const names[N_SCHED_SUB] = {
		"/sched/subscribers/departed-packets", "/sched/subscribers/departed-bytes",
		"/sched/subscribers/dropped-limit",    "/sched/subscribers/dropped-codel",
		"/sched/subscribers/marked",
	};
	struct entries *e = &w->e;
	e->sub_names = NONE;
	for (int k = 0; k < N_SCHED_SUB; k++)
		e->sub[k] = NONE;
	/* Laid out last, and only when they fit: 65,536 subscribers on
	 * several ports may not, and the rest of the segment must. */
	uint64_t bytes = (uint64_t)s->sched.n_subs * (STATSEG_LABEL_SIZE + N_SCHED_SUB * 8);
	uint64_t dir = ROUND_UP(sizeof(struct statseg_header) + (uint64_t)(w->n_dir + 1 + N_SCHED_SUB) *
									  sizeof(struct statseg_entry), 64);
	if (!s->sched.n_subs || dir + w->data_used + bytes + 8 * (1 + N_SCHED_SUB) > w->size)
		return;
	e->sub_names = statseg_add(w, "/sched/subscribers/names", STATSEG_NAME_VECTOR,
				   (struct dim){ "subscriber", s->sched.n_subs, NONE }, ONE);
	struct dim d = { "subscriber", s->sched.n_subs, e->sub_names };
	for (int k = 0; k < N_SCHED_SUB; k++)
		e->sub[k] = statseg_add(w, names[k], STATSEG_COUNTER_VECTOR, d, ONE);
}

/* /sched/subscribers/impair/: one row per subscriber with an impairer
 * (at most HQOS_IMPAIR_MAX a port, so always laid out), "IF/NAME", in
 * interface order then the hierarchy's impairer order. */
static void layout_sub_impair(struct statseg_writer *w, const struct shape *s)
{
	struct entries *e = &w->e;
	e->sub_imp_names = e->sub_imp_late = NONE;
	for (int k = 0; k < N_SCHED_IMPAIR; k++)
		e->sub_imp[k] = NONE;
	if (!s->sched.n_imp_subs)
		return;
	struct dim d = { "subscriber", s->sched.n_imp_subs, NONE };
	e->sub_imp_names = statseg_add(w, "/sched/subscribers/impair/names", STATSEG_NAME_VECTOR, d, ONE);
	d.labels = e->sub_imp_names;
	e->sub_imp_late = layout_impair(w, "/sched/subscribers/impair", d, e->sub_imp);
}

/* Each impaired subscriber in layout_sub_impair's order: its row, label
 * written (names) or counters (values). */
static void each_sub_impair(struct statseg_writer *w, const struct shape *s, bool names)
{
	uint32_t row = 0;
	for (uint32_t i = 0; i < s->sched.n_ifs; i++) {
		const struct hqos *hq = s->sched.scheduled[i] ? sched_io_ifs[i].hq : NULL;
		uint32_t n = hq ? hqos_impair_count(hq) : 0;
		for (uint32_t k = 0; k < n && row < s->sched.n_imp_subs; k++, row++) {
			uint32_t id;
			const struct sched_impair *m = hqos_impair_at(hq, k, &id);
			if (names) {
				char label[DEV_NAME_SIZE + HQOS_NAME_SIZE + 1];
				snprintf(label, sizeof(label), "%s/%s", s->devs[i].name, hqos_sub_name(hq, id));
				statseg_put_label(w, w->e.sub_imp_names, row, label);
			} else {
				fill_impair(w, w->e.sub_imp, w->e.sub_imp_late, row, m);
			}
		}
	}
}

/* Each subscriber of the hierarchies in the order of layout_subs, with
 * its row: fn(w, row, interface, hierarchy, id). */
static void each_sub(struct statseg_writer *w, const struct shape *s,
		     void (*fn)(struct statseg_writer *w, const struct shape *s, uint32_t row, uint32_t i, const struct hqos *hq,
				uint32_t id))
{
	uint32_t row = 0;
	for (uint32_t i = 0; i < s->sched.n_ifs && row < s->sched.n_subs; i++) {
		const struct hqos *hq = s->sched.scheduled[i] ? sched_io_ifs[i].hq : NULL;
		for (int id = hq ? hqos_sub_next(hq, -1) : -1; id >= 0 && row < s->sched.n_subs; id = hqos_sub_next(hq, id))
			fn(w, s, row++, i, hq, (uint32_t)id);
	}
}

static void sub_label(struct statseg_writer *w, const struct shape *s, uint32_t row, uint32_t i, const struct hqos *hq,
		      uint32_t id)
{
	char label[DEV_NAME_SIZE + HQOS_NAME_SIZE + 1];
	snprintf(label, sizeof(label), "%s/%s", s->devs[i].name, hqos_sub_name(hq, id));
	statseg_put_label(w, w->e.sub_names, row, label);
}

static void sub_fill(struct statseg_writer *w, const struct shape *s, uint32_t row, uint32_t i, const struct hqos *hq,
		     uint32_t id)
{
	(void)s, (void)i;
	struct hqos_counters c;
	hqos_sub_counters(hq, id, &c);
	const uint64_t v[N_SCHED_SUB] = { c.departed_packets, c.departed_bytes, c.dropped_limit, c.dropped_codel,
					  c.marked };
	for (int k = 0; k < N_SCHED_SUB; k++)
		statseg_put_elem(w, w->e.sub[k], row, 0, 0, v[k]);
}

static void layout_front(struct statseg_writer *w, const struct shape *s, struct dim cls)
{
	static const char *const names[N_SCHED_FRONT] = {
		"/sched/class-queues/held",	    "/sched/class-queues/queued",	"/sched/class-queues/sent",
		"/sched/class-queues/queue-full", "/sched/class-queues/dist-dropped", "/sched/class-queues/shutdown",
	};
	for (int k = 0; k < N_SCHED_FRONT; k++)
		w->e.front[k] = s->sched.front
					? statseg_add(w, names[k], k ? STATSEG_COUNTER_VECTOR : STATSEG_GAUGE_VECTOR, cls, ONE)
					: NONE;
}

/* The distributor's counters over every worker (the per-worker ones are in
 * statseg.c): drops by reason and the reorder window. */
static void layout_dist_globals(struct statseg_writer *w, const struct shape *s)
{
	static const struct {
		const char *name;
		uint32_t type;
	} g[N_DIST_GLOBALS] = {
		{ "/dist/window/used", STATSEG_SCALAR_GAUGE },	      { "/dist/window/size", STATSEG_SCALAR_GAUGE },
		{ "/dist/window/released", STATSEG_SCALAR_COUNTER }, { "/dist/window/gaps", STATSEG_SCALAR_COUNTER },
		{ "/dist/window/unordered", STATSEG_SCALAR_COUNTER }, { "/dist/bad-returns", STATSEG_SCALAR_COUNTER },
	};
	struct entries *e = &w->e;
	e->dist_reasons = e->dist_drops = NONE;
	for (int k = 0; k < N_DIST_GLOBALS; k++)
		e->dist_globals[k] = NONE;
	if (!s->dist)
		return;
	e->dist_reasons =
		statseg_add(w, "/dist/drop-reasons", STATSEG_NAME_VECTOR, (struct dim){ "reason", DIST_N_DROP, NONE }, ONE);
	e->dist_drops = statseg_add(w, "/dist/drops-by-reason", STATSEG_COUNTER_VECTOR,
				    (struct dim){ "reason", DIST_N_DROP, e->dist_reasons }, ONE);
	for (int k = 0; k < N_DIST_GLOBALS; k++)
		e->dist_globals[k] = statseg_add_scalar(w, g[k].name, g[k].type);
}

static void layout_cli(struct statseg_writer *w)
{
	static const char *const names[N_CLI_COUNTERS] = {
		"/cli/sessions-open", "/cli/accepted",	    "/cli/refused-busy", "/cli/logins",
		"/cli/login-failures", "/cli/idle-closed", "/cli/long-lines",   "/cli/closed", "/cli/commands", "/cli/command-errors",
	};
	for (int k = 0; k < N_CLI_COUNTERS; k++)
		w->e.cli[k] = statseg_add_scalar(w, names[k], k ? STATSEG_SCALAR_COUNTER : STATSEG_SCALAR_GAUGE);
	static const char *const log_names[N_LOG_COUNTERS] = { "/log/lines", "/log/overwritten" };
	for (int k = 0; k < N_LOG_COUNTERS; k++)
		w->e.log[k] = statseg_add_scalar(w, log_names[k], STATSEG_SCALAR_COUNTER);
}

void statseg_sched_layout(struct statseg_writer *w, const struct shape *s)
{
	struct entries *e = &w->e;
	struct dim cls = { "class", SCHED_MAX_CLASSES, NONE };
	e->class_names = statseg_add(w, "/sched/classes/names", STATSEG_NAME_VECTOR, cls, ONE);
	cls.labels = e->class_names;
	e->class_packets = statseg_add(w, "/sched/classes/packets", STATSEG_COUNTER_VECTOR, cls, ONE);
	layout_ifs(w, s, cls);
	layout_front(w, s, cls);
	layout_dist_globals(w, s);
	layout_cli(w);
	layout_sub_impair(w, s);
	layout_subs(w, s);
}

void statseg_sched_names(struct statseg_writer *w, const struct shape *s)
{
	const struct entries *e = &w->e;
	for (uint32_t c = 0; c < SCHED_MAX_CLASSES; c++)
		statseg_put_label(w, e->class_names, c, s->sched.classes[c]);
	for (uint32_t i = 0; i < s->sched.n_ifs; i++)
		statseg_put_label(w, e->sched_if_names, i, s->sched.scheduled[i] ? s->devs[i].name : "");
	for (uint32_t r = 0; s->dist && r < DIST_N_DROP; r++)
		statseg_put_label(w, e->dist_reasons, r, dist_drop_reason_strings[r]);
	if (e->sub_names != NONE)
		each_sub(w, s, sub_label);
	if (e->sub_imp_names != NONE)
		each_sub_impair(w, s, true);
}

/* ---- values ---- */

/* The hierarchy's sums over its subscribers (hqos_port_stats: relaxed
 * counters; the subscriber array changes only in commands, under the
 * lock the writer holds). */
static void fill_hqos(struct statseg_writer *w, uint32_t i, const struct hqos *hq)
{
	struct hqos_port_stats ps;
	memset(&ps, 0, sizeof(ps));
	if (hq)
		hqos_port_stats(hq, &ps);
	const uint64_t v[N_SCHED_HQOS] = { ps.held,		ps.c.departed_packets, ps.c.departed_bytes,
					   ps.c.dropped_limit, ps.c.dropped_codel,    ps.c.marked };
	for (int k = 0; k < N_SCHED_HQOS; k++)
		statseg_put_elem(w, w->e.sched_hqos[k], i, 0, 0, v[k]);
}

static void fill_if(struct statseg_writer *w, uint32_t i, const struct sched_egress *eg)
{
	const struct entries *e = &w->e;
	struct sched_egress_stats st;
	fill_hqos(w, i, sched_io_ifs[i].hq);
	sched_egress_stats(eg, &st);
	const uint64_t v[N_SCHED_IF] = { st.held, st.enqueued, st.released, st.dropped };
	for (int k = 0; k < N_SCHED_IF; k++)
		statseg_put_elem(w, e->sched_if[k], i, 0, 0, v[k]);
	fill_impair(w, e->sched_impair, e->sched_impair_late, i, sched_egress_impair(eg));
	for (uint32_t c = 0; c < SCHED_MAX_CLASSES; c++) {
		const uint64_t vc[N_SCHED_IF_CLASS] = { st.held_class[c], st.released_class[c], st.dropped_class[c] };
		for (int k = 0; k < N_SCHED_IF_CLASS; k++)
			statseg_put_elem(w, e->sched_if_class[k], i, c, 0, vc[k]);
	}
}

/* One class queue's counters, held derived from them (the file's comment;
 * held first: its reads come before the others, which are then no older). */
static void fill_front_class(struct statseg_writer *w, uint32_t c)
{
	const struct sched_front *f = &sched_front;
	uint64_t held = sched_front_held_counted(c);
	const uint64_t v[N_SCHED_FRONT] = { held,
					    stat_read(&f->queued[c]),
					    stat_read(&f->sent[c]),
					    stat_read(&f->queue_full[c]),
					    stat_read(&f->dist_dropped[c]),
					    stat_read(&f->shutdown[c]) };
	for (int k = 0; k < N_SCHED_FRONT; k++)
		statseg_put_elem(w, w->e.front[k], c, 0, 0, v[k]);
}

static void fill_dist_globals(struct statseg_writer *w, const struct dist *d)
{
	const struct entries *e = &w->e;
	struct dist_stats ds;
	dist_stats_total(d, &ds);
	for (uint32_t r = 0; r < DIST_N_DROP; r++)
		statseg_put_elem(w, e->dist_drops, r, 0, 0, ds.drops[r]);
	const uint64_t v[N_DIST_GLOBALS] = { ds.window_used, ds.window_size, ds.released,
					     ds.gaps,	     ds.unordered,   ds.bad_returns };
	for (int k = 0; k < N_DIST_GLOBALS; k++)
		statseg_put_elem(w, e->dist_globals[k], 0, 0, 0, v[k]);
}

void statseg_sched_fill(struct statseg_writer *w, const struct shape *s, struct graph *g)
{
	uint64_t packets[SCHED_MAX_CLASSES];
	sched_io_class_packets(g, packets);
	for (uint32_t c = 0; c < SCHED_MAX_CLASSES; c++) {
		statseg_put_elem(w, w->e.class_packets, c, 0, 0, packets[c]);
		if (s->sched.front)
			fill_front_class(w, c);
	}
	for (uint32_t i = 0; i < s->sched.n_ifs; i++)
		if (s->sched.scheduled[i])
			fill_if(w, i, sched_io_ifs[i].e);
	if (w->e.sub_names != NONE)
		each_sub(w, s, sub_fill);
	if (w->e.sub_imp_names != NONE)
		each_sub_impair(w, s, false);
	if (s->dist)
		fill_dist_globals(w, s->dist);
	struct cli_server_counters cc;
	cli_server_counters(&cc);
	const uint64_t v[N_CLI_COUNTERS] = { cc.sessions_open, cc.accepted,    cc.refused_busy, cc.logins,
					     cc.login_failures, cc.idle_closed, cc.long_lines,   cc.closed, cc.commands, cc.command_errors };
	for (int k = 0; k < N_CLI_COUNTERS; k++)
		statseg_put_elem(w, w->e.cli[k], 0, 0, 0, v[k]);
	struct log_ring *r = base_log_ring();
	uint64_t lv[N_LOG_COUNTERS] = { 0, 0 };
	if (r)
		log_ring_counters(r, &lv[0], &lv[1]);
	for (int k = 0; k < N_LOG_COUNTERS; k++)
		statseg_put_elem(w, w->e.log[k], 0, 0, 0, lv[k]);
}
