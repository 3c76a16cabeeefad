/* tcp-order: did every TCP stream leave in the order it arrived?
 *
 *   tcp-order INGRESS.pcap EGRESS.pcap
 *
 * Reads the IPv4 TCP packets of two captures (Ethernet, optionally one VLAN
 * tag) and lists, per stream (the 4-tuple, one direction), the segments as
 * (sequence number, payload length, IP id). A stream passes when its egress
 * list is its ingress list with some entries left out: nothing reordered,
 * duplicated or invented. Retransmissions carry a new IP id, so they are
 * entries of their own.
 *
 * Prints one line per stream and a total line
 *   total: streams S ingress I egress E missing M
 * and exits 0 when every stream passes, 1 when one does not (naming the
 * first egress segment out of place), 2 on bad input.
 */
#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STREAMS 1024

struct seg {
	uint32_t seq;
	uint16_t len;
	uint16_t ip_id;
};

struct seg_list {
	struct seg *v;
	size_t n, cap;
};

struct stream {
	uint32_t saddr, daddr; /* network order */
	uint16_t sport, dport; /* host order */
	struct seg_list in, out;
};

static struct stream streams[MAX_STREAMS];
static uint32_t n_streams;

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static struct stream *stream_get(uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport)
{
	for (uint32_t i = 0; i < n_streams; i++) {
		struct stream *s = &streams[i];
		if (s->saddr == saddr && s->daddr == daddr && s->sport == sport && s->dport == dport)
			return s;
	}
	if (n_streams == MAX_STREAMS) {
		fprintf(stderr, "tcp-order: more than %d streams\n", MAX_STREAMS);
		exit(2);
	}
	struct stream *s = &streams[n_streams++];
	*s = (struct stream){ .saddr = saddr, .daddr = daddr, .sport = sport, .dport = dport };
	return s;
}

static void seg_push(struct seg_list *l, struct seg s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v) {
			fprintf(stderr, "tcp-order: out of memory\n");
			exit(2);
		}
	}
	l->v[l->n++] = s;
}

/* One frame: appended to its stream's ingress or egress list when it is
 * IPv4 TCP with its headers captured. */
static void frame(const uint8_t *p, uint32_t caplen, bool egress)
{
	uint32_t off = 12;
	if (caplen < 14)
		return;
	uint16_t type = be16(p + off);
	if (type == 0x8100 && caplen >= 18) {
		off += 4;
		type = be16(p + off);
	}
	off += 2;
	if (type != 0x0800 || caplen < off + 20 || (p[off] >> 4) != 4 || p[off + 9] != 6)
		return;
	const uint8_t *ip = p + off;
	uint32_t ihl = (ip[0] & 0xfu) * 4;
	if (ihl < 20 || caplen < off + ihl + 20)
		return;
	const uint8_t *tcp = ip + ihl;
	uint32_t doff = (uint32_t)(tcp[12] >> 4) * 4;
	uint32_t total = be16(ip + 2);
	if (total < ihl + doff)
		return;
	uint32_t saddr, daddr;
	memcpy(&saddr, ip + 12, 4);
	memcpy(&daddr, ip + 16, 4);
	struct stream *s = stream_get(saddr, daddr, be16(tcp), be16(tcp + 2));
	struct seg g = { .seq = be32(tcp + 4), .len = (uint16_t)(total - ihl - doff), .ip_id = be16(ip + 4) };
	seg_push(egress ? &s->out : &s->in, g);
}

static void read_capture(const char *path, bool egress)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	if (!pc) {
		fprintf(stderr, "tcp-order: %s: %s\n", path, err);
		exit(2);
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		fprintf(stderr, "tcp-order: %s: not an Ethernet capture\n", path);
		exit(2);
	}
	struct pcap_pkthdr *h;
	const uint8_t *p;
	int rc;
	while ((rc = pcap_next_ex(pc, &h, &p)) == 1)
		frame(p, h->caplen, egress);
	if (rc == PCAP_ERROR)
		fprintf(stderr, "tcp-order: %s: %s (reading what came before)\n", path, pcap_geterr(pc));
	pcap_close(pc);
}

static bool seg_eq(const struct seg *a, const struct seg *b)
{
	return a->seq == b->seq && a->len == b->len && a->ip_id == b->ip_id;
}

static void stream_name(const struct stream *s, char *buf, size_t len)
{
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &s->saddr, a, sizeof(a));
	inet_ntop(AF_INET, &s->daddr, b, sizeof(b));
	snprintf(buf, len, "%s:%u > %s:%u", a, s->sport, b, s->dport);
}

/* Whether s->out is s->in with entries left out; on failure says which
 * egress segment is out of place and why. */
static bool stream_check(const struct stream *s, const char *name)
{
	size_t j = 0;
	for (size_t i = 0; i < s->out.n; i++) {
		const struct seg *e = &s->out.v[i];
		while (j < s->in.n && !seg_eq(&s->in.v[j], e))
			j++;
		if (j < s->in.n) {
			j++;
			continue;
		}
		bool earlier = false;
		for (size_t k = 0; k < s->in.n && !earlier; k++)
			earlier = seg_eq(&s->in.v[k], e);
		printf("FAIL %s: egress segment %zu (seq %u len %u id %u) %s\n", name, i, e->seq, e->len, e->ip_id,
		       earlier ? "left after a segment that arrived later (reordered or duplicated)"
			       : "never arrived at ingress");
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: tcp-order INGRESS.pcap EGRESS.pcap\n");
		return 2;
	}
	read_capture(argv[1], false);
	read_capture(argv[2], true);
	size_t in = 0, out = 0;
	bool ok = true;
	for (uint32_t i = 0; i < n_streams; i++) {
		const struct stream *s = &streams[i];
		char name[64];
		stream_name(s, name, sizeof(name));
		bool pass = stream_check(s, name);
		printf("%s %s: ingress %zu egress %zu missing %zd\n", pass ? "ok" : "FAIL", name, s->in.n, s->out.n,
		       (ssize_t)s->in.n - (ssize_t)s->out.n);
		ok &= pass;
		in += s->in.n;
		out += s->out.n;
	}
	printf("total: streams %u ingress %zu egress %zu missing %zd\n", n_streams, in, out, (ssize_t)in - (ssize_t)out);
	for (uint32_t i = 0; i < n_streams; i++) {
		free(streams[i].in.v);
		free(streams[i].out.v);
	}
	return ok ? 0 : 1;
}
