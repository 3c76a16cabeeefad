/* Packets as nodes saw them, written as pcapng (base/pcapng.h): one
 * interface per node, one enhanced packet block per record. Shared by
 * `trace save FILE.pcapng` and the dispatch trace's writer; control side. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/pcapng.h"
#include "graph/graph_private.h"

/* Wall-clock nanoseconds at graph creation, from one reading of both clocks:
 * records carry cpu_ticks, Wireshark wants the time of day. */
static uint64_t created_realtime_ns(struct graph *g)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	double since = graph_ticks_to_seconds(g, cpu_ticks());
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - (uint64_t)(since * 1e9);
}

int graph_pcapng_open(struct graph *g, struct pcapng_file *p, FILE *f, uint32_t snaplen)
{
	/* A block: the packet, its comment and the fixed fields. */
	int rc = pcapng_open(p, f, snaplen + 1024, "sluice");
	g->pcapng_epoch_ns = created_realtime_ns(g);
	for (uint32_t i = 0; !rc && i < g->n_nodes; i++) {
		char desc[96];
		snprintf(desc, sizeof(desc), "sluice graph node %u: packets as %s received them", i,
			 g->nodes[i].reg->name);
		int id = pcapng_add_interface(p, g->nodes[i].reg->name, desc, snaplen);
		rc = id < 0 ? id : 0;
	}
	return rc;
}

int graph_pcapng_write(struct graph *g, struct pcapng_file *p, const struct graph_pcap_rec *rec, const uint8_t *data,
		       const char *extra)
{
	char comment[768];
	const char *node = rec->node_index < g->n_nodes ? g->nodes[rec->node_index].reg->name : "?";
	int n = snprintf(comment, sizeof(comment), "node %s thread %u trace-id %u flags 0x%x", node, rec->thread,
			 rec->id, rec->flags);
	uint32_t err_node;
	const char *reason;
	/* b->error means something only where the packet is dropped. */
	if (!strcmp(node, "error-drop") && graph_error_info(g, rec->error, &err_node, &reason) == 0)
		n += snprintf(comment + n, sizeof(comment) - (size_t)n, " error \"%s: %s\"",
			      g->nodes[err_node].reg->name, reason);
	if (extra && *extra && (size_t)n < sizeof(comment))
		snprintf(comment + n, sizeof(comment) - (size_t)n, "; %s", extra);
	/* One line per record: tshark -T fields prints a comment as it is. */
	for (char *c = comment; (c = strchr(c, '\n'));)
		*c = ' ';
	uint64_t ts = g->pcapng_epoch_ns + (uint64_t)(graph_ticks_to_seconds(g, rec->ticks) * 1e9);
	return pcapng_write_packet(p, rec->node_index, ts, data, rec->caplen, rec->len, comment);
}
