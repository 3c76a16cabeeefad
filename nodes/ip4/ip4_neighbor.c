/* ip4-neighbor: the neighbour table (ip4_neighbor.h) and the process node
 * that applies it to the FIB on thread 0.
 *
 * The process node runs about every millisecond. For each entry whose MAC
 * was learnt or changed it writes the Ethernet rewrite into every REWRITE
 * adjacency via that neighbour and, for a neighbour on a connected subnet,
 * adds a /32 host route through such an adjacency (so later packets to it
 * skip glean); then it sends the entry's held packets back to ip4-lookup,
 * which now finds them resolved. Entries still incomplete after
 * ip4_nbr_resolve_timeout_ns lose their held packets (dropped and counted)
 * and are freed. It also ages the dynamic reachable entries
 * (ip4_neighbor.h): re-ARP probes in their last IP4_NBR_PROBES intervals,
 * then forgotten at the deadline; a pass over the table runs only when the
 * earliest of those events is due (or an entry was renewed), so they are
 * at most a millisecond late.
 *
 * FIB updates made here need no barrier: the FIB takes one updater at a time
 * alongside lock-free lookups, the control path (the other updater) runs
 * only while the barrier parks thread 0, and nothing here quiesces tbl8
 * groups. A rewrite is written before the host route that leads to it;
 * an adjacency already referenced by routes is written in place, so on a
 * multi-worker box a packet in flight during a MAC change may leave with a
 * mix of the two MACs (single-threaded, nothing runs concurrently).
 *
 * Next nodes: ip4-lookup (released packets), error-drop, interface-output
 *   (re-ARP probes).
 * Errors: held packet dropped (resolution timed out); resolutions applied;
 *   host routes that could not be added; re-ARP probes sent; reachable
 *   entries aged out; no buffer for a probe.
 * Trace: none (a process node marks no packets).
 * CLI: `show ip neighbors`, `show errors`.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ip4/arp.h"
#include "nodes/ethernet.h"
#include "nodes/ip4/ip4.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"

enum ip4_neighbor_next {
	IP4_NEIGHBOR_NEXT_DROP = 0,
	IP4_NEIGHBOR_NEXT_LOOKUP,
	IP4_NEIGHBOR_NEXT_OUTPUT,
	IP4_NEIGHBOR_N_NEXT,
};

enum ip4_neighbor_error {
	IP4_NEIGHBOR_ERROR_TIMEOUT = 0,
	IP4_NEIGHBOR_ERROR_APPLIED,
	IP4_NEIGHBOR_ERROR_HOST_ROUTE,
	IP4_NEIGHBOR_ERROR_PROBE,
	IP4_NEIGHBOR_ERROR_AGED,
	IP4_NEIGHBOR_ERROR_NO_BUFFER,
	IP4_NEIGHBOR_N_ERROR,
};

static const char *const ip4_neighbor_error_strings[IP4_NEIGHBOR_N_ERROR] = {
	[IP4_NEIGHBOR_ERROR_TIMEOUT] = "held packet dropped: ARP resolution timed out",
	[IP4_NEIGHBOR_ERROR_APPLIED] = "neighbour resolutions applied to the FIB",
	[IP4_NEIGHBOR_ERROR_HOST_ROUTE] = "host route via a neighbour could not be added",
	[IP4_NEIGHBOR_ERROR_PROBE] = "re-ARP probe sent to a reachable neighbour",
	[IP4_NEIGHBOR_ERROR_AGED] = "reachable neighbour aged out",
	[IP4_NEIGHBOR_ERROR_NO_BUFFER] = "no buffer for a re-ARP probe",
};

#define SCAN_INTERVAL_NS 1000000ull
/* With nothing to resolve, apply or age: the longest suspend. The
 * datapath pokes it (graph_poke_processes) when it learns or creates an
 * entry, and the barrier when the control plane changed something, so
 * this bound only paces the aging of a table nobody touches. */
#define IDLE_SCAN_NS 100000000ull

/* The datapath left work for ip4-neighbor: run it at thread 0's next loop. */
static void poke(void)
{
	struct graph_thread *t = graph_thread_self();
	if (t)
		graph_poke_processes(t);
}

/* ---- the table ---- */

uint64_t ip4_nbr_resolve_timeout_ns = 3000000000ull;
uint64_t ip4_nbr_request_interval_ns = 1000000000ull;
uint64_t ip4_nbr_reachable_timeout_ns = 300000000000ull;
uint64_t (*ip4_nbr_clock)(void);

