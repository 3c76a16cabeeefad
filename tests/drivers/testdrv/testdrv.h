/* testdrv: a driver for tests only, built as a real driver is (its folder,
 * its meson line, DEV_DRIVER_REGISTER; nothing else in the tree names it).
 * Its "wire" is memory the test reaches through these calls.
 */
#ifndef SLUICE_TESTS_TESTDRV_H
#define SLUICE_TESTS_TESTDRV_H

#include <stdint.h>

#include "drivers/device.h"

#define TESTDRV_MAX_PKTS 64
#define TESTDRV_MAX_LEN 256

/* Queue one frame for rx queue 0 of dev: the next poll receives it.
 * 0, or -ENOSPC when TESTDRV_MAX_PKTS are waiting. */
int testdrv_inject(struct device *dev, const uint8_t *bytes, uint16_t len);

/* The i-th frame dev has sent (in order) and its length, or NULL. */
const uint8_t *testdrv_sent(const struct device *dev, uint32_t i, uint16_t *len);
uint32_t testdrv_n_sent(const struct device *dev);

#endif
