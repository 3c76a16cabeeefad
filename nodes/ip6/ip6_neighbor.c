/* The IPv6 neighbour table (see ip6_neighbor.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "drivers/device.h"
#include "nodes/ethernet.h"
#include "nodes/ip6/ip6_interface.h"
#include "graph/node.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_route.h"

uint64_t (*ip6_nbr_clock)(void);
atomic_bool ip6_nbr_dirty;
atomic_bool ip6_nbr_arm_dirty;
struct ip6_nd_timing ip6_nd_timing = {
	.reachable_ns = IP6_ND_REACHABLE_TIME_NS,
	.retrans_ns = IP6_ND_RETRANS_TIMER_NS,
	.delay_ns = IP6_ND_DELAY_FIRST_PROBE_NS,
};

static struct {
	atomic_flag lock;
	uint32_t n_used;
	uint64_t rng; /* xorshift64 for ReachableTime's randomization, under the lock */
	struct ip6_nbr e[IP6_NBR_MAX];
} nbr = { .lock = ATOMIC_FLAG_INIT, .rng = 0x9e3779b97f4a7c15ull };

/* Holder "ip6-neighbor": packets waiting for their next hop's MAC. */
static void nbr_holder(void *ctx, struct buffer_tally *t)
{
	(void)ctx;
	uint64_t k = 0;
	ip6_nbr_lock();
	for (uint32_t i = 0; i < IP6_NBR_MAX; i++)
		if (nbr.e[i].state != IP6_NBR_FREE)
			for (uint32_t j = 0; j < nbr.e[i].n_held; j++)
				k += buffer_chain_length(nbr.e[i].held[j]);
	ip6_nbr_unlock();
	buffer_tally_add(t, "held for ND", k);
}

static void __attribute__((constructor)) nbr_holder_register(void)
{
	buffer_holder_register("ip6-neighbor", nbr_holder, NULL);
}

void ip6_nbr_lock(void)
{
	while (atomic_flag_test_and_set_explicit(&nbr.lock, memory_order_acquire))
		cpu_relax();
}

void ip6_nbr_unlock(void)
{
	atomic_flag_clear_explicit(&nbr.lock, memory_order_release);
}

struct ip6_nbr *ip6_nbr_lookup(uint32_t if_index, const ip6_addr_a2 *ip)
{
	for (uint32_t i = 0, seen = 0; i < IP6_NBR_MAX && seen < nbr.n_used; i++) {
		struct ip6_nbr *n = &nbr.e[i];
		if (n->state == IP6_NBR_FREE)
			continue;
		seen++;
		if (n->if_index == if_index && ip6_addr_eq(&n->ip, ip))
			return n;
	}
	return NULL;
}

/* A free slot, else an INCOMPLETE entry given up on (counted free). */
static struct ip6_nbr *free_slot(uint64_t now_ns)
{
	struct ip6_nbr *stale = NULL;
	for (uint32_t i = 0; i < IP6_NBR_MAX; i++) {
		struct ip6_nbr *n = &nbr.e[i];
		if (n->state == IP6_NBR_FREE)
			return n;
		if (!stale && n->state == IP6_NBR_INCOMPLETE && now_ns - n->created_ns >= IP6_NBR_INCOMPLETE_MAX_NS)
			stale = n;
	}
	if (stale) {
		buffer_free(stale->held, stale->n_held);
		stale->n_held = 0;
		stale->state = IP6_NBR_FREE;
		stale->gen++;
		nbr.n_used--;
	}
	return stale;
}

struct ip6_nbr *ip6_nbr_create(uint32_t if_index, const ip6_addr_a2 *ip, uint64_t now_ns)
{
	struct ip6_nbr *n = free_slot(now_ns);
	if (!n)
		return NULL;
	uint32_t gen = n->gen;
	memset(n, 0, sizeof(*n));
	n->gen = gen;
	n->if_index = if_index;
	n->ip = *ip;
	n->state = IP6_NBR_INCOMPLETE;
	n->updated_ns = n->created_ns = now_ns;
	nbr.n_used++;
	return n;
}

atomic_bool ip6_nbr_release_dirty;

