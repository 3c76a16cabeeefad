/* ip6-ra: Router Advertisements (RFC 4861 §6.2), sent by a process node
 * on thread 0 out of every interface where they are on (ip6_ra.h).
 *
 * Unsolicited RAs go out at intervals drawn uniformly from
 * [0.33 x MaxRtrAdvInterval, MaxRtrAdvInterval] (§6.2.4: the jitter keeps
 * routers from synchronising), the first IP6_RA_MAX_INITIAL of them at most
 * 16 s apart so that hosts learn the router quickly. A solicitation that
 * ip6-rs validated is answered (§6.2.6) with the same multicast RA to
 * all-nodes, at once unless an RA left less than MIN_DELAY_BETWEEN_RAS
 * (3 s) ago, then when those 3 s are over; one RA answers every
 * solicitation that arrived before it. The answer's random delay of up to
 * MAX_RA_DELAY_TIME is taken as 0 (the node's own wake-up, up to
 * IP6_RA_POLL_NS, spreads answers anyway).
 *
 * The RA: from the link-local address (§6.1.2 has hosts drop any other)
 * to ff02::1, hop limit 255, Cur Hop Limit 64, the configured M/O flags
 * (§4.2), the router lifetime, reachable time and retrans timer 0
 * (unspecified), a source link-layer option, an MTU option with the
 * interface's MTU, a prefix information option per prefix (§4.6.2;
 * on-link, and autonomous for a /64, the only length SLAAC forms
 * addresses in, RFC 4862 §5.5.3) and, when configured, one RDNSS option
 * (RFC 8106 §5.1).
 *
 * The same node sends the Duplicate Address Detection probes of
 * ip6_dad.h: both are control-plane transmissions on a timer.
 *
 * Next nodes: interface-output.
 * Errors: RAs sent (counted); solicited RAs; no buffer; DAD probes sent.
 * CLI: `ip6 nd interface`, `show ip6 nd` (ip6_ra_cli.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "graph/node.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_dad.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_ra.h"

#define IP6_RA_POLL_NS (50ull * 1000000) /* how late an answer may be */
#define NS_PER_S 1000000000ull

struct ip6_ra_if ip6_ra_ifs[DEV_MAX];

enum ip6_ra_error {
	IP6_RA_ERROR_SENT = 0,
	IP6_RA_ERROR_SOLICITED,
	IP6_RA_ERROR_NO_BUFFER,
	IP6_RA_ERROR_DAD,
	IP6_RA_N_ERROR,
};

static const char *const ip6_ra_error_strings[IP6_RA_N_ERROR] = {
	[IP6_RA_ERROR_SENT] = "Router Advertisements sent",
	[IP6_RA_ERROR_SOLICITED] = "Router Advertisements answering a solicitation",
	[IP6_RA_ERROR_NO_BUFFER] = "Router Advertisement not sent: no buffer",
	[IP6_RA_ERROR_DAD] = "DAD probes sent (NS from ::, ip6_dad.h)",
};

/* ---- configuration ---- */

void ip6_ra_config_default(struct ip6_ra_config *c)
{
	*c = (struct ip6_ra_config){ .interval_s = IP6_RA_INTERVAL_DEFAULT_S, .lifetime_s = IP6_RA_LIFETIME_DEFAULT_S };
}

static void prefix_mask(ip6_addr_a2 *a, uint8_t plen)
{
	for (uint32_t i = 0; i < 16; i++) {
		uint32_t keep = plen >= 8 * (i + 1) ? 8 : plen > 8 * i ? plen - 8 * i : 0;
		a->s6_addr[i] &= (uint8_t)(0xff00u >> keep);
	}
}

