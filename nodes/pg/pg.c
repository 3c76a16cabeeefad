/* The packet generator's streams: configuration checks, template building,
 * attach to a graph, add/enable/delete and per-stream counters. Every change
 * takes the graph barrier once a graph is attached. The node that sends the
 * packets is nodes/pg/pg-input.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/buffer.h"
#include "graph/graph.h"
#include "nodes/pg/pg_private.h"

struct pg_main pg_main = { .sched_next = -1 };

static struct pg_stream *stream_find(const char *name, uint32_t *index)
{
	for (uint32_t i = 0; i < pg_main.n_streams; i++)
		if (strcmp(pg_main.streams[i]->cfg.name, name) == 0) {
			if (index)
				*index = i;
			return pg_main.streams[i];
		}
	return NULL;
}

/* Control changes park the datapath first (nothing runs before attach). */
static void pg_barrier_sync(void)
{
	if (pg_main.graph)
		graph_barrier_sync(pg_main.graph);
}

static void pg_barrier_release(void)
{
	if (pg_main.graph)
		graph_barrier_release(pg_main.graph);
}

void pg_stream_config_default(struct pg_stream_config *cfg)
{
	static const uint8_t src_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	static const uint8_t dst_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	memset(cfg, 0, sizeof(*cfg));
	cfg->size_mode = PG_SIZE_FIXED;
	cfg->size_min = cfg->size_max = 64;
	memcpy(cfg->src_mac, src_mac, 6);
	memcpy(cfg->dst_mac, dst_mac, 6);
	cfg->ethertype = ETHERTYPE_IP4;
	cfg->src_ip = 0x0a000001; /* 10.0.0.1 */
	cfg->src_ip_count = 1;
	cfg->dst_ip = 0x0a000101; /* 10.0.1.1 */
	cfg->dst_ip_count = 1;
	cfg->ttl = 64;
	cfg->proto = PG_L4_UDP;
	cfg->src_port = 1234;
	cfg->dst_port = 4321;
	snprintf(cfg->next_node, sizeof(cfg->next_node), "ethernet-input");
}

static uint32_t header_len(const struct pg_stream_config *c)
{
	static const uint32_t l4_len[] = {
		[PG_L4_UDP] = UDP_HDR_LEN, [PG_L4_TCP] = TCP_HDR_LEN,
		[PG_L4_ICMP] = ICMP_HDR_LEN, [PG_L4_NONE] = 0,
	};
	if (c->data_len)
		return 0;
	if (c->ethertype != ETHERTYPE_IP4)
		return ETH_HDR_LEN;
	return ETH_HDR_LEN + IP4_HDR_LEN + l4_len[c->proto];
}

int pg_stream_config_check(const struct pg_stream_config *c, char *err, size_t errlen)
{
	const char *n = c->name;
	uint32_t limit = buffer_main.data_size ? MIN(buffer_main.data_size, PG_SIZE_MAX) : PG_SIZE_MAX;
	if (!n[0] || memchr(n, 0, PG_NAME_MAX) == NULL) {
		snprintf(err, errlen, "pg: a stream needs a name of 1 to %d characters", PG_NAME_MAX - 1);
		return -EINVAL;
	}
	if (!c->next_node[0] || memchr(c->next_node, 0, PG_NAME_MAX) == NULL) {
		snprintf(err, errlen, "pg: stream %s: bad next node name", n);
		return -EINVAL;
	}
	if ((unsigned)c->size_mode > PG_SIZE_RANDOM || (unsigned)c->proto > PG_L4_NONE) {
		snprintf(err, errlen, "pg: stream %s: bad size mode or protocol", n);
		return -EINVAL;
	}
	if (c->size_min > c->size_max || (c->size_mode == PG_SIZE_FIXED && c->size_min != c->size_max)) {
		snprintf(err, errlen, "pg: stream %s: size %u-%u is not a range", n, c->size_min, c->size_max);
		return -EINVAL;
	}
	uint32_t need = MAX(header_len(c), (uint32_t)PG_SIZE_MIN);
	if (c->size_min < need || c->size_max > limit) {
		snprintf(err, errlen, "pg: stream %s: size %u-%u outside %u-%u (headers to buffer data size)",
			 n, c->size_min, c->size_max, need, limit);
		return -EINVAL;
	}
	if (c->data_len > PG_DATA_MAX) {
		snprintf(err, errlen, "pg: stream %s: data longer than %d bytes", n, PG_DATA_MAX);
		return -EINVAL;
	}
	if (c->dscp > 63) {
		snprintf(err, errlen, "pg: stream %s: dscp %u outside 0-63", n, c->dscp);
		return -EINVAL;
	}
	if ((c->src_port_last && c->src_port_last < c->src_port) ||
	    (c->dst_port_last && c->dst_port_last < c->dst_port)) {
		snprintf(err, errlen, "pg: stream %s: port range runs backwards", n);
		return -EINVAL;
	}
	if ((uint64_t)c->src_ip + MAX(c->src_ip_count, 1u) - 1 > UINT32_MAX ||
	    (uint64_t)c->dst_ip + MAX(c->dst_ip_count, 1u) - 1 > UINT32_MAX) {
		snprintf(err, errlen, "pg: stream %s: address range passes 255.255.255.255", n);
		return -EINVAL;
	}
	return 0;
}