static struct {
	atomic_flag lock;
	uint32_t n_used;
	uint32_t n_incomplete; /* lets the scan skip the table when 0 */
	atomic_bool dirty;     /* some entry has IP4_NBR_F_APPLY */
	/* The process node's next aging pass: the earliest probe or deadline
	 * among the entries (0: now), and the tunables it was computed with. */
	uint64_t next_age_ns;
	uint64_t age_reach_ns, age_interval_ns;
	struct ip4_nbr e[IP4_NBR_MAX];
} nbr = { .lock = ATOMIC_FLAG_INIT };

void ip4_nbr_lock(void)
{
	while (atomic_flag_test_and_set_explicit(&nbr.lock, memory_order_acquire))
		cpu_relax();
}

void ip4_nbr_unlock(void)
{
	atomic_flag_clear_explicit(&nbr.lock, memory_order_release);
}

/* Holder "ip4-neighbor": packets waiting for their next hop's MAC. */
static void nbr_holder(void *ctx, struct buffer_tally *t)
{
	(void)ctx;
	uint64_t n = 0;
	ip4_nbr_lock();
	for (uint32_t i = 0; i < IP4_NBR_MAX; i++)
		if (nbr.e[i].state != IP4_NBR_FREE)
			for (uint32_t k = 0; k < nbr.e[i].n_held; k++)
				n += buffer_chain_length(nbr.e[i].held[k]);
	ip4_nbr_unlock();
	buffer_tally_add(t, "held for ARP", n);
}

static void __attribute__((constructor)) nbr_holder_register(void)
{
	buffer_holder_register("ip4-neighbor", nbr_holder, NULL);
}

struct ip4_nbr *ip4_nbr_lookup(uint32_t if_index, uint32_t ip)
{
	for (uint32_t i = 0, seen = 0; i < IP4_NBR_MAX && seen < nbr.n_used; i++) {
		struct ip4_nbr *n = &nbr.e[i];
		if (n->state == IP4_NBR_FREE)
			continue;
		seen++;
		if (n->ip == ip && n->if_index == if_index)
			return n;
	}
	return NULL;
}

struct ip4_nbr *ip4_nbr_create(uint32_t if_index, uint32_t ip, uint64_t now_ns)
{
	for (uint32_t i = 0; i < IP4_NBR_MAX; i++) {
		struct ip4_nbr *n = &nbr.e[i];
		if (n->state != IP4_NBR_FREE)
			continue;
		memset(n, 0, sizeof(*n));
		n->if_index = if_index;
		n->ip = ip;
		n->state = IP4_NBR_INCOMPLETE;
		n->created_ns = now_ns;
		nbr.n_used++;
		nbr.n_incomplete++;
		poke();
		return n;
	}
	return NULL;
}

void ip4_nbr_learn(struct ip4_nbr *n, const uint8_t mac[6], uint64_t now_ns)
{
	if (n->flags & IP4_NBR_F_STATIC)
		return;
	if (n->state == IP4_NBR_INCOMPLETE)
		nbr.n_incomplete--;
	if (n->state != IP4_NBR_REACHABLE || memcmp(n->mac, mac, 6) != 0 || n->n_held) {
		memcpy(n->mac, mac, 6);
		n->flags |= IP4_NBR_F_APPLY;
		atomic_store_explicit(&nbr.dirty, true, memory_order_release);
	}
	n->state = IP4_NBR_REACHABLE;
	n->updated_ns = now_ns;
	/* Renewed or new: its next probe is later, or it is a new one whose
	 * first probe the next aging pass plans. */
	__atomic_store_n(&nbr.next_age_ns, 0, __ATOMIC_RELAXED);
	poke();
}

int ip4_nbr_walk(int (*fn)(const struct ip4_nbr *n, void *ctx), void *ctx)
{
	int rc = 0;
	ip4_nbr_lock();
	for (uint32_t i = 0; i < IP4_NBR_MAX && rc == 0; i++)
		if (nbr.e[i].state != IP4_NBR_FREE)
			rc = fn(&nbr.e[i], ctx);
	ip4_nbr_unlock();
	return rc;
}

uint32_t ip4_nbr_count(void)
{
	return nbr.n_used;
}

static void entry_free(struct ip4_nbr *n)
{
	if (n->state == IP4_NBR_INCOMPLETE)
		nbr.n_incomplete--;
	n->state = IP4_NBR_FREE;
	nbr.n_used--;
}