int ip6_ra_config_check(const struct ip6_ra_config *c, char *err, size_t errlen)
{
	if (c->interval_s < IP6_RA_INTERVAL_MIN_S || c->interval_s > IP6_RA_INTERVAL_MAX_S) {
		snprintf(err, errlen, "interval %u s not in %u..%u", c->interval_s, IP6_RA_INTERVAL_MIN_S,
			 IP6_RA_INTERVAL_MAX_S);
		return -EINVAL;
	}
	/* §6.2.1: 0 (not a default router) or MaxRtrAdvInterval..9000 s. */
	if (c->lifetime_s && (c->lifetime_s < c->interval_s || c->lifetime_s > IP6_RA_LIFETIME_MAX_S)) {
		snprintf(err, errlen, "lifetime %u s not 0 nor in %u..%u", c->lifetime_s, c->interval_s,
			 IP6_RA_LIFETIME_MAX_S);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < c->n_rdnss; i++) {
		if (ip6_addr_is_multicast(&c->rdnss[i]) || ip6_addr_is_unspecified(&c->rdnss[i])) {
			snprintf(err, errlen, "rdnss %u: not a unicast address", i + 1);
			return -EINVAL;
		}
	}
	for (uint32_t i = 0; i < c->n_prefixes; i++) {
		const struct ip6_ra_prefix *p = &c->prefixes[i];
		if (!p->plen || p->plen > 128 || ip6_addr_is_link_local(&p->prefix) ||
		    ip6_addr_is_multicast(&p->prefix)) {
			snprintf(err, errlen, "prefix %u: not a global or unique-local prefix", i + 1);
			return -EINVAL;
		}
		/* RFC 4862 §5.5.3 (c): hosts ignore a prefix preferred longer than valid. */
		if (p->preferred_s > p->valid_s) {
			snprintf(err, errlen, "prefix %u: preferred %u s beyond valid %u s", i + 1, p->preferred_s,
				 p->valid_s);
			return -EINVAL;
		}
	}
	return 0;
}

