/* The exit report: the lines the daemon logs as it shuts down, after the
 * datapath stopped. */
#ifndef SLUICE_APP_EXIT_REPORT_H
#define SLUICE_APP_EXIT_REPORT_H

#include <stdint.h>

struct graph;

/* Per node, vectors and calls summed over threads, and the packets that
 * entered the graph (interfaces' rx and generator streams), each once. */
void app_log_node_counters(struct graph *g);

/* Per buffer pool what is free, cached and in use, and who holds what is
 * not back (a holder's subsystem did not release it; "unattributed" was
 * leaked). Returns the buffers not back in their pools. */
uint64_t app_log_buffer_accounting(void);

#endif