/* A MAC to give the adjacencies via n (ip6_route.h applies it). */
void ip6_nbr_mark_apply(struct ip6_nbr *n)
{
	n->flags |= IP6_NBR_F_APPLY;
	atomic_store_explicit(&ip6_nbr_release_dirty, true, memory_order_release);
	atomic_store_explicit(&ip6_nbr_dirty, true, memory_order_release);
	struct graph_thread *t = graph_thread_self();
	if (t)
		graph_poke_processes(t); /* ip6-neighbor applies it at once */
}

#define mark_apply ip6_nbr_mark_apply

uint32_t ip6_nbr_take_pending(void (*fn)(struct ip6_nbr *n))
{
	uint32_t k = 0;
	atomic_store_explicit(&ip6_nbr_dirty, false, memory_order_relaxed);
	for (uint32_t i = 0; i < IP6_NBR_MAX; i++) {
		struct ip6_nbr *n = &nbr.e[i];
		if (n->state == IP6_NBR_FREE || n->state == IP6_NBR_INCOMPLETE || !(n->flags & IP6_NBR_F_APPLY))
			continue;
		if (n->state == IP6_NBR_STALE)
			ip6_route_nbr_unresolve(n);
		else
			fn(n);
		n->flags &= (uint8_t)~IP6_NBR_F_APPLY;
		k++;
	}
	return k;
}

/* A uniform draw in [0.5, 1.5] x base (RFC 4861 §6.3.2's
 * MIN_RANDOM_FACTOR, MAX_RANDOM_FACTOR). Lock held. */
static uint64_t reachable_time(void)
{
	uint64_t x = nbr.rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	nbr.rng = x;
	uint64_t base = ip6_nd_timing.reachable_ns;
	return base / 2 + (uint64_t)((double)(x >> 11) / 9007199254740992.0 * (double)base);
}

void ip6_nbr_timer_want(struct ip6_nbr *n, uint64_t in_ns)
{
	n->timer_in_ns = in_ns;
	n->flags |= IP6_NBR_F_ARM;
	atomic_store_explicit(&ip6_nbr_arm_dirty, true, memory_order_release);
	struct graph_thread *t = graph_thread_self();
	if (t)
		graph_poke_processes(t); /* ip6-nd-timer arms it at once (control: the barrier's release does) */
}

void ip6_nbr_set_state(struct ip6_nbr *n, enum ip6_nbr_state state, uint64_t now_ns)
{
	n->state = (uint8_t)state;
	n->n_probes = 0;
	n->updated_ns = now_ns;
	if (n->flags & IP6_NBR_F_STATIC)
		return;
	switch (state) {
	case IP6_NBR_REACHABLE:
		ip6_nbr_timer_want(n, reachable_time());
		break;
	case IP6_NBR_DELAY:
		ip6_nbr_timer_want(n, ip6_nd_timing.delay_ns);
		break;
	case IP6_NBR_STALE:
		if (n->timer || (n->flags & IP6_NBR_F_ARM))
			ip6_nbr_timer_want(n, 0); /* STALE has no timer (§7.3.3) */
		break;
	default:
		break;
	}
}

/* RFC 4861 §7.2.5 for an NA (the table there), and §7.2.3 for an NS's
 * source option (solicited false, override true). Every change is given
 * to the adjacencies (a STALE entry loses its rewrites there). */
void ip6_nbr_update(struct ip6_nbr *n, const uint8_t *mac, bool solicited, bool override, bool is_router,
		    uint64_t now_ns)
{
	if (n->flags & IP6_NBR_F_STATIC)
		return;
	bool changed = mac && memcmp(n->mac, mac, 6) != 0;
	if (n->state == IP6_NBR_INCOMPLETE) {
		if (!mac)
			return; /* nothing to learn from */
		memcpy(n->mac, mac, 6);
		ip6_nbr_set_state(n, solicited ? IP6_NBR_REACHABLE : IP6_NBR_STALE, now_ns);
	} else if (changed && !override) {
		/* A different MAC without Override: keep ours; a REACHABLE
		 * entry becomes STALE (§7.2.5). */
		if (n->state == IP6_NBR_REACHABLE) {
			ip6_nbr_set_state(n, IP6_NBR_STALE, now_ns);
			mark_apply(n);
		}
		return;
	} else {
		if (changed)
			memcpy(n->mac, mac, 6);
		if (solicited)
			ip6_nbr_set_state(n, IP6_NBR_REACHABLE, now_ns);
		else if (changed)
			ip6_nbr_set_state(n, IP6_NBR_STALE, now_ns);
		else if (n->state == IP6_NBR_STALE)
			return; /* nothing new: keep it as it is (no rewrite to clear again) */
	}
	n->is_router = is_router;
	mark_apply(n);
}