/* A number of seconds, "10" or "10s". */
static bool parse_secs(const char *w, uint32_t *out)
{
	char *end;
	if (!w || *w < '0' || *w > '9')
		return false;
	unsigned long v = strtoul(w, &end, 10);
	if (*end == 's')
		end++;
	if (*end || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* `prefix P/L [valid V] [preferred P]` at argv[*i]; advances *i. */
static bool parse_prefix(int argc, char **argv, int *i, struct ip6_ra_config *c, const char **bad)
{
	if (c->n_prefixes == IP6_RA_MAX_PREFIXES || *i + 1 >= argc) {
		*bad = "prefix";
		return false;
	}
	struct ip6_ra_prefix *p = &c->prefixes[c->n_prefixes];
	*p = (struct ip6_ra_prefix){ .valid_s = IP6_RA_VALID_DEFAULT_S, .preferred_s = IP6_RA_PREFERRED_DEFAULT_S };
	*bad = argv[*i + 1];
	if (!ip6_parse_prefix(argv[*i + 1], &p->prefix, &p->plen, false))
		return false;
	*i += 2;
	int start = *i;
	while (*i + 1 < argc && (!strcmp(argv[*i], "valid") || !strcmp(argv[*i], "preferred"))) {
		uint32_t *dst = argv[*i][0] == 'v' ? &p->valid_s : &p->preferred_s;
		*bad = argv[*i + 1];
		if (!parse_secs(argv[*i + 1], dst))
			return false;
		*i += 2;
	}
	bool pref_given = false;
	for (int k = start; k < *i; k += 2)
		pref_given |= argv[k][0] == 'p';
	if (!pref_given && p->preferred_s > p->valid_s)
		p->preferred_s = p->valid_s; /* a short valid lifetime given alone shortens both */
	c->n_prefixes++;
	return true;
}

bool ip6_ra_parse(int argc, char **argv, struct ip6_ra_config *c, bool *off, const char **bad)
{
	ip6_ra_config_default(c);
	*off = argc == 1 && !strcmp(argv[0], "off");
	if (*off || (argc == 1 && !strcmp(argv[0], "on")))
		return true;
	for (int i = 0; i < argc;) {
		*bad = argv[i];
		if (!strcmp(argv[i], "prefix")) {
			if (!parse_prefix(argc, argv, &i, c, bad))
				return false;
			continue;
		}
		if (!strcmp(argv[i], "managed") || !strcmp(argv[i], "other")) {
			c->flags |= argv[i][0] == 'm' ? IP6_RA_F_MANAGED : IP6_RA_F_OTHER;
			i++;
			continue;
		}
		if (!strcmp(argv[i], "rdnss")) {
			if (c->n_rdnss == IP6_RA_MAX_RDNSS || i + 1 >= argc)
				return false;
			*bad = argv[i + 1];
			if (inet_pton(AF_INET6, argv[i + 1], &c->rdnss[c->n_rdnss]) != 1)
				return false;
			c->n_rdnss++;
			i += 2;
			continue;
		}
		uint32_t *dst = !strcmp(argv[i], "interval") ? &c->interval_s
				: !strcmp(argv[i], "lifetime") ? &c->lifetime_s
							       : NULL;
		if (!dst || i + 1 >= argc || !parse_secs(argv[i + 1], dst))
			return false;
		i += 2;
	}
	return true;
}

static uint64_t rng_next(struct ip6_ra_if *r)
{
	uint64_t x = r->rng ? r->rng : 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return r->rng = x;
}

/* §6.2.4: uniform in [Min, Max], Min = 0.33 x Max; capped while initial. */
static uint64_t next_interval_ns(struct ip6_ra_if *r)
{
	uint64_t max = r->cfg.interval_s * NS_PER_S, min = max * 33 / 100;
	uint64_t d = min + rng_next(r) % (max - min + 1);
	if (r->n_initial < IP6_RA_MAX_INITIAL && d > IP6_RA_MAX_INITIAL_INTERVAL_NS)
		d = IP6_RA_MAX_INITIAL_INTERVAL_NS;
	return d;
}

int ip6_ra_enable(uint32_t if_index, const struct ip6_ra_config *c, char *err, size_t errlen)
{
	if (if_index >= DEV_MAX || !dev_by_index(if_index)) {
		snprintf(err, errlen, "no such interface");
		return -EINVAL;
	}
	int rc = ip6_ra_config_check(c, err, errlen);
	if (rc)
		return rc;
	struct ip6_ra_if *r = &ip6_ra_ifs[if_index];
	struct ip6_ra_config cfg = *c;
	for (uint32_t i = 0; i < cfg.n_prefixes; i++)
		prefix_mask(&cfg.prefixes[i].prefix, cfg.prefixes[i].plen);
	bool was_on = r->on;
	r->cfg = cfg;
	if (!was_on) {
		uint64_t now = ip6_nbr_now();
		r->rng ^= now | 1;
		r->n_initial = 0;
		r->last_ns = 0;
		r->answer_pending = false;
		__atomic_store_n(&r->solicited, false, __ATOMIC_RELAXED);
		r->next_ns = now + next_interval_ns(r);
	} else if (r->next_ns > ip6_nbr_now() + cfg.interval_s * NS_PER_S) {
		r->next_ns = ip6_nbr_now() + next_interval_ns(r); /* a shorter interval applies at once */
	}
	r->on = true;
	return 0;
}

void ip6_ra_disable(uint32_t if_index)
{
	if (if_index < DEV_MAX)
		ip6_ra_ifs[if_index].on = false;
}

/* ---- the advertisement ---- */

static uint32_t put_prefix(uint8_t *o, const ip6_addr_a2 *pfx, uint8_t plen, uint32_t valid, uint32_t pref)
{
	memset(o, 0, 32);
	o[0] = 3; /* Prefix Information, §4.6.2 */
	o[1] = 4;
	o[2] = plen;
	o[3] = 0x80 | (plen == 64 ? 0x40 : 0); /* L, and A for a /64 */
	uint32_t v = htonl(valid), p = htonl(pref);
	memcpy(o + 4, &v, 4);
	memcpy(o + 8, &p, 4);
	memcpy(o + 16, pfx, 16);
	return 32;
}

/* The prefix options: the configured ones, else the addresses' prefixes
 * (each once). */
static uint32_t put_prefixes(uint8_t *o, const struct ip6_ra_if *r, const struct ip6_interface *ifc)
{
	uint32_t n = 0;
	if (r->cfg.n_prefixes) {
		for (uint32_t i = 0; i < r->cfg.n_prefixes; i++) {
			const struct ip6_ra_prefix *p = &r->cfg.prefixes[i];
			n += put_prefix(o + n, &p->prefix, p->plen, p->valid_s, p->preferred_s);
		}
		return n;
	}
	struct in6_addr seen[IP6_RA_MAX_PREFIXES];
	uint32_t n_seen = 0;
	for (uint32_t i = 0; i < ifc->n_addrs && n_seen < IP6_RA_MAX_PREFIXES; i++) {
		struct in6_addr pfx = ifc->addrs[i].addr;
		uint8_t plen = ifc->addrs[i].plen;
		if (plen == 128 || ip6_addr_is_link_local(&pfx))
			continue;
		prefix_mask(&pfx, plen);
		bool dup = false;
		for (uint32_t k = 0; k < n_seen; k++)
			dup |= ip6_addr_eq(&seen[k], &pfx);
		if (dup)
			continue;
		seen[n_seen++] = pfx;
		n += put_prefix(o + n, &pfx, plen, IP6_RA_VALID_DEFAULT_S, IP6_RA_PREFERRED_DEFAULT_S);
	}
	return n;
}

/* The RDNSS option (RFC 8106 §5.1): type 25, length 1 + 2 per address,
 * lifetime 3 x MaxRtrAdvInterval (§5.1's default bound). Its length. */
static uint32_t put_rdnss(uint8_t *o, const struct ip6_ra_config *c)
{
	if (!c->n_rdnss)
		return 0;
	uint32_t len = 8 + 16 * c->n_rdnss;
	memset(o, 0, 8);
	o[0] = 25;
	o[1] = (uint8_t)(len / 8);
	uint32_t life = htonl(3 * c->interval_s);
	memcpy(o + 4, &life, 4);
	memcpy(o + 8, c->rdnss, 16 * c->n_rdnss);
	return len;
}

uint32_t ip6_ra_frame(uint32_t if_index, uint8_t *p)
{
	static const struct in6_addr all_nodes = { .s6_addr = { 0xff, 2, [15] = 1 } };
	const struct ip6_interface *ifc = ip6_if(if_index);
	const struct device *dev = dev_by_index(if_index);
	if (!ifc || !dev || if_index >= DEV_MAX)
		return 0;
	const struct ip6_ra_if *r = &ip6_ra_ifs[if_index];
	ip6_mcast_mac(p, &all_nodes);
	memcpy(p + 6, dev->mac, 6);
	p[12] = 0x86;
	p[13] = 0xdd;
	uint8_t *m = p + 14 + IP6_HDR_LEN;
	memset(m, 0, 16);
	m[0] = ICMP6_ND_RA;
	m[4] = IP6_RA_CUR_HOP_LIMIT;
	m[5] = r->cfg.flags;
	uint16_t life = htons((uint16_t)r->cfg.lifetime_s);
	memcpy(m + 6, &life, 2);
	uint32_t n = 16;
	m[n] = ND_OPT_SOURCE_LLADDR;
	m[n + 1] = 1;
	memcpy(m + n + 2, dev->mac, 6);
	n += 8;
	if (dev->mtu) {
		uint32_t mtu = htonl(dev->mtu);
		memset(m + n, 0, 8);
		m[n] = 5; /* MTU, §4.6.4 */
		m[n + 1] = 1;
		memcpy(m + n + 4, &mtu, 4);
		n += 8;
	}
	n += put_prefixes(m + n, r, ifc);
	n += put_rdnss(m + n, &r->cfg);
	struct ip6_header *h = (struct ip6_header *)(p + 14);
	*h = (struct ip6_header){
		.ver_tc_flow = htonl(6u << 28),
		.payload_length = htons((uint16_t)n),
		.next_header = IP6_NH_ICMP6,
		.hop_limit = ND_HOP_LIMIT,
		.src = ifc->link_local,
		.dst = all_nodes,
	};
	uint16_t csum = ip6_l4_csum(h, m, n, IP6_NH_ICMP6);
	memcpy(m + 2, &csum, 2);
	return 14 + IP6_HDR_LEN + n;
}

/* ---- the process node ---- */

/* Whether r's RA is due now; takes a waiting solicitation (§6.2.6). */
static bool due(struct ip6_ra_if *r, uint64_t now)
{
	if (__atomic_exchange_n(&r->solicited, false, __ATOMIC_ACQ_REL)) {
		r->answer_pending = true;
		if (now < r->next_ns)
			r->next_ns = now;
	}
	if (now < r->next_ns)
		return false;
	/* §6.2.4 and §6.2.6: no two multicast RAs within 3 s. */
	if (r->last_ns && now < r->last_ns + IP6_RA_MIN_DELAY_NS) {
		r->next_ns = r->last_ns + IP6_RA_MIN_DELAY_NS;
		return false;
	}
	return true;
}

static uint32_t send_one(struct node_runtime *rt, uint32_t if_index, uint32_t *bi)
{
	if (buffer_alloc(bi, 1, -1) != 1) {
		node_count_error(rt, IP6_RA_ERROR_NO_BUFFER, 1);
		return 0;
	}
	struct buffer *b = buffer_get(*bi);
	uint32_t len = ip6_ra_frame(if_index, buffer_data(b));
	if (!len) {
		buffer_free(bi, 1);
		return 0;
	}
	b->current_length = len;
	b->tx_if = if_index;
	b->rx_if = if_index;
	return 1;
}

static uint32_t ip6_ra_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	uint32_t out[FRAME_SIZE], n = 0;
	node_suspend(rt, IP6_RA_POLL_NS);
	uint64_t now = ip6_nbr_now();
	for (uint32_t i = 0; i < DEV_MAX && n < FRAME_SIZE; i++) {
		struct ip6_ra_if *r = &ip6_ra_ifs[i];
		if (!r->on)
			continue;
		const struct device *dev = dev_by_index(i);
		if (!dev) { /* deleted since: a new interface there starts off */
			r->on = false;
			continue;
		}
		if (!due(r, now))
			continue;
		if (dev->admin_up && send_one(rt, i, &out[n])) {
			n++;
			r->n_sent++;
			if (r->answer_pending)
				node_count_error(rt, IP6_RA_ERROR_SOLICITED, 1), r->n_solicited++;
			r->last_ns = now;
			r->n_initial++;
		}
		r->answer_pending = false; /* down or IPv6 off: nothing to answer with */
		r->next_ns = now + next_interval_ns(r);
	}
	if (n)
		node_count_error(rt, IP6_RA_ERROR_SENT, n);
	uint32_t n_dad = ip6_dad_run(now, out + n, FRAME_SIZE - n);
	if (n_dad)
		node_count_error(rt, IP6_RA_ERROR_DAD, n_dad);
	node_enqueue(rt, 0, out, n + n_dad);
	return n + n_dad;
}

static const struct node_reg ip6_ra_node = {
	.name = "ip6-ra",
	.type = NODE_TYPE_PROCESS,
	.fn = ip6_ra_fn,
	.n_next = 1,
	.next_nodes = { "interface-output" },
	.n_errors = IP6_RA_N_ERROR,
	.error_strings = ip6_ra_error_strings,
};
NODE_REGISTER(ip6_ra_node)