/* Build the template at size_max and the checksum sums that stay fixed; the
 * node then only adds the words that change per packet. */
static void stream_build(struct pg_stream *s)
{
	const struct pg_stream_config *c = &s->cfg;
	struct pg_edit *e = &s->edit;
	uint8_t *p = s->tmpl;
	uint32_t max = c->size_max;

	*e = (struct pg_edit){
		.tmpl = s->tmpl,
		.payload_sum = s->payload_sum,
		.src_ip = c->src_ip,
		.src_n = MAX(c->src_ip_count, 1u),
		.dst_ip = c->dst_ip,
		.dst_n = MAX(c->dst_ip_count, 1u),
		.sport = c->src_port,
		.sport_n = c->src_port_last > c->src_port ? c->src_port_last - c->src_port + 1u : 1u,
		.dport = c->dst_port,
		.dport_n = c->dst_port_last > c->dst_port ? c->dst_port_last - c->dst_port + 1u : 1u,
		.size_min = c->size_min,
		.size_max = c->size_max,
		.rx_if = c->rx_if,
		.size_mode = (uint8_t)c->size_mode,
		.proto = (uint8_t)c->proto,
		.ip4 = !c->data_len && c->ethertype == ETHERTYPE_IP4,
	};
	s->hdr_len = header_len(c);
	if (c->data_len) {
		memcpy(p, c->data, MIN((uint32_t)c->data_len, max));
		return;
	}
	memcpy(p, c->dst_mac, 6);
	memcpy(p + 6, c->src_mac, 6);
	put16(p + 12, c->ethertype);
	/* Payload: byte k of it is k mod 256, so a capture shows where it starts. */
	for (uint32_t k = 0; s->hdr_len + k < max; k++)
		p[s->hdr_len + k] = (uint8_t)k;
	uint64_t sum = 0;
	s->payload_sum[0] = 0;
	for (uint32_t k = 0; s->hdr_len + k < max; k++) {
		sum += (k & 1) ? p[s->hdr_len + k] : (uint32_t)p[s->hdr_len + k] << 8;
		s->payload_sum[k + 1] = (uint32_t)sum;
	}
	if (!e->ip4)
		return;

	static const uint8_t proto[] = {
		[PG_L4_UDP] = IP_PROTO_UDP, [PG_L4_TCP] = IP_PROTO_TCP,
		[PG_L4_ICMP] = IP_PROTO_ICMP, [PG_L4_NONE] = IP_PROTO_EXPERIMENT,
	};
	uint8_t *ip = p + ETH_HDR_LEN;
	uint8_t *l4 = ip + IP4_HDR_LEN;
	ip[0] = 0x45;
	ip[1] = (uint8_t)(c->dscp << 2);
	ip[8] = c->ttl;
	ip[9] = proto[c->proto];
	/* Fixed words: version/ihl/tos and ttl/protocol (id and fragment are 0). */
	e->ip_sum = ((uint32_t)ip[0] << 8 | ip[1]) + ((uint32_t)ip[8] << 8 | ip[9]);

	switch (c->proto) {
	case PG_L4_UDP:
		e->l4_sum = IP_PROTO_UDP;
		break;
	case PG_L4_TCP:
		l4[12] = 5 << 4;  /* data offset: 20 bytes */
		l4[13] = 0x10;    /* ACK */
		put16(l4 + 14, 8192);
		e->l4_sum = IP_PROTO_TCP + (5u << 12 | 0x10) + 8192;
		break;
	case PG_L4_ICMP:
		l4[0] = 8; /* echo request, code 0, identifier 0 */
		e->l4_sum = 8u << 8;
		break;
	case PG_L4_NONE:
		break;
	}
}

