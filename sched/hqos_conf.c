/* The hierarchy's configuration (hqos.h): the port, subscribers added,
 * changed and removed (control thread, owner parked), the name hash and
 * the match table that selects a subscriber per packet, the counters.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/hqos_private.h"

#define SUBS_MIN 64
#define VLAN_NONE UINT32_MAX

/* ---- the match table ---- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* One multiply (Fibonacci hashing, the high half): a probe per packet
 * per prefix length in use, so it must be cheap; consecutive addresses
 * spread over the table. */
static inline uint64_t key_hash(uint8_t kind, uint8_t plen, const uint8_t addr[16], uint32_t value)
{
	uint64_t a, b;
	memcpy(&a, addr, 8);
	memcpy(&b, addr + 8, 8);
	uint64_t x = a ^ (b * 0xff51afd7ed558ccdull) ^ ((uint64_t)kind << 56 | (uint64_t)plen << 48 | value);
	return (x * 0x9e3779b97f4a7c15ull) >> 32;
}

static inline bool key_eq(const struct hq_match_slot *e, uint8_t kind, uint8_t plen, const uint8_t addr[16],
			  uint32_t value)
{
	uint64_t a[2], b[2];
	memcpy(a, e->addr, 16);
	memcpy(b, addr, 16);
	return e->kind == kind && e->plen == plen && e->value == value && a[0] == b[0] && a[1] == b[1];
}

static inline uint32_t mt_find(const struct hq_match_table *t, uint8_t kind, uint8_t plen, const uint8_t addr[16],
			uint32_t value)
{
	for (uint32_t i = (uint32_t)key_hash(kind, plen, addr, value) & t->mask;; i = (i + 1) & t->mask) {
		const struct hq_match_slot *e = &t->slot[i];
		if (e->sub == NIL)
			return NIL;
		if (key_eq(e, kind, plen, addr, value))
			return i;
	}
}

static void mt_put(struct hq_match_table *t, const struct hq_match_slot *n)
{
	uint32_t i = (uint32_t)key_hash(n->kind, n->plen, n->addr, n->value) & t->mask;
	while (t->slot[i].sub != NIL)
		i = (i + 1) & t->mask;
	t->slot[i] = *n;
}

