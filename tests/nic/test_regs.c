/* The drivers' register headers against their device models' own (written
 * from the datasheets separately, tests/models/{ixgbe,i40e}_model_regs.h): every value
 * both use must agree, or one of them misread the datasheet. The models'
 * sources must not include a driver's register header (a shared misreading
 * would then pass every other suite). */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tests/check_run.h"
#include "tests/nic/nic_regs.h"

/* Mismatches in t[0..n), each described in out; how many. */
static uint32_t compare(const struct nic_regs_pair *t, size_t n, char *out, size_t len)
{
	uint32_t bad = 0;
	size_t o = 0;
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i].driver == t[i].model)
			continue;
		bad++;
		if (o < len)
			o += (size_t)snprintf(out + o, len - o, "  %s: driver 0x%" PRIx64 ", model 0x%" PRIx64 "\n",
					      t[i].what, t[i].driver, t[i].model);
	}
	return bad;
}

/* Every pair of t agrees, and the table is not a token one. */
static void agree(const char *driver, const struct nic_regs_pair *t, size_t n)
{
	char out[4096];
	ck_assert_uint_ge(n, 100);
	uint32_t bad = compare(t, n, out, sizeof(out));
	ck_assert_msg(bad == 0, "%s: %u values differ between the driver's and the model's reading:\n%s", driver, bad,
		      out);
}

START_TEST(ixgbe_headers_agree)
{
	agree("ixgbe", nic_regs_ixgbe, nic_regs_ixgbe_n);
}
END_TEST

START_TEST(i40e_headers_agree)
{
	agree("i40e", nic_regs_i40e, nic_regs_i40e_n);
}
END_TEST

/* The comparison itself fails on a mismatch and names it. */
START_TEST(mismatch_is_reported)
{
	const struct nic_regs_pair t[] = {
		{ "RDT(0) / RXQ(0, Q_TAIL)", 0x01018, 0x01018 },
		{ "QRX_TAIL(0) / R_QRX_TAIL(0)", 0x128000, 0x128004 },
	};
	char out[256];
	ck_assert_uint_eq(compare(t, 2, out, sizeof(out)), 1);
	ck_assert_str_eq(out, "  QRX_TAIL(0) / R_QRX_TAIL(0): driver 0x128000, model 0x128004\n");
}
END_TEST

/* No model source includes a driver's register or private header. */
START_TEST(models_keep_their_own_reading)
{
	DIR *d = opendir(NIC_MODELS_DIR);
	ck_assert_msg(d, "%s", NIC_MODELS_DIR);
	struct dirent *e;
	uint32_t files = 0;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 3 || (strcmp(e->d_name + n - 2, ".c") && strcmp(e->d_name + n - 2, ".h")))
			continue;
		char path[512], line[512];
		snprintf(path, sizeof(path), "%s/%s", NIC_MODELS_DIR, e->d_name);
		FILE *f = fopen(path, "r");
		ck_assert_ptr_nonnull(f);
		files++;
		for (uint32_t ln = 1; fgets(line, sizeof(line), f); ln++)
			ck_assert_msg(!(strstr(line, "#include") &&
					(strstr(line, "drivers/ixgbe/") || strstr(line, "drivers/i40e/"))),
				      "%s:%u includes a driver's header: %s", e->d_name, ln, line);
		fclose(f);
	}
	closedir(d);
	ck_assert_uint_ge(files, 6);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nic_regs");
	TCase *tc = tcase_create("regs");
	tcase_add_test(tc, ixgbe_headers_agree);
	tcase_add_test(tc, i40e_headers_agree);
	tcase_add_test(tc, mismatch_is_reported);
	tcase_add_test(tc, models_keep_their_own_reading);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
