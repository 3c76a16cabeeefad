/* A tcpdump/BPF expression compiled once and evaluated on packets: the
 * filter of `trace add ... filter` and `pcap capture ... filter`.
 *
 * Compiled and evaluated by libpcap (pcap_compile on a dead Ethernet handle,
 * bpf_filter on the bytes), never by a matcher of our own, so an expression
 * means exactly what it means to tcpdump. Evaluation reads the first buffer
 * of a chain only (the packet's wire length is the whole chain's): a test on
 * bytes beyond the first buffer does not match, as when tcpdump reads a
 * capture cut at a snap length.
 *
 * Thread-safety: compile and free on a control thread; match from any
 * thread while the filter stays allocated (callers free it under the graph
 * barrier).
 */
#ifndef SLUICE_GRAPH_PKT_FILTER_H
#define SLUICE_GRAPH_PKT_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "graph/buffer.h"

#define PKT_FILTER_EXPR_MAX 256

struct pkt_filter;

/* Compile expr for Ethernet frames. Returns the filter, or NULL with
 * libpcap's message (pcap_geterr) in err. */
struct pkt_filter *pkt_filter_compile(const char *expr, char *err, size_t errlen);

/* Free a filter (NULL is fine). */
void pkt_filter_free(struct pkt_filter *f);

/* The expression as given. */
const char *pkt_filter_expr(const struct pkt_filter *f);

/* Whether the packet starting at b (a chain: its first buffer's bytes) is
 * accepted by f. */
bool pkt_filter_match(const struct pkt_filter *f, const struct buffer *b);

#endif
