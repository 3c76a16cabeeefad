/* Duplicate Address Detection for sluice's own addresses (ip6_dad.h,
 * RFC 4862 §5.4). The probe: a Neighbor Solicitation from the unspecified
 * address (so that no node learns a mapping for an address that may be
 * someone else's) to the target's solicited-node group, hop limit 255, no
 * source link-layer option (§5.4.2, RFC 4861 §7.1.1 forbids it from ::).
 *
 * Slots are written by thread 0 only; ip6-nd reads addr after an acquire
 * load of state and only ever stores IP6_DAD_DUPLICATE.
 */
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "graph/buffer.h"
#include "nodes/ip6/ip6_dad.h"

struct ip6_dad_if ip6_dad_ifs[DEV_MAX];
uint32_t ip6_dad_transmits = 1;

static uint8_t state_of(const struct ip6_dad_addr *s)
{
	return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
}

static struct ip6_dad_addr *find(uint32_t if_index, const ip6_addr_a2 *addr)
{
	if (if_index >= DEV_MAX)
		return NULL;
	struct ip6_dad_if *d = &ip6_dad_ifs[if_index];
	for (uint32_t i = 0; i < ARRAY_LEN(d->a); i++)
		if (state_of(&d->a[i]) != IP6_DAD_FREE && ip6_addr_eq(&d->a[i].addr, addr))
			return &d->a[i];
	return NULL;
}

void ip6_dad_conflict(uint32_t if_index, const ip6_addr_a2 *target)
{
	struct ip6_dad_addr *s = find(if_index, target);
	if (s)
		__atomic_store_n(&s->state, IP6_DAD_DUPLICATE, __ATOMIC_RELEASE);
}

enum ip6_dad_state ip6_dad_state(uint32_t if_index, const ip6_addr_a2 *addr)
{
	const struct ip6_dad_addr *s = find(if_index, addr);
	return s ? (enum ip6_dad_state)state_of(s) : IP6_DAD_FREE;
}

const char *ip6_dad_state_name(enum ip6_dad_state s)
{
	return s == IP6_DAD_TENTATIVE ? "tentative"
	       : s == IP6_DAD_PREFERRED ? "preferred"
	       : s == IP6_DAD_DUPLICATE ? "duplicate"
	       : s == IP6_DAD_NEW       ? "tentative"
					: "-";
}

/* Slots follow the interface's addresses: new ones start NEW, gone ones
 * are freed. */
static void track(uint32_t if_index, const struct ip6_interface *ifc)
{
	struct ip6_dad_if *d = &ip6_dad_ifs[if_index];
	for (uint32_t i = 0; i < ARRAY_LEN(d->a); i++) {
		struct ip6_dad_addr *s = &d->a[i];
		if (state_of(s) != IP6_DAD_FREE && (!ifc || !ip6_if_is_local(if_index, &s->addr)))
			__atomic_store_n(&s->state, IP6_DAD_FREE, __ATOMIC_RELEASE);
	}
	if (!ifc)
		return;
	for (uint32_t k = 0; k <= ifc->n_addrs; k++) {
		const ip6_addr_a2 *a = k ? &ifc->addrs[k - 1].addr : &ifc->link_local;
		if (find(if_index, a))
			continue;
		for (uint32_t i = 0; i < ARRAY_LEN(d->a); i++)
			if (state_of(&d->a[i]) == IP6_DAD_FREE) {
				d->a[i].addr = *a;
				__atomic_store_n(&d->a[i].state, IP6_DAD_NEW, __ATOMIC_RELEASE);
				break;
			}
	}
}

static uint32_t probe(const struct device *dev, const ip6_addr_a2 *target)
{
	uint32_t bi;
	if (buffer_alloc(&bi, 1, -1) != 1)
		return BUFFER_INVALID;
	struct buffer *b = buffer_get(bi);
	uint8_t *p = buffer_data(b);
	struct in6_addr sn;
	ip6_solicited_node(&sn, target);
	ip6_mcast_mac(p, &sn);
	memcpy(p + 6, dev->mac, 6);
	p[12] = 0x86;
	p[13] = 0xdd;
	struct ip6_header *h = (struct ip6_header *)(p + 14);
	*h = (struct ip6_header){
		.ver_tc_flow = htonl(6u << 28),
		.payload_length = htons(ND_MSG_LEN),
		.next_header = IP6_NH_ICMP6,
		.hop_limit = ND_HOP_LIMIT,
		.dst = sn,
	};
	uint8_t *m = (uint8_t *)(h + 1);
	memset(m, 0, ND_MSG_LEN);
	m[0] = ICMP6_ND_NS;
	memcpy(m + 8, target, 16);
	uint16_t csum = ip6_l4_csum(h, m, ND_MSG_LEN, IP6_NH_ICMP6);
	memcpy(m + 2, &csum, 2);
	b->current_length = 14 + IP6_HDR_LEN + ND_MSG_LEN;
	b->tx_if = b->rx_if = dev->index;
	return bi;
}

uint32_t ip6_dad_run(uint64_t now, uint32_t *out, uint32_t room)
{
	uint32_t n = 0;
	if (!ip6_dad_transmits)
		return 0;
	for (uint32_t i = 0; i < DEV_MAX; i++) {
		const struct device *dev = dev_by_index(i);
		track(i, dev ? ip6_if(i) : NULL);
		if (!dev)
			continue;
		for (uint32_t k = 0; k < ARRAY_LEN(ip6_dad_ifs[i].a); k++) {
			struct ip6_dad_addr *s = &ip6_dad_ifs[i].a[k];
			uint8_t st = state_of(s);
			if (st == IP6_DAD_TENTATIVE && now - s->sent_ns >= IP6_DAD_RETRANS_NS)
				__atomic_compare_exchange_n(&s->state, &st, IP6_DAD_PREFERRED, false, __ATOMIC_ACQ_REL,
							    __ATOMIC_ACQUIRE);
			if (st != IP6_DAD_NEW || !dev->admin_up || n == room)
				continue;
			out[n] = probe(dev, &s->addr);
			if (out[n] == BUFFER_INVALID)
				continue;
			n++;
			s->sent_ns = now;
			__atomic_compare_exchange_n(&s->state, &st, IP6_DAD_TENTATIVE, false, __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE);
		}
	}
	return n;
}
