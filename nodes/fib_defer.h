/* Frees of the FIBs' control-side stores (nodes/fib_src.h, fib_rules.h,
 * linux-cp's route book) kept back while the freeing thread holds the
 * graph barrier, and done after it let go (fib_defer_end).
 *
 * Why: free() is not bounded. A store's old bucket array (megabytes, once
 * mmap'd) goes back to the kernel with munmap, whose TLB shootdown
 * interrupts every CPU the process runs on, the parked datapath's too; a
 * small free may trim the heap's top (sbrk, madvise). Neither belongs in a
 * barrier hold, where the datapath waits for every microsecond of it.
 *
 * Deferring is per thread and opt-in: a thread that never calls
 * fib_defer_begin (the CLI's, tests) frees at once, as before. The blocks
 * waiting are chained through their own first bytes (every block freed
 * here is larger than a pointer and unreachable already), so deferring
 * allocates nothing and has no bound to overflow. */
#ifndef SLUICE_NODES_FIB_DEFER_H
#define SLUICE_NODES_FIB_DEFER_H

#include <stdint.h>

/* From now on this thread's fib_free()s wait for fib_defer_end. Nests. */
void fib_defer_begin(void);

/* free(p) now, or (between fib_defer_begin and fib_defer_end on this
 * thread) later. NULL is a no-op. */
void fib_free(void *p);

/* The outermost end: free what waited. How many blocks that was. */
uint32_t fib_defer_end(void);

/* Blocks this thread has waiting (tests). */
uint32_t fib_defer_pending(void);

#endif