/* Room for one more at half load at most; a failure changes nothing. */
static int mt_grow(struct hq_match_table *t)
{
	if (t->slot && (t->n + 1) * 2 <= t->mask + 1)
		return 0;
	uint32_t size = t->slot ? (t->mask + 1) * 2 : MATCH_MIN_SLOTS;
	struct hq_match_slot *slot = malloc(size * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (uint32_t i = 0; i < size; i++)
		slot[i].sub = NIL;
	struct hq_match_slot *old = t->slot;
	uint32_t old_size = old ? t->mask + 1 : 0;
	t->slot = slot;
	t->mask = size - 1;
	for (uint32_t i = 0; i < old_size; i++)
		if (old[i].sub != NIL)
			mt_put(t, &old[i]);
	free(old);
	return 0;
}

/* ---- the IPv4 table (hqos_private.h's hq_v4_table) ---- */

static inline uint32_t v4_addr(const uint8_t *a)
{
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
}

static inline uint32_t v4_net(uint32_t addr, uint32_t plen)
{
	return plen ? addr & ~0u << (32 - plen) : 0;
}

static inline uint64_t v4_key(bool src, uint32_t plen, uint32_t net)
{
	return (src ? HQ_V4_SRC : 0) | (uint64_t)plen << 32 | net;
}

/* Fibonacci hashing: one multiply, the high half. */
static inline uint32_t v4_home(const struct hq_v4_table *t, uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & t->mask;
}

static inline uint32_t v4_find(const struct hq_v4_table *t, uint64_t key)
{
	for (uint32_t i = v4_home(t, key);; i = (i + 1) & t->mask) {
		uint64_t e = t->slot[i];
		if ((e & HQ_V4_KEY_MASK) == key)
			return (uint32_t)(e >> 40);
		if (e == HQ_V4_EMPTY)
			return NIL;
	}
}

static void v4_put(struct hq_v4_table *t, uint64_t e)
{
	uint32_t i = v4_home(t, e & HQ_V4_KEY_MASK);
	while (t->slot[i] != HQ_V4_EMPTY)
		i = (i + 1) & t->mask;
	t->slot[i] = e;
}

static int v4_reserve(struct hq_v4_table *t)
{
	if (t->slot && (t->n + 1) * 2 <= t->mask + 1)
		return 0;
	uint32_t size = t->slot ? (t->mask + 1) * 2 : MATCH_MIN_SLOTS;
	uint64_t *slot = malloc(size * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	memset(slot, 0xff, size * sizeof(*slot));
	uint64_t *old = t->slot;
	uint32_t old_size = old ? t->mask + 1 : 0;
	t->slot = slot;
	t->mask = size - 1;
	for (uint32_t i = 0; i < old_size; i++)
		if (old[i] != HQ_V4_EMPTY)
			v4_put(t, old[i]);
	free(old);
	return 0;
}

static inline uint64_t v4_match_key(const struct hqos_match *m)
{
	return v4_key(m->kind == HQOS_MATCH_SRC4, m->plen, v4_addr(m->addr));
}

static void v4_insert(struct hq_v4_table *t, const struct hqos_match *m, uint32_t id)
{
	v4_put(t, v4_match_key(m) | (uint64_t)id << 40);
	t->n++;
}

/* Backward-shift deletion, as mt_remove. */
static void v4_remove(struct hq_v4_table *t, const struct hqos_match *m)
{
	uint64_t key = v4_match_key(m);
	uint32_t i = v4_home(t, key);
	while ((t->slot[i] & HQ_V4_KEY_MASK) != key) {
		if (t->slot[i] == HQ_V4_EMPTY)
			return;
		i = (i + 1) & t->mask;
	}
	for (uint32_t j = (i + 1) & t->mask; t->slot[j] != HQ_V4_EMPTY; j = (j + 1) & t->mask) {
		uint32_t home = v4_home(t, t->slot[j] & HQ_V4_KEY_MASK);
		if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
			t->slot[i] = t->slot[j];
			i = j;
		}
	}
	t->slot[i] = HQ_V4_EMPTY;
	t->n--;
}

static inline bool is_v4(uint8_t kind)
{
	return kind == HQOS_MATCH_DST4 || kind == HQOS_MATCH_SRC4;
}

/* Longest IPv4 prefix of kind covering addr (host order): the lengths in
 * use, longest first, a probe each. */
static inline uint32_t v4_lpm(const struct hq_match_table *t, uint8_t kind, uint32_t addr)
{
	bool src = kind == HQOS_MATCH_SRC4;
	for (uint64_t bits = t->plens[kind][0]; bits;) {
		uint32_t l = (uint32_t)(63 - __builtin_clzll(bits));
		bits &= ~(1ull << l);
		uint32_t id = v4_find(&t->v4, v4_key(src, l, v4_net(addr, l)));
		if (id != NIL)
			return id;
	}
	return NIL;
}

/* Room for one more in both tables; a failure changes nothing (a table
 * may have grown). */
static int mt_reserve(struct hq_match_table *t)
{
	int rc = mt_grow(t);
	return rc ? rc : v4_reserve(&t->v4);
}

static void mt_plen_update(struct hq_match_table *t, uint8_t kind, uint8_t plen, bool added)
{
	uint64_t *w = &t->plens[kind][plen / 64];
	if (added) {
		*w |= 1ull << (plen % 64);
		return;
	}
	for (uint32_t i = 0; i <= t->mask; i++)
		if (t->slot[i].sub != NIL && t->slot[i].kind == kind && t->slot[i].plen == plen)
			return;
	*w &= ~(1ull << (plen % 64));
}

static void mt_insert(struct hq_match_table *t, const struct hqos_match *m, uint32_t id)
{
	struct hq_match_slot n = { .sub = id, .kind = m->kind, .plen = m->plen, .value = m->value };
	memcpy(n.addr, m->addr, 16);
	mt_put(t, &n);
	t->n++;
	t->n_kind[m->kind]++;
	mt_plen_update(t, m->kind, m->plen, true);
	if (is_v4(m->kind))
		v4_insert(&t->v4, m, id);
}

/* Backward-shift deletion: later entries of the probe run move up. */
static void mt_remove(struct hq_match_table *t, const struct hqos_match *m)
{
	uint32_t i = mt_find(t, m->kind, m->plen, m->addr, m->value);
	if (i == NIL)
		return;
	for (uint32_t j = (i + 1) & t->mask; t->slot[j].sub != NIL; j = (j + 1) & t->mask) {
		const struct hq_match_slot *e = &t->slot[j];
		uint32_t home = (uint32_t)key_hash(e->kind, e->plen, e->addr, e->value) & t->mask;
		if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
			t->slot[i] = *e;
			i = j;
		}
	}
	t->slot[i].sub = NIL;
	t->n--;
	t->n_kind[m->kind]--;
	mt_plen_update(t, m->kind, m->plen, false);
	if (is_v4(m->kind))
		v4_remove(&t->v4, m);
}