/* Resolve a stream's next node to an arc of pg-input in g (graph_add_next
 * reuses an existing arc to the same node). */
static int resolve_next(struct graph *g, int node_index, const char *stream, const char *next,
			uint16_t *next_index, char *err, size_t errlen)
{
	if (graph_node_index(g, next) < 0) {
		snprintf(err, errlen, "pg: stream %s: next node '%s' is not in the graph", stream, next);
		return -ENOENT;
	}
	int r = graph_add_next(g, (uint32_t)node_index, next, err, errlen);
	if (r < 0)
		return r;
	*next_index = (uint16_t)r;
	return 0;
}

/* Start a run: sequences from their first value, the rate bucket empty. */
static void stream_restart(struct pg_stream *s)
{
	/* The random sizes repeat from run to run of a stream (seeded by its name). */
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (const char *n = s->cfg.name; *n; n++)
		seed = (seed ^ (uint8_t)*n) * 0x100000001b3ull;
	s->cur = (struct pg_cursor){ .rng = seed | 1, .size = s->cfg.size_min };
	s->tokens = 0;
	s->last_ticks = cpu_ticks();
	s->n_sent = 0;
}

static void stream_free(struct pg_stream *s)
{
	free(s->tmpl);
	free(s->payload_sum);
	free(s);
}

