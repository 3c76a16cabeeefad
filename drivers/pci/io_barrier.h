/* I/O barriers for the NIC drivers: the ordering between the CPU's stores
 * and loads of DMA memory (descriptor rings, buffers, the HMC, the admin
 * queue) and the device, which C11 atomics do not give (they order normal
 * memory between CPUs, not memory against an MMIO access or a device's DMA).
 *
 *   pci_io_wmb()  before a tail (doorbell) write: every descriptor and
 *                 buffer store before it is visible to the device before
 *                 the device sees the tail move.
 *   pci_io_rmb()  after a descriptor-done read: the rest of the descriptor
 *                 and the buffer are read after the DD bit, not from before
 *                 the device wrote them.
 *
 * x86-64: stores are not reordered with other stores and loads not with
 * other loads, and a store to uncached (UC) MMIO is not passed by earlier
 * write-back stores (Intel SDM vol. 3A, 9.2.2 memory ordering in P6 and
 * later families; 12.3 memory types), so both are compiler barriers.
 * aarch64: normal memory is weakly ordered; a DMB over the outer shareable
 * domain (where the device's coherent DMA observes memory) orders stores
 * before the device-memory store (DMB OSHST) and the DD load before later
 * loads (DMB OSHLD) (Arm Architecture Reference Manual, B2.3 "Definition of
 * the Arm memory model", and C6.2 DMB). These are the barriers Linux calls
 * dma_wmb()/dma_rmb() and that its writel() puts before the store.
 * Anything else does not build: a port must choose its barriers.
 */
#ifndef SLUICE_DRIVERS_PCI_IO_BARRIER_H
#define SLUICE_DRIVERS_PCI_IO_BARRIER_H

#if defined(__x86_64__)
static inline void pci_io_wmb(void)
{
	__asm__ __volatile__("" ::: "memory");
}
static inline void pci_io_rmb(void)
{
	__asm__ __volatile__("" ::: "memory");
}
#elif defined(__aarch64__)
static inline void pci_io_wmb(void)
{
	__asm__ __volatile__("dmb oshst" ::: "memory");
}
static inline void pci_io_rmb(void)
{
	__asm__ __volatile__("dmb oshld" ::: "memory");
}
#else
#error "drivers/pci/io_barrier.h: no I/O barriers for this architecture (x86-64 and aarch64 only)"
#endif

#endif