/* Set (mac) or clear (NULL) the rewrite of every adjacency via n. */
struct adj_match {
	uint32_t if_index;
	uint32_t nh_h;
	const uint8_t *rw; /* NULL: unresolve */
};

static int set_rewrites(uint32_t adj_index, const struct ip4_adj *a, void *ctx)
{
	const struct adj_match *m = ctx;
	if (a->kind == IP4_ADJ_REWRITE && a->if_index == m->if_index && a->next_hop == m->nh_h)
		ip4_adj_set_rewrite(ip4_fib_main, adj_index, m->rw, m->rw ? 14 : 0);
	return 0;
}

/* Forget n: the rewrites via it, its host route, its held packets. Lock
 * held. */
static void entry_forget(struct ip4_nbr *n)
{
	if (ip4_fib_main) {
		struct adj_match m = { .if_index = n->if_index, .nh_h = ntohl(n->ip), .rw = NULL };
		ip4_adj_walk(ip4_fib_main, set_rewrites, &m);
		uint32_t r;
		if ((n->flags & IP4_NBR_F_HOST_ROUTE) && ip4_fib_get(ip4_fib_main, m.nh_h, 32, &r) == 0 &&
		    ip4_fib_del(ip4_fib_main, m.nh_h, 32) == 0)
			ip4_adj_release(ip4_fib_main, r);
	}
	buffer_free(n->held, n->n_held);
	n->n_held = 0;
	entry_free(n);
}

void ip4_nbr_flush(uint32_t if_index, uint32_t addr, uint32_t mask)
{
	ip4_nbr_lock();
	for (uint32_t i = 0; i < IP4_NBR_MAX; i++) {
		struct ip4_nbr *n = &nbr.e[i];
		if (n->state == IP4_NBR_FREE)
			continue;
		if (if_index != DEV_INDEX_INVALID && (n->if_index != if_index || ((n->ip ^ addr) & mask)))
			continue;
		entry_forget(n);
	}
	ip4_nbr_unlock();
}

uint32_t ip4_nbr_clear_dynamic(void)
{
	uint32_t n_cleared = 0;
	ip4_nbr_lock();
	for (uint32_t i = 0; i < IP4_NBR_MAX; i++) {
		struct ip4_nbr *n = &nbr.e[i];
		if (n->state == IP4_NBR_FREE || (n->flags & IP4_NBR_F_STATIC))
			continue;
		entry_forget(n);
		n_cleared++;
	}
	ip4_nbr_unlock();
	return n_cleared;
}

int ip4_nbr_set(uint32_t if_index, uint32_t ip, const uint8_t mac[6], bool is_static, char *err, size_t errlen)
{
	uint64_t now = ip4_nbr_now();
	int rc = 0;
	ip4_nbr_lock();
	struct ip4_nbr *n = ip4_nbr_lookup(if_index, ip);
	if (!n)
		n = ip4_nbr_create(if_index, ip, now);
	if (!n) {
		snprintf(err, errlen, "neighbour table full (%u entries)", IP4_NBR_MAX);
		rc = -ENOSPC;
	} else {
		n->flags &= (uint8_t)~IP4_NBR_F_STATIC;
		ip4_nbr_learn(n, mac, now);
		if (is_static)
			n->flags |= IP4_NBR_F_STATIC;
	}
	ip4_nbr_unlock();
	return rc;
}

uint32_t ip4_nbr_request_make(uint32_t if_index, uint32_t ip, const uint8_t *dst_mac)
{
	const struct device *dev = dev_by_index(if_index);
	uint32_t bi;
	if (!dev || buffer_alloc(&bi, 1, -1) != 1)
		return BUFFER_INVALID;
	struct buffer *b = buffer_get(bi);
	uint8_t *p = buffer_data(b);
	memset(p, 0, ARP_FRAME_MIN);
	if (dst_mac)
		memcpy(p, dst_mac, 6);
	else
		memset(p, 0xff, 6);
	memcpy(p + 6, dev->mac, 6);
	p[12] = 0x08;
	p[13] = 0x06;
	struct arp_packet *arp = (struct arp_packet *)(p + ETH_HDR_LEN);
	arp->htype = htons(ARP_HTYPE_ETHERNET);
	arp->ptype = htons(ETH_TYPE_IP4);
	arp->hlen = 6;
	arp->plen = 4;
	arp->op = htons(ARP_OP_REQUEST);
	memcpy(arp->sha, dev->mac, 6);
	uint32_t spa = ip4_if_source_for(if_index, ip);
	memcpy(arp->spa, &spa, 4);
	memcpy(arp->tpa, &ip, 4);
	b->current_length = ARP_FRAME_MIN;
	b->tx_if = if_index;
	b->rx_if = if_index;
	return bi;
}