static void mask_prefix(uint8_t out[16], const uint8_t *addr, uint32_t alen, uint32_t plen)
{
	memset(out, 0, 16);
	memcpy(out, addr, plen / 8);
	if (plen % 8 && plen / 8 < alen)
		out[plen / 8] = (uint8_t)(addr[plen / 8] & (0xff00 >> (plen % 8)));
}

/* Longest prefix of kind covering addr: the prefix lengths in use, from
 * the longest, one probe each. */
static uint32_t lpm(const struct hq_match_table *t, uint8_t kind, const uint8_t *addr, uint32_t alen)
{
	uint8_t key[16];
	for (int w = 2; w >= 0; w--) {
		uint64_t bits = t->plens[kind][w];
		while (bits) {
			uint32_t l = (uint32_t)(63 - __builtin_clzll(bits)) + (uint32_t)w * 64;
			bits &= ~(1ull << (l % 64));
			mask_prefix(key, addr, alen, l);
			uint32_t i = mt_find(t, kind, (uint8_t)l, key, 0);
			if (i != NIL)
				return t->slot[i].sub;
		}
	}
	return NIL;
}

static uint32_t exact(const struct hq_match_table *t, uint8_t kind, uint32_t value)
{
	static const uint8_t zero[16];
	uint32_t i = mt_find(t, kind, 0, zero, value);
	return i == NIL ? NIL : t->slot[i].sub;
}

uint32_t hqos_classify(const struct hqos *h, const struct buffer *b)
{
	const struct hq_match_table *t = &h->mt;
	if (!t->n)
		return HQOS_DEFAULT_ID;
	const uint8_t *p = buffer_data((struct buffer *)b);
	uint32_t len = b->current_length, off = 14, vlan = VLAN_NONE, id = NIL;
	if (len < 14)
		return HQOS_DEFAULT_ID;
	uint16_t type = (uint16_t)(p[12] << 8 | p[13]);
	if ((type == 0x8100 || type == 0x88a8) && len >= 18) {
		vlan = (uint32_t)(p[14] << 8 | p[15]) & 0xfff;
		type = (uint16_t)(p[16] << 8 | p[17]);
		off = 18;
	}
	const uint8_t *ip = p + off;
	if (type == 0x0800 && len >= off + 20) {
		if (t->n_kind[HQOS_MATCH_DST4])
			id = v4_lpm(t, HQOS_MATCH_DST4, v4_addr(ip + 16));
		if (id == NIL && t->n_kind[HQOS_MATCH_SRC4])
			id = v4_lpm(t, HQOS_MATCH_SRC4, v4_addr(ip + 12));
	} else if (type == 0x86dd && len >= off + 40) {
		if (t->n_kind[HQOS_MATCH_DST6])
			id = lpm(t, HQOS_MATCH_DST6, ip + 24, 16);
		if (id == NIL && t->n_kind[HQOS_MATCH_SRC6])
			id = lpm(t, HQOS_MATCH_SRC6, ip + 8, 16);
	}
	if (id == NIL && vlan != VLAN_NONE && t->n_kind[HQOS_MATCH_VLAN])
		id = exact(t, HQOS_MATCH_VLAN, vlan);
	if (id == NIL && t->n_kind[HQOS_MATCH_RX_IF])
		id = exact(t, HQOS_MATCH_RX_IF, b->rx_if);
	return id == NIL ? HQOS_DEFAULT_ID : id;
}

/* The first kind of the match order in use when it is an IPv4 prefix
 * (dst before src: hqos.h), its longest length in *plen and the
 * address's offset in the IPv4 header in *at; 0 when the order starts
 * elsewhere (IPv6, VLAN, rx interface only). */
static uint8_t v4_first(const struct hq_match_table *t, uint32_t *plen, uint32_t *at)
{
	uint8_t kind = t->n_kind[HQOS_MATCH_DST4] ? HQOS_MATCH_DST4 : t->n_kind[HQOS_MATCH_SRC4] ? HQOS_MATCH_SRC4 : 0;
	if (kind) {
		*plen = (uint32_t)(63 - __builtin_clzll(t->plens[kind][0]));
		*at = kind == HQOS_MATCH_DST4 ? 16 : 12;
	}
	return kind;
}

/* The address a burst's IPv4 packet offers the first IPv4 kind (at: its
 * offset in the IPv4 header), the frame checked as hqos_classify checks
 * it; false for any other frame. */
