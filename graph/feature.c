/* Features (node.h's NODE_FEATURE_REGISTER, graph.h's "features per
 * interface"): nodes placed on existing arcs, on or off per interface.
 *
 * Each registration has a record with one bit per interface. The arc
 * from -> to is wired through the features on it whose bitmap is not
 * empty for the interfaces that exist, in registration order; one on for
 * none of them is left out of the path altogether (the node before it
 * points past it). The next indices
 * the nodes use do not change, only where they lead, so no node's code
 * knows. A feature with some bits set but not all runs behind
 * feature_split, which hands the other interfaces' packets straight to
 * the feature's own next `to` (the next feature on the arc, or its end):
 * the only per-packet cost of the scheme, and only while the feature is
 * on for some interfaces and not others.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_private.h"

#define FEATURE_MAX 64
#define FEATURE_ALL UINT64_MAX

struct feature_rec {
	const struct node_feature *f;
	uint64_t on; /* bit i: on for interface i; written under the barrier */
};

static struct feature_rec features[FEATURE_MAX];
static uint32_t n_features;
/* Interfaces that exist (graph_feature_if_live): a feature is on
 * "nowhere" or "everywhere" among these. All until the interface layer
 * says (a graph without it: every index counts). */
static uint64_t live = FEATURE_ALL;
static bool live_told;
/* The graph the features were last wired into (graph_feature_if_reset
 * from an interface's delete hook, which has no graph to hand). */
static struct graph *wired;

_Static_assert(GRAPH_FEATURE_IF_MAX == 64, "one uint64_t bitmap per feature");

void node_feature_register(const struct node_feature *f)
{
	/* Constructors run before main: nowhere to report an overflow but stderr. */
	if (n_features == FEATURE_MAX) {
		fprintf(stderr, "sluice: graph: feature table full, '%s' ignored\n", f->node);
		return;
	}
	features[n_features].f = f;
	features[n_features].on = f->default_off ? 0 : FEATURE_ALL;
	n_features++;
}

static bool reg_names_next(const struct node_reg *reg, const char *name)
{
	for (uint16_t k = 0; k < reg->n_next; k++)
		if (reg->next_nodes[k] && strcmp(reg->next_nodes[k], name) == 0)
			return true;
	return false;
}

static bool same_arc(const struct node_feature *a, const struct node_feature *b)
{
	return strcmp(a->from, b->from) == 0 && strcmp(a->to, b->to) == 0;
}

/* A node is a feature on one arc: its split could not tell which arc a
 * packet came by, so where to send one the feature is off for. */
static const struct node_feature *other_arc(uint32_t i)
{
	for (uint32_t j = 0; j < i; j++)
		if (strcmp(features[j].f->node, features[i].f->node) == 0)
			return features[j].f;
	return NULL;
}

/* Every feature's node exists and names `to`, and `from` names `to`. */
static int features_check(const struct graph *g, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < n_features; i++) {
		const struct node_feature *f = features[i].f, *o = other_arc(i);
		int n = graph_node_index(g, f->node), from = graph_node_index(g, f->from);
		const char *why = n < 0 ? "the node does not exist"
				  : from < 0 ? "the arc's first node does not exist"
				  : !reg_names_next(g->nodes[from].reg, f->to) ? "the first node has no such next node"
				  : !reg_names_next(g->nodes[n].reg, f->to) ? "the node does not name the arc's end as a next node"
				  : o ? "the node is a feature on another arc already"
				      : NULL;
		if (why) {
			snprintf(err, errlen, "graph: feature '%s' on %s -> %s: %s", f->node, f->from, f->to, why);
			return -ENOENT;
		}
	}
	return 0;
}

/* The node the arc leads to after record `after` (-1: from the arc's
 * first node): the next feature on it that is on somewhere, or its end. */
static const char *arc_next(const struct node_feature *arc, int32_t after)
{
	for (uint32_t j = (uint32_t)(after + 1); j < n_features; j++)
		if (same_arc(features[j].f, arc) && (features[j].on & live))
			return features[j].f->node;
	return arc->to;
}

/* Point node's next indices that name `to` at target, on every thread too. */
static void point(struct graph *g, uint32_t node, const char *to, const char *target)
{
	struct graph_node *gn = &g->nodes[node];
	int t = graph_node_index(g, target);
	for (uint16_t k = 0; k < gn->reg->n_next; k++) {
		if (!gn->reg->next_nodes[k] || strcmp(gn->reg->next_nodes[k], to) != 0 || gn->next_index[k] == t)
			continue;
		gn->next_index[k] = t;
		for (uint32_t i = 0; i < g->n_threads; i++)
			g->threads[i]->rts[node].next[k] = &g->threads[i]->rts[t];
		if (g->n_threads)
			graph_elog_arc(g, node, k, (uint32_t)t);
	}
}

static node_fn_t feature_split;

/* Wire the arc of record r's feature through the features on it, and
 * give each of them the function its bitmap needs. */
