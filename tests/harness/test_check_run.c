/* check_run_suite itself: a run that executed no test fails. Run once as
 * is (its one case runs and passes) and once with CK_RUN_CASE naming a case
 * that does not exist, as a renamed case would leave a meson test's
 * environment (tests/meson.build: that run must fail). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_run.h"

static int cases_run;

START_TEST(the_case_runs)
{
	cases_run++;
	/* Reached only when the filter selects this case (or none is set). */
	const char *c = getenv("CK_RUN_CASE");
	ck_assert(c == NULL || strcmp(c, "present") == 0);
	ck_assert_int_eq(cases_run, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("check-run");
	TCase *tc = tcase_create("present");
	tcase_add_test(tc, the_case_runs);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
