/* The one way every Check suite here runs: all cases, normal output,
 * exit status 1 when any failed or when none ran (CK_RUN_CASE or
 * CK_RUN_SUITE naming a case that no longer exists would otherwise pass
 * an empty run). */
#ifndef SLUICE_TESTS_CHECK_RUN_H
#define SLUICE_TESTS_CHECK_RUN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static inline int check_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int ran = srunner_ntests_run(sr);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (ran == 0) {
		const char *c = getenv("CK_RUN_CASE"), *su = getenv("CK_RUN_SUITE");
		fprintf(stderr, "check: no test ran (CK_RUN_CASE=%s CK_RUN_SUITE=%s): a suite that runs nothing fails\n",
			c ? c : "(unset)", su ? su : "(unset)");
		return 1;
	}
	return failed ? 1 : 0;
}

#endif