static inline bool v4_frame_addr(const struct buffer *b, uint32_t at, uint32_t *addr)
{
	const uint8_t *p = buffer_data((struct buffer *)b);
	uint32_t len = b->current_length, off = 14;
	if (len < 34)
		return false;
	uint16_t type = (uint16_t)(p[12] << 8 | p[13]);
	if (type == 0x8100 || type == 0x88a8) {
		type = (uint16_t)(p[16] << 8 | p[17]);
		off = 18;
	}
	if (type != 0x0800 || len < off + 20)
		return false;
	*addr = v4_addr(p + off + at);
	return true;
}

/* hqos_classify over m <= HQ_CLASSIFY_MAX packets, in two passes so the
 * table's misses overlap: first each IPv4 packet's address and the slot
 * of its longest prefix of the first kind in use (prefetched), then the
 * probes from those slots. A hit there is the answer (nothing longer of
 * that kind, and that kind comes first in the order); anything else (a
 * miss, another frame, the order starting with IPv6, VLAN or rx
 * interface) takes hqos_classify's whole walk. Each subscriber's state is
 * prefetched for the enqueue that follows. */
void hqos_classify_burst(const struct hqos *h, const uint32_t *bi, uint32_t m, uint32_t *ids)
{
	const struct hq_match_table *t = &h->mt;
	const struct hq_v4_table *v = &t->v4;
	uint32_t home[HQ_CLASSIFY_MAX], plen = 0, at = 0;
	uint64_t key[HQ_CLASSIFY_MAX];
	uint8_t kind = t->n ? v4_first(t, &plen, &at) : 0;
	uint64_t tag = kind == HQOS_MATCH_SRC4 ? HQ_V4_SRC : 0;
	for (uint32_t i = 0; i < m; i++) {
		uint32_t addr;
		if (i + 8 < m)
			__builtin_prefetch(buffer_get(bi[i + 8]));
		if (i + 4 < m) /* its headers, for the match */
			__builtin_prefetch(buffer_data(buffer_get(bi[i + 4])) + 16);
		home[i] = NIL;
		if (kind && v4_frame_addr(buffer_get(bi[i]), at, &addr)) {
			key[i] = tag | (uint64_t)plen << 32 | v4_net(addr, plen);
			home[i] = v4_home(v, key[i]);
			__builtin_prefetch(&v->slot[home[i]]);
		}
	}
	for (uint32_t i = 0; i < m; i++) {
		uint32_t id = NIL;
		if (home[i] != NIL)
			for (uint32_t j = home[i];; j = (j + 1) & v->mask) {
				uint64_t e = v->slot[j];
				if ((e & HQ_V4_KEY_MASK) == key[i]) {
					id = (uint32_t)(e >> 40);
					break;
				}
				if (e == HQ_V4_EMPTY)
					break;
			}
		if (id == NIL)
			id = t->n ? hqos_classify(h, buffer_get(bi[i])) : HQOS_DEFAULT_ID;
		ids[i] = id;
		__builtin_prefetch(&h->sub[id]);
		__builtin_prefetch((const char *)&h->sub[id] + 64);
	}
}

/* ---- names ---- */

static uint64_t name_hash(const char *s)
{
	uint64_t x = 0xcbf29ce484222325ull;
	while (*s)
		x = (x ^ (uint8_t)*s++) * 0x100000001b3ull;
	return mix(x);
}

int hqos_sub_find(const struct hqos *h, const char *name)
{
	for (uint32_t i = (uint32_t)name_hash(name) & h->names_mask;; i = (i + 1) & h->names_mask) {
		uint32_t id = h->names[i];
		if (id == NIL)
			return -ENOENT;
		if (strcmp(h->conf[id].name, name) == 0)
			return (int)id;
	}
}

static void name_put(struct hqos *h, uint32_t id)
{
	uint32_t i = (uint32_t)name_hash(h->conf[id].name) & h->names_mask;
	while (h->names[i] != NIL)
		i = (i + 1) & h->names_mask;
	h->names[i] = id;
}

static void name_remove(struct hqos *h, uint32_t id)
{
	uint32_t m = h->names_mask, i = (uint32_t)name_hash(h->conf[id].name) & m;
	while (h->names[i] != id)
		i = (i + 1) & m;
	for (uint32_t j = (i + 1) & m; h->names[j] != NIL; j = (j + 1) & m) {
		uint32_t home = (uint32_t)name_hash(h->conf[h->names[j]].name) & m;
		if (((j - home) & m) >= ((j - i) & m)) {
			h->names[i] = h->names[j];
			i = j;
		}
	}
	h->names[i] = NIL;
}

/* ---- subscriber storage ---- */

static void sub_init(struct hq_sub *s)
{
	memset(s, 0, sizeof(*s));
	s->lk[0][0] = s->lk[0][1] = s->lk[1][0] = s->lk[1][1] = NIL;
	s->wprev = s->wnext = s->wslot = NIL;
}

