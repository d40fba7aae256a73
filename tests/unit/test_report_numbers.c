/*
 * test_report_numbers.c - the numbers of the report's tables as written to
 * CSV and JSON (reports/table.c): exact, and never with an exponent, so a
 * person reads the same figure a script does (issue 35).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_report.h"

/* The report's CSV and JSON numbers read back exactly and never use an
 * exponent (issue 35: headline.csv carried 5.4999999999999494e-05). */
Test(report_numbers, exact_without_exponent)
{
	static const char *const cols[] = {"a", "b", "c", "d"};
	static const double v[] = {5.4999999999999494e-05, 4515923.7, 1.25e-7, 4.5e20};
	cvc_rep_table *t = cvc_rep_table_new("n", NULL, 4, cols);
	char *csv = NULL, *json = NULL;
	size_t n = 0, nj = 0;
	FILE *f;

	cr_assert(t && cvc_rep_table_add_row(t) == 0);
	for (size_t c = 0; c < 4; c++)
		cvc_rep_table_set_num(t, 0, c, v[c]);
	f = open_memstream(&csv, &n);
	cvc_rep_table_write_csv(f, t);
	fclose(f);
	f = open_memstream(&json, &nj);
	cvc_rep_table_write_json(f, t);
	fclose(f);
	cr_expect_str_eq(csv, "a,b,c,d\n0.000054999999999999494,4515923.7,0.000000125,"
			      "450000000000000000000\n");
	cr_expect(strstr(json, "\"a\":0.000054999999999999494"), "%s", json);
	cr_expect_null(strchr(json, 'e'), "%s", json);
	free(csv);
	free(json);
	cvc_rep_table_free(t);
}