int pg_attach(struct graph *g, char *err, size_t errlen)
{
	int node_index = graph_node_index(g, "pg-input");
	if (node_index < 0) {
		snprintf(err, errlen, "pg: node pg-input is not in the graph");
		return -ENOENT;
	}
	uint16_t *nexts = calloc(pg_main.n_streams + 1, sizeof(*nexts));
	if (!nexts) {
		snprintf(err, errlen, "pg: out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < pg_main.n_streams; i++) {
		struct pg_stream *s = pg_main.streams[i];
		int r = resolve_next(g, node_index, s->cfg.name, s->cfg.next_node, &nexts[i], err, errlen);
		if (r < 0) {
			free(nexts);
			return r;
		}
	}
	/* The arc a received frame takes while a scheduling class is defined
	 * (device-input's), where the graph has sched-ingress. */
	int sched_next = -1;
	if (graph_node_index(g, "sched-ingress") >= 0 &&
	    (sched_next = graph_add_next(g, (uint32_t)node_index, "sched-ingress", err, errlen)) < 0) {
		free(nexts);
		return sched_next;
	}
	graph_barrier_sync(g);
	for (uint32_t i = 0; i < pg_main.n_streams; i++)
		pg_main.streams[i]->next_index = nexts[i];
	pg_main.node_index = node_index;
	pg_main.sched_next = sched_next;
	pg_main.graph = g;
	graph_barrier_release(g);
	free(nexts);
	return 0;
}

void pg_detach(void)
{
	struct graph *g = pg_main.graph;
	if (!g)
		return;
	graph_barrier_sync(g);
	pg_main.graph = NULL;
	graph_barrier_release(g);
}

int pg_stream_add(const struct pg_stream_config *cfg, char *err, size_t errlen)
{
	int r = pg_stream_config_check(cfg, err, errlen);
	if (r < 0)
		return r;
	if (stream_find(cfg->name, NULL)) {
		snprintf(err, errlen, "pg: stream %s already exists", cfg->name);
		return -EEXIST;
	}
	uint16_t next_index = 0;
	if (pg_main.graph) {
		r = resolve_next(pg_main.graph, pg_main.node_index, cfg->name, cfg->next_node,
				 &next_index, err, errlen);
		if (r < 0)
			return r;
	} else if (!node_registry_find(cfg->next_node)) {
		snprintf(err, errlen, "pg: stream %s: next node '%s' does not exist", cfg->name,
			 cfg->next_node);
		return -ENOENT;
	}

	struct pg_stream *s = aligned_alloc(64, ROUND_UP(sizeof(*s), 64));
	if (s) {
		memset(s, 0, sizeof(*s));
		s->tmpl = aligned_alloc(64, ROUND_UP(cfg->size_max, 64));
		s->payload_sum = calloc(cfg->size_max + 1, sizeof(uint32_t));
	}
	if (!s || !s->tmpl || !s->payload_sum) {
		if (s)
			stream_free(s);
		snprintf(err, errlen, "pg: stream %s: out of memory", cfg->name);
		return -ENOMEM;
	}
	s->cfg = *cfg;
	memset(s->tmpl, 0, ROUND_UP(cfg->size_max, 64));
	stream_build(s);
	s->tokens_per_tick = cfg->rate_pps ? (double)cfg->rate_pps / cpu_ticks_per_second() : 0;
	s->next_index = next_index;
	s->as_received = strcmp(cfg->next_node, "ethernet-input") == 0;
	stream_restart(s);
	s->enabled = cfg->enabled;

	if (pg_main.n_streams == pg_main.n_alloc) {
		uint32_t n = pg_main.n_alloc ? 2 * pg_main.n_alloc : 8;
		struct pg_stream **v = malloc(n * sizeof(*v));
		if (!v) {
			stream_free(s);
			snprintf(err, errlen, "pg: stream %s: out of memory", cfg->name);
			return -ENOMEM;
		}
		if (pg_main.n_streams)
			memcpy(v, pg_main.streams, pg_main.n_streams * sizeof(*v));
		pg_barrier_sync();
		struct pg_stream **old = pg_main.streams;
		pg_main.streams = v;
		pg_main.n_alloc = n;
		pg_barrier_release();
		free(old);
	}
	pg_barrier_sync();
	pg_main.streams[pg_main.n_streams++] = s;
	pg_barrier_release();
	return 0;
}

int pg_stream_enable(const char *name, bool enable)
{
	struct pg_stream *s = stream_find(name, NULL);
	if (!s)
		return -ENOENT;
	pg_barrier_sync();
	if (enable)
		stream_restart(s);
	__atomic_store_n(&s->enabled, enable, __ATOMIC_RELAXED);
	pg_barrier_release();
	return 0;
}

int pg_stream_delete(const char *name)
{
	uint32_t i;
	struct pg_stream *s = stream_find(name, &i);
	if (!s)
		return -ENOENT;
	pg_barrier_sync();
	memmove(&pg_main.streams[i], &pg_main.streams[i + 1],
		(pg_main.n_streams - i - 1) * sizeof(pg_main.streams[0]));
	pg_main.n_streams--;
	pg_barrier_release();
	stream_free(s);
	return 0;
}

void pg_stream_delete_all(void)
{
	while (pg_main.n_streams)
		pg_stream_delete(pg_main.streams[pg_main.n_streams - 1]->cfg.name);
	free(pg_main.streams);
	pg_main.streams = NULL;
	pg_main.n_alloc = 0;
}

uint32_t pg_stream_count(void)
{
	return pg_main.n_streams;
}

int pg_stream_info(uint32_t i, struct pg_stream_info *info)
{
	if (i >= pg_main.n_streams)
		return -ENOENT;
	struct pg_stream *s = pg_main.streams[i];
	memcpy(info->name, s->cfg.name, PG_NAME_MAX);
	info->enabled = __atomic_load_n(&s->enabled, __ATOMIC_RELAXED);
	info->packets_sent = stat_read(&s->n_sent);
	info->packets_total = stat_read(&s->n_total);
	info->bytes_total = stat_read(&s->n_bytes);
	info->config = &s->cfg;
	return 0;
}

int pg_stream_info_by_name(const char *name, struct pg_stream_info *info)
{
	uint32_t i;
	if (!stream_find(name, &i))
		return -ENOENT;
	return pg_stream_info(i, info);
}