/* Room for n_subs + 1 subscribers and their names; all or nothing. */
static int reserve(struct hqos *h)
{
	if (h->n_subs + 1 > HQOS_SUBS_MAX)
		return -ENOSPC;
	if (h->n_subs + 1 > h->n_alloc) {
		uint32_t n = h->n_alloc ? h->n_alloc * 2 : SUBS_MIN;
		struct hq_sub *sub = realloc(h->sub, n * sizeof(*sub));
		if (!sub)
			return -ENOMEM;
		h->sub = sub;
		struct hqos_sub_config *conf = realloc(h->conf, n * sizeof(*conf));
		if (!conf)
			return -ENOMEM;
		h->conf = conf;
		for (uint32_t id = n; id-- > h->n_alloc;) {
			sub_init(&sub[id]);
			memset(&conf[id], 0, sizeof(conf[id]));
			sub[id].lk[0][1] = h->free_head;
			h->free_head = id;
		}
		h->n_alloc = n;
	}
	if ((h->n_subs + 1) * 2 > h->names_mask + 1) {
		uint32_t size = (h->names_mask + 1) * 2;
		uint32_t *names = malloc(size * sizeof(*names));
		if (!names)
			return -ENOMEM;
		free(h->names);
		h->names = names;
		h->names_mask = size - 1;
		memset(names, 0xff, size * sizeof(*names));
		for (uint32_t id = 0; id < h->n_alloc; id++)
			if (h->sub[id].in_use)
				name_put(h, id);
	}
	return mt_reserve(&h->mt);
}

/* ---- the port ---- */

void hqos_port_config_default(struct hqos_port_config *cfg)
{
	*cfg = (struct hqos_port_config){
		.queue_limit = 64,
		.max_held = 65536,
		.codel_target_ns = 5000000,
		.codel_interval_ns = 100000000,
	};
}

static int port_check(const struct hqos_port_config *c, char *err, size_t errlen)
{
	if (c->overhead > HQOS_OVERHEAD_MAX)
		snprintf(err, errlen, "overhead %u: expected 0..%u bytes", c->overhead, HQOS_OVERHEAD_MAX);
	else if (c->queue_limit < 1 || c->queue_limit > HQOS_QUEUE_LIMIT_MAX)
		snprintf(err, errlen, "queue-limit %u: expected 1..%u packets", c->queue_limit, HQOS_QUEUE_LIMIT_MAX);
	else if (c->max_held < 1 || c->max_held > SCHED_HELD_MAX)
		snprintf(err, errlen, "max-held %u: expected 1..%u packets", c->max_held, SCHED_HELD_MAX);
	else if (c->codel && (!c->codel_target_ns || c->codel_interval_ns < c->codel_target_ns ||
			      c->codel_interval_ns > SCHED_DELAY_MAX))
		snprintf(err, errlen, "codel: expected 0 < target <= interval <= 10s");
	else if (c->ecn && !c->codel)
		snprintf(err, errlen, "ecn: only with codel");
	else
		return 0;
	return -EINVAL;
}