static void wire_arc(struct graph *g, const struct node_feature *arc)
{
	point(g, (uint32_t)graph_node_index(g, arc->from), arc->to, arc_next(arc, -1));
	for (uint32_t j = 0; j < n_features; j++) {
		if (!same_arc(features[j].f, arc))
			continue;
		uint32_t n = (uint32_t)graph_node_index(g, features[j].f->node);
		struct graph_node *gn = &g->nodes[n];
		point(g, n, arc->to, arc_next(arc, (int32_t)j));
		/* On for every interface there is, or none: the node itself
		 * (packets of no interface then go with the rest). */
		uint64_t on = features[j].on & live;
		gn->feature = (int32_t)j;
		gn->fn = on == 0 || on == live ? gn->reg->fn : feature_split;
		for (uint32_t i = 0; i < g->n_threads; i++)
			g->threads[i]->rts[n].fn = gn->fn;
	}
}

int graph_features_build(struct graph *g, char *err, size_t errlen)
{
	int rc = features_check(g, err, errlen);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < n_features; i++) {
		struct graph_node *gn = &g->nodes[graph_node_index(g, features[i].f->node)];
		for (uint16_t k = 0; k < gn->reg->n_next; k++)
			if (gn->reg->next_nodes[k] && strcmp(gn->reg->next_nodes[k], features[i].f->to) == 0) {
				gn->feature_to = k;
				break;
			}
		wire_arc(g, features[i].f);
	}
	wired = g;
	return 0;
}

void graph_features_forget(struct graph *g)
{
	if (wired == g)
		wired = NULL;
}

/* The feature is on for some interfaces only: one pass keeps its
 * interfaces' packets in the frame, in order, and sends the others' on to
 * its next `to` (the store to both sides and two adds: no branch to
 * mispredict on a mixed frame). A packet with rx_if past the table has no
 * bit: off. The node gets the frame when something is left in it. */
static uint32_t feature_split(struct node_runtime *rt, struct frame *f)
{
	const struct graph_node *gn = &rt->graph->nodes[rt->node_index];
	const uint64_t on = features[gn->feature].on;
	uint32_t off[FRAME_SIZE];
	uint32_t n = f->n_vectors, k = 0, n_off = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t bi = f->buffers[i], rx = buffer_get(bi)->rx_if;
		uint32_t keep = (uint32_t)(rx < GRAPH_FEATURE_IF_MAX) & (uint32_t)(on >> (rx & 63));
		f->buffers[k] = bi;
		off[n_off] = bi;
		k += keep;
		n_off += keep ^ 1;
	}
	if (n_off)
		node_enqueue(rt, gn->feature_to, off, n_off);
	f->n_vectors = (uint16_t)k;
	return k ? gn->reg->fn(rt, f) : 0;
}

/* ---- control ---- */

uint32_t graph_feature_count(void)
{
	return n_features;
}

int graph_feature_info(uint32_t i, struct graph_feature_info *fi)
{
	if (i >= n_features)
		return -ENOENT;
	fi->node = features[i].f->node;
	fi->from = features[i].f->from;
	fi->to = features[i].f->to;
	fi->default_on = !features[i].f->default_off;
	fi->on = features[i].on;
	return 0;
}

/* Set record i's bitmap, rewiring g's arc under the barrier. */
static void feature_write(struct graph *g, uint32_t i, uint64_t on)
{
	if (features[i].on == on)
		return;
	if (!g)
		g = wired;
	if (!g || !g->built) {
		features[i].on = on;
		return;
	}
	graph_barrier_sync(g);
	features[i].on = on;
	wire_arc(g, features[i].f);
	graph_barrier_release(g);
}

int graph_feature_set(struct graph *g, uint32_t i, uint32_t if_index, bool on)
{
	if (i >= n_features || if_index >= GRAPH_FEATURE_IF_MAX)
		return -EINVAL;
	uint64_t bit = 1ull << if_index;
	feature_write(g, i, on ? features[i].on | bit : features[i].on & ~bit);
	return 0;
}

void graph_feature_if_live(struct graph *g, uint32_t if_index, bool is_live)
{
	if (if_index >= GRAPH_FEATURE_IF_MAX)
		return;
	if (!g)
		g = wired;
	uint64_t now = (live_told ? live : 0) & ~(1ull << if_index);
	if (is_live)
		now |= 1ull << if_index;
	live_told = true;
	if (now == live)
		return;
	if (!g || !g->built) {
		live = now;
		return;
	}
	graph_barrier_sync(g);
	live = now;
	for (uint32_t i = 0; i < n_features; i++)
		wire_arc(g, features[i].f);
	graph_barrier_release(g);
}

void graph_feature_if_reset(struct graph *g, uint32_t if_index)
{
	if (if_index >= GRAPH_FEATURE_IF_MAX)
		return;
	if (!g)
		g = wired;
	uint64_t bit = 1ull << if_index;
	for (uint32_t i = 0; i < n_features; i++)
		feature_write(g, i, features[i].f->default_off ? features[i].on & ~bit : features[i].on | bit);
}