/* ---- the process node ---- */

/* Apply one learnt MAC: adjacencies via n, and its host route. Lock held. */
static void apply(struct node_runtime *rt, struct ip4_nbr *n)
{
	uint8_t rw[14];
	ip4_eth_rewrite(rw, n->if_index, n->mac);
	struct adj_match m = { .if_index = n->if_index, .nh_h = ntohl(n->ip), .rw = rw };
	ip4_adj_walk(ip4_fib_main, set_rewrites, &m);
	uint32_t r;
	const struct ip4_adj *a = ip4_adj_get(ip4_fib_main, ip4_fib_lookup(ip4_fib_main, m.nh_h));
	if (!(n->flags & IP4_NBR_F_HOST_ROUTE) && a->kind == IP4_ADJ_GLEAN && a->if_index == n->if_index &&
	    ip4_fib_get(ip4_fib_main, m.nh_h, 32, &r) != 0) {
		int adj = ip4_adj_add(ip4_fib_main, IP4_ADJ_REWRITE, n->if_index, m.nh_h);
		if (adj >= 0) {
			ip4_adj_set_rewrite(ip4_fib_main, (uint32_t)adj, rw, sizeof(rw));
			if (ip4_fib_add(ip4_fib_main, m.nh_h, 32, (uint32_t)adj) == 0)
				n->flags |= IP4_NBR_F_HOST_ROUTE;
			else
				ip4_adj_release(ip4_fib_main, (uint32_t)adj);
		}
		if (!(n->flags & IP4_NBR_F_HOST_ROUTE))
			node_count_error(rt, IP4_NEIGHBOR_ERROR_HOST_ROUTE, 1);
	}
	n->flags &= (uint8_t)~IP4_NBR_F_APPLY;
	node_count_error(rt, IP4_NEIGHBOR_ERROR_APPLIED, 1);
}

/* Age one dynamic reachable entry: forget it at its deadline, else probe
 * it in its last IP4_NBR_PROBES request intervals, at most once per
 * interval. Lock held. Returns a probe's buffer index or BUFFER_INVALID,
 * and lowers *next to the entry's next event. */
static uint32_t age(struct node_runtime *rt, struct ip4_nbr *n, uint64_t now, uint64_t *next)
{
	uint64_t reach = ip4_nbr_reachable_timeout_ns, interval = ip4_nbr_request_interval_ns;
	uint64_t window = IP4_NBR_PROBES * interval;
	uint64_t deadline = n->updated_ns + reach;
	uint64_t probe_at = n->updated_ns + (reach > window ? reach - window : 0);
	uint32_t bi = BUFFER_INVALID;
	if (now >= deadline) {
		entry_forget(n);
		node_count_error(rt, IP4_NEIGHBOR_ERROR_AGED, 1);
		return BUFFER_INVALID;
	}
	if (n->request_ns > n->updated_ns && n->request_ns + interval > probe_at)
		probe_at = n->request_ns + interval; /* probed already in this window */
	if (now >= probe_at) {
		bi = ip4_nbr_request_make(n->if_index, n->ip, n->mac);
		if (bi == BUFFER_INVALID) {
			node_count_error(rt, IP4_NEIGHBOR_ERROR_NO_BUFFER, 1);
		} else {
			n->request_ns = now;
			node_count_error(rt, IP4_NEIGHBOR_ERROR_PROBE, 1);
		}
		probe_at = now + interval;
	}
	*next = MIN(*next, MIN(probe_at, deadline));
	return bi;
}

