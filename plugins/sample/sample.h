/* The sample plugin (docs/plugins.md): sample-flow, a node placed after
 * ethernet-input on the IPv4 path that counts packets and bytes per flow
 * (source, destination, protocol, ports) and passes every packet on
 * unchanged; `show sample flows [json]`, `clear sample flows`; and a
 * startup.conf section of its own, `sample { max-flows N }`.
 */
#ifndef SLUICE_PLUGINS_SAMPLE_H
#define SLUICE_PLUGINS_SAMPLE_H

#include <stdint.h>

#define SAMPLE_FLOWS_MAX 256 /* per thread: a power of two (the hash's mask) */
#define SAMPLE_PROBE 8       /* slots tried before a flow counts as table-full */

struct sample_flow {
	uint32_t src, dst; /* host byte order */
	uint16_t sport, dport;
	uint8_t proto, used;
	uint64_t packets, bytes;
};

/* Each thread's table: the node's runtime data (node_reg.runtime_data_size). */
struct sample_flows {
	uint32_t n_used;
	struct sample_flow flow[SAMPLE_FLOWS_MAX];
};

/* sample { ... } */
struct sample_conf {
	uint32_t max_flows; /* flows each thread keeps; more count as table-full */
};

extern struct sample_conf sample_conf;

#endif