void ip6_nbr_hold(struct ip6_nbr *n, uint32_t bi, uint32_t *dropped)
{
	*dropped = BUFFER_INVALID;
	if (n->n_held == IP6_NBR_HOLD) {
		/* §7.2.2: the new arrival replaces the oldest. */
		*dropped = n->held[0];
		memmove(n->held, n->held + 1, (IP6_NBR_HOLD - 1) * sizeof(n->held[0]));
		n->n_held--;
	}
	n->held[n->n_held++] = bi;
}

static void entry_free(struct ip6_nbr *n)
{
	n->state = IP6_NBR_FREE;
	n->flags = 0;
	n->gen++;
	nbr.n_used--;
}

uint32_t ip6_nbr_forget(struct ip6_nbr *n, uint32_t *out)
{
	uint32_t k = n->n_held;
	ip6_route_nbr_forget(n);
	memcpy(out, n->held, k * sizeof(n->held[0]));
	n->n_held = 0;
	entry_free(n);
	return k;
}

uint64_t ip6_nbr_cookie(const struct ip6_nbr *n)
{
	return (uint64_t)n->gen << 32 | (uint64_t)(n - nbr.e);
}

struct ip6_nbr *ip6_nbr_from_cookie(uint64_t cookie)
{
	uint32_t i = (uint32_t)cookie;
	if (i >= IP6_NBR_MAX)
		return NULL;
	struct ip6_nbr *n = &nbr.e[i];
	return n->state != IP6_NBR_FREE && n->gen == (uint32_t)(cookie >> 32) ? n : NULL;
}

struct ip6_nbr *ip6_nbr_at(uint32_t index)
{
	if (index >= IP6_NBR_MAX)
		return NULL;
	struct ip6_nbr *n = &nbr.e[index];
	return n->state != IP6_NBR_FREE ? n : NULL;
}

void ip6_nbr_each_locked(void (*fn)(struct ip6_nbr *n, void *ctx), void *ctx)
{
	for (uint32_t i = 0, seen = 0, used = nbr.n_used; i < IP6_NBR_MAX && seen < used; i++) {
		if (nbr.e[i].state == IP6_NBR_FREE)
			continue;
		seen++;
		fn(&nbr.e[i], ctx);
	}
}

uint32_t ip6_nbr_ns_make(uint32_t if_index, const ip6_addr_a2 *target, const uint8_t *dst_mac)
{
	const struct device *dev = dev_by_index(if_index);
	struct in6_addr t = *target, src, dst;
	uint32_t bi;
	if (!dev || !ip6_if_source_for(if_index, &t, &src) || buffer_alloc(&bi, 1, -1) != 1)
		return BUFFER_INVALID;
	struct buffer *b = buffer_get(bi);
	uint8_t mac[6];
	if (dst_mac) {
		dst = t;
		memcpy(mac, dst_mac, 6);
	} else {
		ip6_solicited_node(&dst, &t);
		ip6_mcast_mac(mac, &dst);
	}
	ip6_nd_msg_make(b, ICMP6_ND_NS, 0, &src, &dst, &t, ND_OPT_SOURCE_LLADDR, dev->mac);
	ip6_opaque(b)->flags |= IP6_OPAQUE_F_LOCAL_ORIGIN;
	buffer_advance(b, -ETH_HDR_LEN);
	ip6_eth_rewrite(buffer_data(b), if_index, mac);
	b->tx_if = if_index;
	b->rx_if = if_index;
	return bi;
}

int ip6_nbr_walk(int (*fn)(const struct ip6_nbr *n, void *ctx), void *ctx)
{
	int rc = 0;
	ip6_nbr_lock();
	for (uint32_t i = 0; i < IP6_NBR_MAX && rc == 0; i++)
		if (nbr.e[i].state != IP6_NBR_FREE)
			rc = fn(&nbr.e[i], ctx);
	ip6_nbr_unlock();
	return rc;
}

