/* The stats segment's /lcp/netlink/ entries (app/statseg_private.h; names
 * in docs/stats-segment.md): linux-cp's netlink listeners' counters, as
 * `show lcp json`'s "netlink" has them.
 *
 * No barrier and no lock: every value is a C11 atomic the listener threads
 * already write (struct lcp_nl_stats, nodes/lcp/lcp_nl.h), read here with
 * one atomic load each. The shape never changes (the reasons and kinds are
 * fixed enums), so the entries are laid out always, zeros until
 * `lcp create` starts a listener. */
#include <stdatomic.h>

#include "app/statseg_private.h"
#include "nodes/lcp/lcp_nl.h"

static const struct {
	const char *name;
	uint32_t type;
	_Atomic uint64_t *v; /* NULL: the listeners' count */
} scalars[N_LCP_SCALARS] = {
	{ "/lcp/netlink/listeners", STATSEG_SCALAR_GAUGE, NULL },
	{ "/lcp/netlink/messages", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.messages },
	{ "/lcp/netlink/applied", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.applied },
	{ "/lcp/netlink/multipath", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.multipath },
	{ "/lcp/netlink/nh-routes", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.nh_routes },
	{ "/lcp/netlink/overruns", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.enobufs },
	{ "/lcp/netlink/resyncs", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.resyncs },
	{ "/lcp/netlink/resyncs-redone", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.resyncs_redone },
	{ "/lcp/netlink/swept", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.swept },
	{ "/lcp/netlink/drained", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.drained },
	{ "/lcp/netlink/batches", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.batches },
	{ "/lcp/netlink/hold-ns", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.hold_ns },
	{ "/lcp/netlink/routes", STATSEG_SCALAR_GAUGE, &lcp_nl_stats.routes },
	{ "/lcp/netlink/routes6", STATSEG_SCALAR_GAUGE, &lcp_nl_stats.routes6 },
	{ "/lcp/netlink/max-batch", STATSEG_SCALAR_GAUGE, &lcp_nl_stats.max_batch },
	{ "/lcp/netlink/held-max", STATSEG_SCALAR_GAUGE, &lcp_nl_stats.held_max },
	{ "/lcp/netlink/hold-max-ns", STATSEG_SCALAR_GAUGE, &lcp_nl_stats.hold_max_ns },
	{ "/lcp/netlink/hold-cpu-max-ns", STATSEG_SCALAR_GAUGE, &lcp_nl_stats.hold_cpu_max_ns },
	{ "/lcp/netlink/routes-changed-unix-ns", STATSEG_SCALAR_GAUGE, &lcp_nl_stats.routes_changed_unix_ns },
	{ "/lcp/netlink/hold-cpu-ns", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.hold_cpu_ns },
	{ "/lcp/netlink/hold-faults", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.hold_faults },
	{ "/lcp/netlink/hold-faults-max", STATSEG_SCALAR_GAUGE, &lcp_nl_stats.hold_faults_max },
	{ "/lcp/netlink/holds-preempted", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.holds_preempted },
	{ "/lcp/netlink/holds-raised", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.holds_raised },
	{ "/lcp/netlink/holds-unraised", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.holds_unraised },
	{ "/lcp/netlink/frees-deferred", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.frees_deferred },
	{ "/lcp/netlink/free-ns", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.free_ns },
	{ "/lcp/netlink/prefault-ns", STATSEG_SCALAR_COUNTER, &lcp_nl_stats.prefault_ns },
};

void statseg_lcp_layout(struct statseg_writer *w)
{
	struct entries *e = &w->e;
	for (int k = 0; k < N_LCP_SCALARS; k++)
		e->lcp[k] = statseg_add_scalar(w, scalars[k].name, scalars[k].type);
	struct dim r = { "reason", LCP_NL_IGN_N, NONE }, k = { "kind", LCP_NL_K_N, NONE };
	e->lcp_reasons = statseg_add(w, "/lcp/netlink/ignore-reasons", STATSEG_NAME_VECTOR, r, ONE);
	r.labels = e->lcp_reasons;
	e->lcp_ignored = statseg_add(w, "/lcp/netlink/ignored", STATSEG_COUNTER_VECTOR, r, ONE);
	e->lcp_kinds = statseg_add(w, "/lcp/netlink/kinds", STATSEG_NAME_VECTOR, k, ONE);
	k.labels = e->lcp_kinds;
	e->lcp_applied = statseg_add(w, "/lcp/netlink/applied-by-kind", STATSEG_COUNTER_VECTOR, k, ONE);
}

void statseg_lcp_names(struct statseg_writer *w)
{
	for (uint32_t i = 0; i < LCP_NL_IGN_N; i++)
		statseg_put_label(w, w->e.lcp_reasons, i, lcp_nl_ignore_name((enum lcp_nl_ignore)i));
	for (uint32_t i = 0; i < LCP_NL_K_N; i++)
		statseg_put_label(w, w->e.lcp_kinds, i, lcp_nl_kind_name((enum lcp_nl_kind)i));
}

void statseg_lcp_fill(struct statseg_writer *w)
{
	const struct entries *e = &w->e;
	for (int k = 0; k < N_LCP_SCALARS; k++)
		statseg_put_elem(w, e->lcp[k], 0, 0, 0, scalars[k].v ? atomic_load(scalars[k].v) : lcp_nl_n_listeners());
	for (uint32_t i = 0; i < LCP_NL_IGN_N; i++)
		statseg_put_elem(w, e->lcp_ignored, i, 0, 0, atomic_load(&lcp_nl_stats.ignored[i]));
	for (uint32_t i = 0; i < LCP_NL_K_N; i++)
		statseg_put_elem(w, e->lcp_applied, i, 0, 0, atomic_load(&lcp_nl_stats.applied_kind[i]));
}
