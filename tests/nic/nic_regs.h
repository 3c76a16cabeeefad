/* The register-map comparison (tests/nic/test_regs.c): each driver's
 * private register header against its device model's own, written from the
 * datasheet separately (tests/models/{ixgbe,i40e}_model_regs.h). One table per driver,
 * built in its own file because the two models' short names overlap. */
#ifndef SLUICE_TESTS_NIC_REGS_H
#define SLUICE_TESTS_NIC_REGS_H

#include <stddef.h>
#include <stdint.h>

/* One value both headers define: the driver's and the model's reading. */
struct nic_regs_pair {
	const char *what; /* "IXGBE_RDT(5) / RXQ(5, Q_TAIL)" */
	uint64_t driver, model;
};
#define NIC_REGS_PAIR(d, m) { #d " / " #m, (uint64_t)(d), (uint64_t)(m) }

extern const struct nic_regs_pair nic_regs_ixgbe[];
extern const size_t nic_regs_ixgbe_n;
extern const struct nic_regs_pair nic_regs_i40e[];
extern const size_t nic_regs_i40e_n;

#endif
