/* The IPv6 neighbour table (see ip6_neighbor.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_route.h"

uint64_t (*ip6_nbr_clock)(void);
atomic_bool ip6_nbr_dirty;

static struct {
	atomic_flag lock;
	uint32_t n_used;
	struct ip6_nbr e[IP6_NBR_MAX];
} nbr = { .lock = ATOMIC_FLAG_INIT };

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
		stale->state = IP6_NBR_FREE;
		nbr.n_used--;
	}
	return stale;
}

struct ip6_nbr *ip6_nbr_create(uint32_t if_index, const ip6_addr_a2 *ip, uint64_t now_ns)
{
	struct ip6_nbr *n = free_slot(now_ns);
	if (!n)
		return NULL;
	memset(n, 0, sizeof(*n));
	n->if_index = if_index;
	n->ip = *ip;
	n->state = IP6_NBR_INCOMPLETE;
	n->updated_ns = n->created_ns = now_ns;
	nbr.n_used++;
	return n;
}

/* A MAC to give the adjacencies via n (ip6_route.h applies it). */
static void mark_apply(struct ip6_nbr *n)
{
	n->flags |= IP6_NBR_F_APPLY;
	atomic_store_explicit(&ip6_nbr_dirty, true, memory_order_release);
	struct graph_thread *t = graph_thread_self();
	if (t)
		graph_poke_processes(t); /* ip6-neighbor applies it at once */
}

uint32_t ip6_nbr_take_pending(void (*fn)(struct ip6_nbr *n))
{
	uint32_t k = 0;
	atomic_store_explicit(&ip6_nbr_dirty, false, memory_order_relaxed);
	for (uint32_t i = 0; i < IP6_NBR_MAX; i++) {
		struct ip6_nbr *n = &nbr.e[i];
		if (n->state == IP6_NBR_FREE || n->state == IP6_NBR_INCOMPLETE || !(n->flags & IP6_NBR_F_APPLY))
			continue;
		fn(n);
		n->flags &= (uint8_t)~IP6_NBR_F_APPLY;
		k++;
	}
	return k;
}

/* RFC 4861 §7.2.5 for an NA (the table there), and §7.2.3 for an NS's
 * source option (solicited false, override true). */
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
		n->state = solicited ? IP6_NBR_REACHABLE : IP6_NBR_STALE;
	} else if (changed && !override) {
		/* A different MAC without Override: keep ours; a REACHABLE
		 * entry becomes STALE (§7.2.5). */
		if (n->state == IP6_NBR_REACHABLE)
			n->state = IP6_NBR_STALE;
		return;
	} else {
		if (changed)
			memcpy(n->mac, mac, 6);
		if (solicited)
			n->state = IP6_NBR_REACHABLE;
		else if (changed)
			n->state = IP6_NBR_STALE;
	}
	n->is_router = is_router;
	n->updated_ns = now_ns;
	mark_apply(n);
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
		ip6_route_nbr_forget(n);
		n->state = IP6_NBR_FREE;
		nbr.n_used--;
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
		n->state = IP6_NBR_REACHABLE;
		n->flags = (uint8_t)((is_static ? IP6_NBR_F_STATIC : 0) | (n->flags & IP6_NBR_F_HOST_ROUTE));
		n->updated_ns = now;
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
	default:
		return "?";
	}
}
