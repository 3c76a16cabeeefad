/* tcpdump expressions on buffers (see pkt_filter.h), by libpcap. */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/pkt_filter.h"

/* bpf_filter's snap length: any offset a program may load (pcap-filter(7)
 * expressions are compiled for this length on the dead handle). */
#define PKT_FILTER_SNAPLEN 65535

struct pkt_filter {
	struct bpf_program prog;
	char expr[PKT_FILTER_EXPR_MAX];
};

struct pkt_filter *pkt_filter_compile(const char *expr, char *err, size_t errlen)
{
	if (strlen(expr) >= PKT_FILTER_EXPR_MAX) {
		snprintf(err, errlen, "filter longer than %d bytes", PKT_FILTER_EXPR_MAX - 1);
		return NULL;
	}
	struct pkt_filter *f = calloc(1, sizeof(*f));
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, PKT_FILTER_SNAPLEN);
	if (!f || !dead) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* Optimised, no netmask: `ip broadcast` needs one and is refused. */
	if (pcap_compile(dead, &f->prog, expr, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, errlen, "%s", pcap_geterr(dead));
		goto fail;
	}
	snprintf(f->expr, sizeof(f->expr), "%s", expr);
	pcap_close(dead);
	return f;
fail:
	if (dead)
		pcap_close(dead);
	free(f);
	return NULL;
}

void pkt_filter_free(struct pkt_filter *f)
{
	if (!f)
		return;
	pcap_freecode(&f->prog);
	free(f);
}

const char *pkt_filter_expr(const struct pkt_filter *f)
{
	return f->expr;
}

bool pkt_filter_match(const struct pkt_filter *f, const struct buffer *b)
{
	uint32_t first = b->current_length;
	uint32_t wire = first;
	if (b->flags & BUFFER_F_NEXT_PRESENT)
		wire += b->total_length_not_including_first;
	return bpf_filter(f->prog.bf_insns, buffer_data((struct buffer *)b), wire, first) != 0;
}
