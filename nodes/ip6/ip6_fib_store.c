/* The IPv6 FIB's route store: one open-addressing hash per prefix length
 * (129 of them), the routes as added. It answers the exact-match get, the
 * walk and the covering-route search of a delete; the trie (ip6_fib.c) holds
 * only what lookups need. Linear probing at load <= 1/2, backward-shift
 * deletion (no tombstones), shrinking below 1/8 so memory comes back. */
#include "nodes/ip6/ip6_fib_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#define RULE_TABLE_MIN 16u

/* A 64-bit finaliser (MurmurHash3's fmix64) over the key's two halves. */
static inline uint32_t rule_hash(struct ip6_key k)
{
	uint64_t h = k.hi ^ (k.lo * 0x9e3779b97f4a7c15ull);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

static inline bool key_eq(struct ip6_key a, struct ip6_key b)
{
	return a.hi == b.hi && a.lo == b.lo;
}

struct ip6_rule_slot *ip6_rule_find(const struct ip6_rule_table *rt, struct ip6_key key)
{
	if (!rt->slots)
		return NULL;
	for (uint32_t i = rule_hash(key) & rt->mask;; i = (i + 1) & rt->mask) {
		struct ip6_rule_slot *s = &rt->slots[i];
		if (s->val == IP6_FIB_SLOT_EMPTY)
			return NULL;
		if (key_eq(s->key, key))
			return s;
	}
}

static void rule_place(struct ip6_rule_table *rt, struct ip6_key key, uint32_t val)
{
	uint32_t i = rule_hash(key) & rt->mask;
	while (rt->slots[i].val != IP6_FIB_SLOT_EMPTY)
		i = (i + 1) & rt->mask;
	rt->slots[i] = (struct ip6_rule_slot){ key, val };
}

static int rule_resize(struct ip6_rule_table *rt, uint32_t cap)
{
	struct ip6_rule_slot *old = rt->slots;
	uint32_t old_cap = old ? rt->mask + 1 : 0;
	struct ip6_rule_slot *s = malloc((size_t)cap * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < cap; i++)
		s[i].val = IP6_FIB_SLOT_EMPTY;
	rt->slots = s;
	rt->mask = cap - 1;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].val != IP6_FIB_SLOT_EMPTY)
			rule_place(rt, old[i].key, old[i].val);
	free(old);
	return 0;
}

int ip6_rule_insert(struct ip6_rule_table *rt, struct ip6_key key, uint32_t val)
{
	uint32_t cap = rt->slots ? rt->mask + 1 : 0;
	if ((uint64_t)(rt->n + 1) * 2 > cap) {
		int rc = rule_resize(rt, cap ? cap * 2 : RULE_TABLE_MIN);
		if (rc)
			return rc;
	}
	rule_place(rt, key, val);
	rt->n++;
	return 0;
}

void ip6_rule_remove(struct ip6_rule_table *rt, struct ip6_rule_slot *s)
{
	uint32_t i = (uint32_t)(s - rt->slots);
	for (uint32_t j = (i + 1) & rt->mask;; j = (j + 1) & rt->mask) {
		if (rt->slots[j].val == IP6_FIB_SLOT_EMPTY)
			break;
		uint32_t home = rule_hash(rt->slots[j].key) & rt->mask;
		/* Slot j may stay when its home lies cyclically in (i, j]. */
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			rt->slots[i] = rt->slots[j];
			i = j;
		}
	}
	rt->slots[i].val = IP6_FIB_SLOT_EMPTY;
	rt->n--;
	uint32_t cap = rt->mask + 1;
	if (rt->n == 0) {
		free(rt->slots);
		rt->slots = NULL;
		rt->mask = 0;
	} else if (cap > RULE_TABLE_MIN && (uint64_t)rt->n * 8 < cap) {
		rule_resize(rt, cap / 2); /* on failure the table simply stays big */
	}
}

void ip6_rules_free(struct ip6_fib *fib)
{
	for (int l = 0; l <= 128; l++) {
		free(fib->rules[l].slots);
		fib->rules[l] = (struct ip6_rule_table){ 0 };
	}
	memset(fib->len_used, 0, sizeof(fib->len_used));
	fib->n_routes = 0;
}

int ip6_fib_get(const struct ip6_fib *fib, const ip6_addr_a2 *prefix, uint8_t len,
		uint32_t *result)
{
	if (len > 128)
		return -EINVAL;
	const struct ip6_rule_slot *s =
		ip6_rule_find(&fib->rules[len], ip6_key_mask(ip6_key_of(prefix), len));
	if (!s)
		return -ENOENT;
	if (result)
		*result = s->val;
	return 0;
}

static int route_cmp(const void *a, const void *b)
{
	const struct ip6_route *x = a, *y = b;
	int c = memcmp(&x->prefix, &y->prefix, sizeof(x->prefix));
	return c ? c : (int)x->len - (int)y->len;
}

int ip6_fib_walk(const struct ip6_fib *fib, int (*fn)(const struct ip6_route *r, void *ctx),
		 void *ctx)
{
	if (!fib->n_routes)
		return 0;
	struct ip6_route *v = malloc((size_t)fib->n_routes * sizeof(*v));
	if (!v)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t l = 0; l <= 128; l++) {
		const struct ip6_rule_table *rt = &fib->rules[l];
		for (uint32_t i = 0; rt->slots && i <= rt->mask; i++)
			if (rt->slots[i].val != IP6_FIB_SLOT_EMPTY)
				v[n++] = (struct ip6_route){ ip6_addr_of(rt->slots[i].key), (uint8_t)l,
							     rt->slots[i].val };
	}
	qsort(v, n, sizeof(*v), route_cmp);
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = fn(&v[i], ctx);
	free(v);
	return rc;
}
