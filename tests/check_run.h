/* The one way every Check suite here runs: all cases, normal output,
 * exit status 1 when any failed. */
#ifndef SLUICE_TESTS_CHECK_RUN_H
#define SLUICE_TESTS_CHECK_RUN_H

#include <check.h>

static inline int check_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