struct hqos *hqos_create(const struct hqos_port_config *cfg, char *err, size_t errlen)
{
	if (port_check(cfg, err, errlen))
		return NULL;
	struct hqos *h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->cfg = *cfg;
	h->free_head = NIL;
	h->names_mask = SUBS_MIN - 1;
	h->names = malloc(SUBS_MIN * sizeof(*h->names));
	h->list[L_GREEN] = h->list[L_BORROW] = (struct hq_list){ NIL, NIL, 0 };
	hqos_wheel_init(h);
	struct hqos_sub_config d = { .name = "default", .burst_bytes = 16384, .weight = 1 };
	if (h->names)
		memset(h->names, 0xff, SUBS_MIN * sizeof(*h->names));
	if (!h->names || hqos_sub_set(h, &d, 0, err, errlen) != HQOS_DEFAULT_ID) {
		hqos_destroy(h);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return h;
}

void hqos_destroy(struct hqos *h)
{
	if (!h)
		return;
	uint32_t bi[256], n;
	while ((n = hqos_flush(h, bi, 256)) != 0)
		buffer_free(bi, n);
	while ((n = hqos_take_impair_drops(h, bi, 256)) != 0)
		buffer_free(bi, n);
	for (uint32_t i = 0; i < h->n_imp; i++)
		sched_impair_destroy(h->imp[i].m);
	free(h->sub);
	free(h->conf);
	free(h->names);
	free(h->mt.slot);
	free(h->mt.v4.slot);
	free(h);
}

int hqos_set_port(struct hqos *h, const struct hqos_port_config *cfg, char *err, size_t errlen)
{
	int rc = port_check(cfg, err, errlen);
	if (rc)
		return rc;
	if (cfg->codel != h->cfg.codel) /* CoDel starts (or ends) afresh: RFC 8289's initial state */
		for (uint32_t id = 0; id < h->n_alloc; id++) {
			h->sub[id].dropping = 0;
			memset(h->sub[id].codel, 0, sizeof(h->sub[id].codel));
		}
	h->cfg = *cfg;
	for (uint32_t id = 0; id < h->n_alloc; id++)
		h->sub[id].overhead = cfg->overhead + h->conf[id].overhead;
	return 0;
}

int hqos_set_rate(struct hqos *h, uint64_t rate_bps, uint64_t burst_bytes, uint64_t now_ns)
{
	if (rate_bps && (rate_bps < SCHED_RATE_MIN || rate_bps > SCHED_RATE_MAX || burst_bytes < SCHED_BURST_MIN ||
			 burst_bytes > SCHED_BURST_MAX))
		return -EINVAL;
	h->rate_bps = rate_bps;
	h->burst_bytes = rate_bps ? burst_bytes : 0;
	h->cap = (int64_t)h->burst_bytes * UNITS_PER_BYTE;
	h->tokens = h->cap;
	h->last_ns = now_ns;
	return 0;
}

/* ---- subscribers ---- */

static int match_check(const struct hqos_match *m, bool is_default, char *err, size_t errlen)
{
	uint32_t alen = m->kind == HQOS_MATCH_DST4 || m->kind == HQOS_MATCH_SRC4 ? 4
			: m->kind == HQOS_MATCH_DST6 || m->kind == HQOS_MATCH_SRC6 ? 16
										  : 0;
	uint8_t masked[16];
	if (is_default != (m->kind == HQOS_MATCH_NONE)) {
		snprintf(err, errlen, is_default ? "default takes no match: it gets what no match selects"
						 : "expected match dst|src PREFIX, vlan ID or interface NAME");
		return -EINVAL;
	}
	if (m->kind >= HQOS_N_MATCH || (alen && m->plen > alen * 8) || (m->kind == HQOS_MATCH_VLAN && m->value > 4095)) {
		snprintf(err, errlen, "match out of range");
		return -EINVAL;
	}
	mask_prefix(masked, m->addr, alen, m->plen);
	if (alen && memcmp(masked, m->addr, 16) != 0) {
		snprintf(err, errlen, "prefix has host bits set");
		return -EINVAL;
	}
	return 0;
}

static int sub_check(const struct hqos_sub_config *c, bool is_default, char *err, size_t errlen)
{
	size_t len = strnlen(c->name, sizeof(c->name));
	if (!len || len == sizeof(c->name))
		snprintf(err, errlen, "subscriber name: expected 1..%d characters", HQOS_NAME_SIZE - 1);
	else if ((c->rate_bps || !is_default) && (c->rate_bps < SCHED_RATE_MIN || c->rate_bps > SCHED_RATE_MAX))
		snprintf(err, errlen, "rate %llu bit/s: expected 1kbit..400gbit", (unsigned long long)c->rate_bps);
	else if (c->ceil_bps && (c->ceil_bps < c->rate_bps || c->ceil_bps > SCHED_RATE_MAX))
		snprintf(err, errlen, "ceil %llu bit/s: expected the rate..400gbit", (unsigned long long)c->ceil_bps);
	else if (c->burst_bytes < SCHED_BURST_MIN || c->burst_bytes > SCHED_BURST_MAX)
		snprintf(err, errlen, "burst %llu bytes: expected 64..256M", (unsigned long long)c->burst_bytes);
	else if (c->weight < 1 || c->weight > HQOS_WEIGHT_MAX)
		snprintf(err, errlen, "weight %u: expected 1..%u", c->weight, HQOS_WEIGHT_MAX);
	else if (c->overhead > HQOS_OVERHEAD_MAX)
		snprintf(err, errlen, "overhead %u: expected 0..%u bytes", c->overhead, HQOS_OVERHEAD_MAX);
	else
		return match_check(&c->match, is_default, err, errlen);
	return -EINVAL;
}

static void sub_apply(struct hqos *h, uint32_t id, const struct hqos_sub_config *c, uint64_t now)
{
	struct hq_sub *s = &h->sub[id];
	h->conf[id] = *c;
	s->rate = c->rate_bps;
	s->ceil = c->ceil_bps ? c->ceil_bps : c->rate_bps ? c->rate_bps : CEIL_NONE;
	s->cap = (int64_t)c->burst_bytes * UNITS_PER_BYTE;
	s->tokens = s->ctokens = s->cap;
	s->last_ns = now;
	s->quantum = c->weight * QUANTUM_UNIT;
	s->overhead = h->cfg.overhead + c->overhead;
	if (s->in_use) { /* new buckets: a new state and wake time */
		hqos_sub_unlink(h, id);
		hqos_sub_place(h, id, now);
	}
}

int hqos_sub_set(struct hqos *h, const struct hqos_sub_config *c, uint64_t now_ns, char *err, size_t errlen)
{
	bool is_default = strcmp(c->name, "default") == 0;
	int rc = sub_check(c, is_default, err, errlen);
	if (rc)
		return rc;
	int id = hqos_sub_find(h, c->name);
	const struct hqos_match *m = &c->match;
	if (m->kind != HQOS_MATCH_NONE && h->mt.slot) {
		uint32_t i = mt_find(&h->mt, m->kind, m->plen, m->addr, m->value);
		if (i != NIL && (int)h->mt.slot[i].sub != id) {
			snprintf(err, errlen, "subscriber %s has that match already", h->conf[h->mt.slot[i].sub].name);
			return -EEXIST;
		}
	}
	if ((rc = reserve(h)) != 0) {
		snprintf(err, errlen, rc == -ENOSPC ? "%u subscribers on this port already" : "out of memory",
			 HQOS_SUBS_MAX);
		return rc;
	}
	if (id < 0) {
		id = (int)h->free_head;
		h->free_head = h->sub[id].lk[0][1];
		sub_init(&h->sub[id]);
		memcpy(h->conf[id].name, c->name, sizeof(c->name));
		name_put(h, (uint32_t)id);
		h->n_subs++;
		h->sub_gen++;
	} else if (h->conf[id].match.kind != HQOS_MATCH_NONE) {
		mt_remove(&h->mt, &h->conf[id].match);
	}
	if (m->kind != HQOS_MATCH_NONE)
		mt_insert(&h->mt, m, (uint32_t)id);
	sub_apply(h, (uint32_t)id, c, now_ns);
	if (!h->sub[id].in_use) /* a change keeps SUB_IMPAIRED */
		h->sub[id].in_use = 1;
	return id;
}

static void counters_add(struct hqos_counters *to, const struct hqos_counters *c)
{
	to->enqueued += hq_rd(&c->enqueued);
	to->departed_packets += hq_rd(&c->departed_packets);
	to->departed_bytes += hq_rd(&c->departed_bytes);
	to->dropped_limit += hq_rd(&c->dropped_limit);
	to->dropped_codel += hq_rd(&c->dropped_codel);
	to->marked += hq_rd(&c->marked);
}

int hqos_sub_remove(struct hqos *h, const char *name, uint64_t *freed)
{
	int id = hqos_sub_find(h, name);
	*freed = 0;
	if (id < 0)
		return id;
	if (id == HQOS_DEFAULT_ID)
		return -EINVAL;
	struct hq_sub *s = &h->sub[id];
	hqos_sub_unlink(h, (uint32_t)id);
	uint64_t imp_freed = hqos_impair_remove(h, (uint32_t)id); /* held by its impairer: not in h->held */
	*freed += imp_freed;
	for (uint32_t p = 0; p < SCHED_N_PRIO; p++) {
		uint32_t bi;
		while ((bi = h->sub[id].q[p].n ? h->sub[id].q[p].head : NIL) != NIL) {
			s->q[p].head = hq_link(bi)[0];
			s->q[p].head_len = hq_link(bi)[1];
			s->q[p].n--;
			buffer_free(&bi, 1);
			(*freed)++;
		}
	}
	__atomic_store_n(&h->held, h->held - (*freed - imp_freed), __ATOMIC_RELAXED);
	counters_add(&h->gone, &s->c);
	h->gone.dropped_limit += *freed; /* counted as dropped: they never left */
	if (h->conf[id].match.kind != HQOS_MATCH_NONE)
		mt_remove(&h->mt, &h->conf[id].match);
	name_remove(h, (uint32_t)id);
	sub_init(s);
	memset(&h->conf[id], 0, sizeof(h->conf[id]));
	s->lk[0][1] = h->free_head;
	h->free_head = (uint32_t)id;
	h->n_subs--;
	h->sub_gen++;
	return 0;
}

int hqos_sub_next(const struct hqos *h, int id)
{
	for (uint32_t i = (uint32_t)(id + 1); i < h->n_alloc; i++)
		if (h->sub[i].in_use)
			return (int)i;
	return -1;
}

/* ---- counters ---- */

int hqos_sub_stats(const struct hqos *h, uint32_t id, struct hqos_sub_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (id >= h->n_alloc || !h->sub[id].in_use)
		return -ENOENT;
	const struct hq_sub *s = &h->sub[id];
	st->cfg = h->conf[id];
	st->id = id;
	st->state = s->state == ST_GREEN ? "green" : s->state == ST_YELLOW ? "yellow" : s->state == ST_ASLEEP ? "asleep"
														: "idle";
	for (uint32_t p = 0; p < SCHED_N_PRIO; p++) {
		st->backlog_packets += s->q[p].n;
		st->backlog_bytes += s->q[p].bytes;
	}
	st->tokens_bytes = s->tokens / UNITS_PER_BYTE;
	st->ctokens_bytes = (s->ceil == s->rate ? s->tokens : s->ctokens) / UNITS_PER_BYTE;
	counters_add(&st->c, &s->c);
	const struct sched_impair *m = hqos_sub_impair(h, id);
	if ((st->has_impair = m != NULL))
		sched_impair_stats(m, &st->impair);
	return 0;
}

uint32_t hqos_sub_count(const struct hqos *h, uint64_t *gen)
{
	*gen = h->sub_gen;
	return h->n_subs;
}

const char *hqos_sub_name(const struct hqos *h, uint32_t id)
{
	return id < h->n_alloc && h->sub[id].in_use ? h->conf[id].name : NULL;
}

int hqos_sub_counters(const struct hqos *h, uint32_t id, struct hqos_counters *c)
{
	memset(c, 0, sizeof(*c));
	if (id >= h->n_alloc || !h->sub[id].in_use)
		return -ENOENT;
	counters_add(c, &h->sub[id].c);
	return 0;
}

void hqos_port_stats(const struct hqos *h, struct hqos_port_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->cfg = h->cfg;
	st->rate_bps = h->rate_bps;
	st->burst_bytes = h->burst_bytes;
	st->tokens_bytes = __atomic_load_n(&h->tokens, __ATOMIC_RELAXED) / UNITS_PER_BYTE;
	st->subscribers = h->n_subs;
	st->held = hqos_held(h);
	counters_add(&st->c, &h->gone);
	for (uint32_t id = 0; id < h->n_alloc; id++)
		if (h->sub[id].in_use)
			counters_add(&st->c, &h->sub[id].c);
}

/* ---- matches as text ---- */

int hqos_match_prefix(struct hqos_match *m, bool dst, const char *text)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(text, '/');
	size_t n = slash ? (size_t)(slash - text) : strlen(text);
	memset(m, 0, sizeof(*m));
	if (n >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, text, n);
	addr[n] = 0;
	bool v6 = strchr(addr, ':') != NULL;
	uint32_t max = v6 ? 128 : 32;
	if (inet_pton(v6 ? AF_INET6 : AF_INET, addr, m->addr) != 1)
		return -EINVAL;
	unsigned long plen = max;
	if (slash) {
		char *end;
		plen = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || plen > max)
			return -EINVAL;
	}
	m->plen = (uint8_t)plen;
	m->kind = (uint8_t)(v6 ? (dst ? HQOS_MATCH_DST6 : HQOS_MATCH_SRC6) : (dst ? HQOS_MATCH_DST4 : HQOS_MATCH_SRC4));
	uint8_t masked[16];
	mask_prefix(masked, m->addr, v6 ? 16 : 4, m->plen);
	return memcmp(masked, m->addr, 16) == 0 ? 0 : -EINVAL;
}

void hqos_match_format(const struct hqos_match *m, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	switch (m->kind) {
	case HQOS_MATCH_DST4:
	case HQOS_MATCH_SRC4:
	case HQOS_MATCH_DST6:
	case HQOS_MATCH_SRC6: {
		bool v6 = m->kind == HQOS_MATCH_DST6 || m->kind == HQOS_MATCH_SRC6;
		inet_ntop(v6 ? AF_INET6 : AF_INET, m->addr, a, sizeof(a));
		snprintf(buf, len, "%s %s/%u", m->kind == HQOS_MATCH_DST4 || m->kind == HQOS_MATCH_DST6 ? "dst" : "src", a,
			 m->plen);
		break;
	}
	case HQOS_MATCH_VLAN:
		snprintf(buf, len, "vlan %u", m->value);
		break;
	case HQOS_MATCH_RX_IF:
		snprintf(buf, len, "rx-if %u", m->value);
		break;
	default:
		snprintf(buf, len, "none");
		break;
	}
}
