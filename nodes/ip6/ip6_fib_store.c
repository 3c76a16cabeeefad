/* The IPv6 FIB's route store (nodes/fib_rules.h: one hash per prefix
 * length, 129 of them, keyed by the prefix's two 64-bit halves): the
 * exact-match get and the sorted walk. The trie (ip6_fib.c) holds only
 * what lookups need. */
#include "nodes/ip6/ip6_fib_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/fib_rules.h"
#include "nodes/ip6/ip6_addr.h"

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

FIB_RULES_DEFINE(rule, struct ip6_rule_slot, struct ip6_rule_table, struct ip6_key, rule_hash, key_eq)

struct ip6_rule_slot *ip6_rule_find(const struct ip6_rule_table *rt, struct ip6_key key)
{
	return rule_find(rt, key);
}

int ip6_rule_insert(struct ip6_rule_table *rt, struct ip6_key key, uint32_t val)
{
	return rule_insert(rt, key, val);
}

void ip6_rule_remove(struct ip6_rule_table *rt, struct ip6_rule_slot *s)
{
	rule_remove(rt, s);
}

void ip6_rules_free(struct ip6_fib *fib)
{
	for (int l = 0; l <= 128; l++)
		rule_free(&fib->rules[l]);
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
		uint32_t pos = 0;
		for (const struct ip6_rule_slot *s; (s = rule_next(&fib->rules[l], &pos));)
			v[n++] = (struct ip6_route){ ip6_addr_of(s->key), (uint8_t)l, s->val };
	}
	qsort(v, n, sizeof(*v), route_cmp);
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = fn(&v[i], ctx);
	free(v);
	return rc;
}
