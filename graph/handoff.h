/* Single-producer single-consumer rings of 64-byte lines, each line carrying
 * up to 8 buffer indices with their 15-bit flow tags: the one way threads
 * exchange packets (the distributor's burst handshake builds on it).
 *
 * Thread-safety: exactly one producer thread and one consumer thread per
 * ring; statistics may be read from anywhere.
 */
#ifndef SLUICE_GRAPH_HANDOFF_H
#define SLUICE_GRAPH_HANDOFF_H

#include <stdalign.h>
#include <stdint.h>

#define HANDOFF_LINE_SLOTS 8
#define HANDOFF_TAG_MASK 0x7fffu

struct handoff_line {
	uint32_t bi[HANDOFF_LINE_SLOTS];
	uint16_t tag[HANDOFF_LINE_SLOTS]; /* low 15 bits: flow tag */
	uint8_t n;                        /* slots in use, 1..8 */
	uint8_t flags;
	uint16_t pad0;
	uint32_t post;                    /* a mailbox's first line: handoff_mailbox_post */
	uint8_t pad[8];
};
_Static_assert(sizeof(struct handoff_line) == 64, "a handoff line is one cache line");

struct handoff_ring;

struct handoff_stats {
	uint64_t lines_in;
	uint64_t lines_out;
	uint64_t buffers_in;
	uint64_t buffers_out;
	uint64_t congestion; /* enqueue calls that found the ring full */
	uint32_t n_lines;    /* capacity */
	uint32_t used;       /* lines in the ring now */
};

/* A ring of n_lines lines (rounded up to a power of two, >= 2) on numa_node
 * (-1: any). NULL on failure. */
struct handoff_ring *handoff_ring_create(uint32_t n_lines, int numa_node);
/* A mailbox of n_lines lines (rounded up to a power of two, 1 allowed):
 * the same calls as a ring, but each line's own count says full or empty
 * and each side keeps its index to itself, so a handoff moves that one
 * cache line and no index lines, and a consumer finds a line and its
 * packets with one miss where a ring's takes two in a row (the head, then
 * the line). The distributor's worker and reorder handoffs are mailboxes
 * at every depth (docs/distributor.md has the figures). Its enqueue of
 * packed buffers (handoff_enqueue) takes at most 4 lines a call. */
struct handoff_ring *handoff_mailbox_create(uint32_t n_lines, int numa_node);
void handoff_ring_free(struct handoff_ring *r);

/* A mailbox's word back from the consumer to the producer, kept in the
 * first line (bytes no handoff copies): a consumer that posts as it takes
 * that line, and a producer that reads it as it looks for room there, move
 * no cache line for it. Consumer: post v (release); producer: the last
 * value posted (acquire), 0 before any. */
void handoff_mailbox_post(struct handoff_ring *r, uint32_t v);
uint32_t handoff_mailbox_posted(const struct handoff_ring *r);

/* Producer: pack n buffers (tags may be NULL: tag 0) into lines of 8 and
 * publish them. Returns how many buffers were taken; on a full ring the
 * congestion counter is incremented and the caller keeps bi[taken..n). */
uint32_t handoff_enqueue(struct handoff_ring *r, const uint32_t *bi, const uint16_t *tags, uint32_t n);

/* Producer: publish whole lines. Returns lines taken (the caller keeps the rest). */
uint32_t handoff_enqueue_lines(struct handoff_ring *r, const struct handoff_line *lines, uint32_t n);

/* Consumer: take up to max buffers, never splitting a line (so at least 8
 * slots of room are needed to take one). Returns buffers taken. */
uint32_t handoff_dequeue(struct handoff_ring *r, uint32_t *bi, uint16_t *tags, uint32_t max);

/* Consumer: take up to max whole lines. Returns lines taken. */
uint32_t handoff_dequeue_lines(struct handoff_ring *r, struct handoff_line *lines, uint32_t max);

/* Lines currently in the ring (approximate from a third thread). */
uint32_t handoff_count(const struct handoff_ring *r);

void handoff_ring_stats(const struct handoff_ring *r, struct handoff_stats *st);

#endif
