/* A one-thread graph of every registered node with a dual-stack
 * interface pair, for the hardening corpus and the packet fuzz harness:
 *
 *   host A 10.1.0.2 -- a 10.1.0.1/24 [sluice] b 10.2.0.1/24 -- host B 10.2.0.2
 *   2001:db8:1::2      2001:db8:1::1/64    2001:db8:2::1/64     2001:db8:2::2
 *                      c (L2, cross-connected to b)
 *   routes: 10.66.0.0/16 blackhole, 10.67.0.0/16 unreachable, 10.68.0.0/16
 *   prohibit, 10.9.0.0/16 via A and via B (ECMP); 2001:db8:66::/48
 *   blackhole, 2001:db8:67::/48 unreachable, 2001:db8:68::/48 prohibit
 *
 * a, b and c are null-driver interfaces (tx counted, nothing received);
 * A's and B's MACs are known before the first packet (IPv6: static
 * neighbours; no DAD probes, ip6_dad_transmits 0); a and b have their
 * EUI-64 link-local addresses; no IPv6 default route. A test input node
 * (hardening-input, traceable) hands injected frames to ethernet-input, or
 * to sched-ingress while a scheduling class is defined, as device-input
 * does; fini removes the classes. Not thread-safe: one user.
 */
#ifndef SLUICE_TESTS_FUZZ_PKT_GRAPH_H
#define SLUICE_TESTS_FUZZ_PKT_GRAPH_H

#include <stddef.h>
#include <stdint.h>

struct graph;

enum pkt_port { PKT_PORT_A = 0, PKT_PORT_B, PKT_PORT_C, PKT_N_PORTS };

/* Bring the graph up. 0, or -1 with the reason in err. */
int pkt_graph_init(char *err, size_t errlen);
/* Tear it down; returns the buffers still in use just before the pools
 * are freed (0 when nothing leaked). */
uint32_t pkt_graph_fini(void);
struct graph *pkt_graph(void);

/* Queue one frame received on port (PKT_N_PORTS and above: an rx
 * interface that does not exist). Frames longer than one buffer are
 * chained. Returns 0, or -1 when no buffer was left. */
int pkt_graph_inject(uint32_t port, const uint8_t *bytes, uint32_t len);
/* Run the graph until everything queued has been dispatched. */
void pkt_graph_run(void);
/* The interface index of port (< PKT_N_PORTS). */
uint32_t pkt_graph_if_index(uint32_t port);
/* Packets sent out of port since init. */
uint64_t pkt_graph_tx(uint32_t port);

/* The packet harness's input: records of [port: 1 byte][length: 2 bytes,
 * big-endian][frame], the last one cut to what is left; each record is
 * injected and the graph run once at the end (and whenever a frame's worth
 * is queued). */
void pkt_graph_feed(const uint8_t *data, size_t size);

#endif
