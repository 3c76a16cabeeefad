/* Test helper over the leak finder: what `show buffers` would say, asserted. */
#ifndef SLUICE_TESTS_BUFFER_CHECK_H
#define SLUICE_TESTS_BUFFER_CHECK_H

#include <check.h>
#include <string.h>

#include "graph/buffer.h"

/* Assert that holder `holder` reports exactly n buffers at `where` and that
 * nothing in use is unattributed. Call with the datapath parked. */
static inline void buffer_check_held(const char *holder, const char *where, uint64_t n)
{
	struct buffer_attribution a;
	ck_assert_int_eq(buffer_attribute(&a), 0);
	uint64_t found = 0;
	for (uint32_t i = 0; i < a.n_holdings; i++)
		if (!strcmp(a.holdings[i].holder, holder) && !strcmp(a.holdings[i].where, where))
			found = a.holdings[i].n;
	ck_assert_msg(found == n, "%s %s holds %llu, expected %llu", holder, where, (unsigned long long)found,
		      (unsigned long long)n);
	ck_assert_int_eq(a.n_unattributed, 0);
	buffer_attribution_free(&a);
}

#endif
