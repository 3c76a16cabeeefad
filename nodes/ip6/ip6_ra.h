/* Router Advertisements (RFC 4861 §6): per interface, whether sluice
 * advertises itself as a router there, how often, with which router
 * lifetime and prefixes; the state of the periodic sending; the RA's
 * exact bytes.
 *
 * The "ip6-ra" process node (thread 0) sends every RA: unsolicited ones at
 * jittered intervals (§6.2.4: uniformly in [MinRtrAdvInterval,
 * MaxRtrAdvInterval], Min = 0.33 x Max; the first
 * IP6_RA_MAX_INITIAL ones at most IP6_RA_MAX_INITIAL_INTERVAL_NS apart) and
 * solicited ones (§6.2.6), always to all-nodes, never two within
 * IP6_RA_MIN_DELAY_NS. The "ip6-rs" node (any thread) validates Router
 * Solicitations (§6.1.1) and only raises the interface's `solicited`
 * flag. Configuration runs with the datapath parked (graph barrier).
 */
#ifndef SLUICE_NODES_IP6_RA_H
#define SLUICE_NODES_IP6_RA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/device.h"
#include "nodes/ip6/ip6.h"

#define IP6_RA_MAX_PREFIXES 4
#define IP6_RA_INTERVAL_DEFAULT_S 600 /* MaxRtrAdvInterval's default, §6.2.1 */
#define IP6_RA_INTERVAL_MIN_S 4       /* §6.2.1: MaxRtrAdvInterval in 4..1800 s */
#define IP6_RA_INTERVAL_MAX_S 1800
#define IP6_RA_LIFETIME_DEFAULT_S 1800 /* AdvDefaultLifetime: 3 x MaxRtrAdvInterval */
#define IP6_RA_LIFETIME_MAX_S 9000
#define IP6_RA_VALID_DEFAULT_S 2592000  /* AdvValidLifetime: 30 days */
#define IP6_RA_PREFERRED_DEFAULT_S 604800 /* AdvPreferredLifetime: 7 days */
#define IP6_RA_MAX_INITIAL 3                                /* MAX_INITIAL_RTR_ADVERTISEMENTS, §10 */
#define IP6_RA_MAX_INITIAL_INTERVAL_NS (16ull * 1000000000) /* MAX_INITIAL_RTR_ADVERT_INTERVAL */
#define IP6_RA_MIN_DELAY_NS (3ull * 1000000000)             /* MIN_DELAY_BETWEEN_RAS */
#define IP6_RA_CUR_HOP_LIMIT 64 /* AdvCurHopLimit: the value of the Assigned Numbers registry */
#define IP6_RA_MAX_RDNSS 3 /* RDNSS addresses (RFC 8106 §5.1) */
#define IP6_RA_F_MANAGED 0x80 /* M: addresses by DHCPv6 (RFC 4861 §4.2) */
#define IP6_RA_F_OTHER 0x40   /* O: other configuration by DHCPv6 */
#define IP6_RA_FRAME_MAX (14 + 40 + 16 + 8 + 8 + 32 * IP6_RA_MAX_PREFIXES + 8 + 16 * IP6_RA_MAX_RDNSS)

struct ip6_ra_prefix {
	struct in6_addr prefix;
	uint8_t plen;
	uint32_t valid_s, preferred_s;
};

/* What an interface advertises. n_prefixes 0: its global addresses'
 * prefixes (on-link; autonomous when /64), default lifetimes. */
struct ip6_ra_config {
	uint32_t interval_s; /* MaxRtrAdvInterval */
	uint32_t lifetime_s; /* router lifetime */
	uint32_t n_prefixes;
	struct ip6_ra_prefix prefixes[IP6_RA_MAX_PREFIXES];
	uint8_t flags; /* IP6_RA_F_MANAGED, IP6_RA_F_OTHER */
	uint32_t n_rdnss;
	struct in6_addr rdnss[IP6_RA_MAX_RDNSS]; /* one RDNSS option, lifetime 3 x interval (RFC 8106 §5.1) */
};

struct ip6_ra_if {
	bool on;
	struct ip6_ra_config cfg;
	/* thread 0 (ip6-ra) writes these; the CLI reads them */
	uint64_t next_ns;     /* the next unsolicited RA */
	uint64_t last_ns;     /* the last RA sent, 0: none */
	uint32_t n_initial;   /* RAs sent since it was turned on */
	uint64_t n_sent, n_solicited;
	bool answer_pending;  /* a solicitation taken, its RA not yet sent */
	uint64_t rng;         /* xorshift64 state for the jitter */
	/* ip6-rs (any thread) */
	bool solicited;     /* an RS is waiting for its answer (atomic) */
	uint64_t n_rs;      /* valid solicitations (atomic) */
};

extern struct ip6_ra_if ip6_ra_ifs[DEV_MAX];

/* The defaults (interval 600 s, lifetime 1800 s, the addresses' prefixes). */
void ip6_ra_config_default(struct ip6_ra_config *c);

/* The settings words of `ip6 nd interface NAME ra ...` and of
 * startup.conf's `ip6-ra`: "off" (*off), "on" or nothing (the defaults),
 * or `[interval S] [lifetime S] [prefix X:X::X:X/L [valid S] [preferred
 * S]]... [managed] [other] [rdnss X:X::X:X]...` (S: seconds, "10" or
 * "10s") into c. False with the offending
 * word in *bad. Ranges are ip6_ra_config_check's. */
bool ip6_ra_parse(int argc, char **argv, struct ip6_ra_config *c, bool *off, const char **bad);

/* 0, or -EINVAL with the reason in err: interval 4..1800 s, lifetime 0 or
 * interval..9000 s, prefixes global or unique-local, preferred <= valid,
 * RDNSS addresses unicast. */
int ip6_ra_config_check(const struct ip6_ra_config *c, char *err, size_t errlen);

/* Turn RAs on with c (or change c) on if_index: the first RA goes out
 * within the initial interval. 0, or -EINVAL with the reason in err
 * (interval or lifetime out of range, a bad prefix, no such interface).
 * Barrier held. */
int ip6_ra_enable(uint32_t if_index, const struct ip6_ra_config *c, char *err, size_t errlen);

/* Stop advertising on if_index (no final RA is sent). Barrier held. */
void ip6_ra_disable(uint32_t if_index);

/* The RA for if_index as an Ethernet frame at p (IP6_RA_FRAME_MAX bytes):
 * from the link-local address to ff02::1, hop limit 255, source
 * link-layer and MTU options, the prefixes, the RDNSS option. Its length, or 0 when IPv6 is
 * not enabled there. */
uint32_t ip6_ra_frame(uint32_t if_index, uint8_t *p);

#endif