static uint32_t ip4_neighbor_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	uint32_t released[IP4_NBR_MAX * IP4_NBR_HOLD / 8];
	uint32_t expired[IP4_NBR_MAX * IP4_NBR_HOLD / 8];
	uint32_t probes[FRAME_SIZE];
	uint32_t n_released = 0, n_expired = 0, n_probes = 0;
	bool dirty = atomic_load_explicit(&nbr.dirty, memory_order_acquire);

	if (!ip4_fib_main || !nbr.n_used) {
		node_suspend(rt, IDLE_SCAN_NS);
		return 0;
	}
	uint64_t now = ip4_nbr_now();
	/* An aging pass when the earliest planned probe or deadline is due,
	 * or when an entry was renewed or the tunables changed since. */
	bool aging = ip4_nbr_reachable_timeout_ns &&
		     (now >= __atomic_load_n(&nbr.next_age_ns, __ATOMIC_RELAXED) ||
		      nbr.age_reach_ns != ip4_nbr_reachable_timeout_ns ||
		      nbr.age_interval_ns != ip4_nbr_request_interval_ns);
	if (!dirty && !nbr.n_incomplete && !aging) {
		/* Until the next aging pass is due, in the engine's time: only
		 * when the neighbour clock is the engine's (a test's simulated
		 * clock jumps, and is looked at every scan). */
		uint64_t at = __atomic_load_n(&nbr.next_age_ns, __ATOMIC_RELAXED);
		bool same_clock = !ip4_nbr_clock;
		node_suspend(rt, same_clock && at > now ? MIN(at - now, IDLE_SCAN_NS) : SCAN_INTERVAL_NS);
		return 0;
	}
	node_suspend(rt, SCAN_INTERVAL_NS);
	uint64_t next_age = UINT64_MAX;
	ip4_nbr_lock();
	atomic_store_explicit(&nbr.dirty, false, memory_order_relaxed);
	for (uint32_t i = 0; i < IP4_NBR_MAX; i++) {
		struct ip4_nbr *n = &nbr.e[i];
		if (n->state == IP4_NBR_REACHABLE && (n->flags & IP4_NBR_F_APPLY)) {
			/* Leave the rest for the next run when the arrays fill. */
			if (n_released + n->n_held > ARRAY_LEN(released)) {
				atomic_store_explicit(&nbr.dirty, true, memory_order_relaxed);
				next_age = now; /* not aged in this pass either */
				continue;
			}
			apply(rt, n);
			memcpy(released + n_released, n->held, n->n_held * sizeof(uint32_t));
			n_released += n->n_held;
			n->n_held = 0;
		} else if (n->state == IP4_NBR_INCOMPLETE && now - n->created_ns >= ip4_nbr_resolve_timeout_ns &&
			   n_expired + n->n_held <= ARRAY_LEN(expired)) {
			memcpy(expired + n_expired, n->held, n->n_held * sizeof(uint32_t));
			n_expired += n->n_held;
			n->n_held = 0;
			entry_free(n);
			continue;
		}
		if (aging && n->state == IP4_NBR_REACHABLE && !(n->flags & IP4_NBR_F_STATIC)) {
			if (n_probes == ARRAY_LEN(probes)) {
				next_age = now; /* the rest in the next run */
				continue;
			}
			uint32_t p = age(rt, n, now, &next_age);
			if (p != BUFFER_INVALID)
				probes[n_probes++] = p;
		}
	}
	if (aging) {
		__atomic_store_n(&nbr.next_age_ns, next_age, __ATOMIC_RELAXED);
		nbr.age_reach_ns = ip4_nbr_reachable_timeout_ns;
		nbr.age_interval_ns = ip4_nbr_request_interval_ns;
	}
	ip4_nbr_unlock();

	for (uint32_t i = 0; i < n_expired; i++)
		buffer_get(expired[i])->error = node_error(rt, IP4_NEIGHBOR_ERROR_TIMEOUT);
	node_enqueue(rt, IP4_NEIGHBOR_NEXT_DROP, expired, n_expired);
	node_enqueue(rt, IP4_NEIGHBOR_NEXT_LOOKUP, released, n_released);
	node_enqueue(rt, IP4_NEIGHBOR_NEXT_OUTPUT, probes, n_probes);
	return n_released + n_expired + n_probes;
}

static const struct node_reg ip4_neighbor_node = {
	.name = "ip4-neighbor",
	.type = NODE_TYPE_PROCESS,
	.fn = ip4_neighbor_fn,
	.n_next = IP4_NEIGHBOR_N_NEXT,
	.next_nodes = {
		[IP4_NEIGHBOR_NEXT_DROP] = "error-drop",
		[IP4_NEIGHBOR_NEXT_LOOKUP] = "ip4-lookup",
		[IP4_NEIGHBOR_NEXT_OUTPUT] = "interface-output",
	},
	.n_errors = IP4_NEIGHBOR_N_ERROR,
	.error_strings = ip4_neighbor_error_strings,
};
NODE_REGISTER(ip4_neighbor_node)