void ip6_nbr_flush(uint32_t if_index, const ip6_addr_a2 *prefix, uint8_t plen)
{
	ip6_nbr_lock();
	for (uint32_t i = 0; i < IP6_NBR_MAX; i++) {
		struct ip6_nbr *n = &nbr.e[i];
		if (n->state == IP6_NBR_FREE)
			continue;
		if (if_index != DEV_INDEX_INVALID &&
		    (n->if_index != if_index || (plen && !ip6_prefix_match(&n->ip, prefix, plen))))
			continue;
		uint32_t held[IP6_NBR_HOLD];
		uint32_t k = ip6_nbr_forget(n, held);
		buffer_free(held, k);
	}
	ip6_nbr_unlock();
}

int ip6_nbr_set(uint32_t if_index, const ip6_addr_a2 *ip, const uint8_t mac[6], bool is_static, char *err,
		size_t errlen)
{
	uint64_t now = ip6_nbr_now();
	int rc = 0;
	ip6_nbr_lock();
	struct ip6_nbr *n = ip6_nbr_lookup(if_index, ip);
	if (!n)
		n = ip6_nbr_create(if_index, ip, now);
	if (!n) {
		snprintf(err, errlen, "neighbour table full (%u entries)", IP6_NBR_MAX);
		rc = -ENOSPC;
	} else {
		memcpy(n->mac, mac, 6);
		n->flags = (uint8_t)((is_static ? IP6_NBR_F_STATIC : 0) | (n->flags & IP6_NBR_F_HOST_ROUTE));
		if (is_static && n->timer)
			ip6_nbr_timer_want(n, 0);
		ip6_nbr_set_state(n, IP6_NBR_REACHABLE, now);
		mark_apply(n);
	}
	ip6_nbr_unlock();
	if (!rc)
		ip6_route_nbr_apply_all(); /* control path: at once */
	return rc;
}

void ip6_nd_msg_make(struct buffer *b, uint8_t type, uint32_t flags, const ip6_addr_a2 *src,
		     const ip6_addr_a2 *dst, const ip6_addr_a2 *target, uint8_t opt, const uint8_t mac[6])
{
	if (b->flags & BUFFER_F_NEXT_PRESENT) {
		buffer_free(&b->next_buffer, 1);
		b->flags &= ~BUFFER_F_NEXT_PRESENT;
		b->total_length_not_including_first = 0;
	}
	struct ip6_header *h = (struct ip6_header *)buffer_data(b);
	*h = (struct ip6_header){
		.ver_tc_flow = htonl(6u << 28),
		.payload_length = htons(ND_MSG_LEN + 8),
		.next_header = IP6_NH_ICMP6,
		.hop_limit = ND_HOP_LIMIT,
		.src = *src,
		.dst = *dst,
	};
	uint8_t *p = (uint8_t *)(h + 1);
	memset(p, 0, ND_MSG_LEN + 8);
	p[0] = type;
	p[4] = (uint8_t)(flags >> 24);
	memcpy(p + 8, target, 16);
	p[24] = opt;
	p[25] = 1; /* in units of 8 bytes */
	memcpy(p + 26, mac, 6);
	uint16_t csum = ip6_l4_csum(h, p, ND_MSG_LEN + 8, IP6_NH_ICMP6);
	memcpy(p + 2, &csum, 2);
	b->current_length = IP6_HDR_LEN + ND_MSG_LEN + 8;
	b->flags &= ~BUFFER_F_L2_GROUP;
}

uint32_t ip6_nbr_count(void)
{
	return nbr.n_used;
}

const char *ip6_nbr_state_name(const struct ip6_nbr *n)
{
	if (n->flags & IP6_NBR_F_STATIC)
		return "static";
	switch (n->state) {
	case IP6_NBR_INCOMPLETE:
		return "incomplete";
	case IP6_NBR_REACHABLE:
		return "reachable";
	case IP6_NBR_STALE:
		return "stale";
	case IP6_NBR_DELAY:
		return "delay";
	case IP6_NBR_PROBE:
		return "probe";
	default:
		return "?";
	}
}
