/*
 * test_base.c - the growable memory and the number parser every room
 * shares (cvc_base.h): growth keeps what was held and refuses sizes that
 * overflow, a buffer stops at its bound, the parsers take all of a field or
 * nothing.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_csv.h"
#include "testutil.h"

Test(base, grow_doubles_from_first_and_keeps_the_elements)
{
	int64_t *a = NULL;
	size_t cap = 0;

	cr_assert_eq(cvc_grow(&a, &cap, 1, sizeof *a, 4), CVC_OK);
	cr_assert_eq(cap, 4);
	for (int i = 0; i < 4; i++)
		a[i] = 100 + i;
	cr_assert_eq(cvc_grow(&a, &cap, 4, sizeof *a, 4), CVC_OK);
	cr_assert_eq(cap, 4, "no growth when the array already holds need");
	cr_assert_eq(cvc_grow(&a, &cap, 5, sizeof *a, 4), CVC_OK);
	cr_assert_eq(cap, 8);
	cr_assert_eq(cvc_grow(&a, &cap, 33, sizeof *a, 4), CVC_OK);
	cr_assert_eq(cap, 64, "doubles until need fits");
	for (int i = 0; i < 4; i++)
		cr_assert_eq(a[i], 100 + i);
	free(a);
}

Test(base, grow_refuses_sizes_that_overflow_and_leaves_the_array)
{
	char *a = NULL;
	size_t cap = 0;

	cr_assert_eq(cvc_grow(&a, &cap, 10, 1, 16), CVC_OK);
	strcpy(a, "kept");
	cr_assert_eq(cvc_grow(&a, &cap, SIZE_MAX / 2 + 2, 1, 16), CVC_ERR_NOMEM);
	cr_assert_eq(cvc_grow(&a, &cap, SIZE_MAX / 8, 16, 16), CVC_ERR_NOMEM);
	cr_assert_eq(cap, 16);
	cr_assert_str_eq(a, "kept");
	free(a);
}

Test(base, buffer_stops_at_its_bound_and_stays_terminated)
{
	cvc_buf b = CVC_BUF_INIT(5);

	cr_assert_str_eq(cvc_buf_str(&b), "");
	cr_assert_eq(cvc_buf_add(&b, "abc", 3), CVC_OK);
	cr_assert_eq(cvc_buf_addc(&b, 'd'), CVC_OK);
	cr_assert_eq(cvc_buf_add(&b, "ef", 2), CVC_ERR_FORMAT, "6 bytes passes max 5");
	cr_assert_eq(b.len, 4);
	cr_assert_str_eq(cvc_buf_str(&b), "abcd");
	cr_assert_eq(cvc_buf_addc(&b, 'e'), CVC_OK);
	cr_assert_eq(cvc_buf_addc(&b, 'f'), CVC_ERR_FORMAT);
	cr_assert_eq(cvc_buf_add(&b, "x", SIZE_MAX), CVC_ERR_FORMAT);
	cr_assert_str_eq(cvc_buf_str(&b), "abcde");
	cvc_buf_reset(&b);
	cr_assert_str_eq(cvc_buf_str(&b), "");
	cr_assert_eq(cvc_buf_add(&b, "12345", 5), CVC_OK);
	cvc_buf_free(&b);
	cr_assert_null(b.p);
	cr_assert_eq(cvc_buf_add(&b, "ok", 2), CVC_OK, "usable again after free");
	cr_assert_str_eq(cvc_buf_str(&b), "ok");
	cvc_buf_free(&b);
}

Test(base, integers_take_all_of_the_field_within_range)
{
	int64_t v = 7;

	cr_assert_eq(cvc_parse_i64(" 42 ", 0, 100, &v), CVC_OK);
	cr_assert_eq(v, 42);
	cr_assert_eq(cvc_parse_i64("-3", -5, 5, &v), CVC_OK);
	cr_assert_eq(v, -3);
	cr_assert_eq(cvc_parse_i64("9223372036854775807", 0, INT64_MAX, &v), CVC_OK);
	cr_assert_eq(v, INT64_MAX);
	v = 7;
	const char *bad[] = {"", "  ", "12abc", "1.5", "0x10 z", "101", "-6", "99999999999999999999"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int64_t lo = strcmp(bad[i], "-6") ? 0 : -5;
		cr_assert_eq(cvc_parse_i64(bad[i], lo, 100, &v), CVC_ERR_FORMAT, "'%s'", bad[i]);
	}
	cr_assert_eq(v, 7, "out is written only on success");
}

Test(base, reals_are_finite_and_take_all_of_the_field)
{
	double v = 7;

	cr_assert_eq(cvc_parse_f64("1e3", &v), CVC_OK);
	cr_assert_float_eq(v, 1000.0, 0);
	cr_assert_eq(cvc_parse_f64(" -0.25\t", &v), CVC_OK);
	cr_assert_float_eq(v, -0.25, 0);
	v = 7;
	const char *bad[] = {"", "nan", "inf", "-inf", "1e999", "1e-400", "3 4", "12%", "."};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		cr_assert_eq(cvc_parse_f64(bad[i], &v), CVC_ERR_FORMAT, "'%s'", bad[i]);
	cr_assert_eq(v, 7, "out is written only on success");
}

Test(base, a_whole_file_is_read_up_to_its_bound_exactly)
{
	const char *dir = tu_tmpdir();
	const char *at = tu_path(dir, "bound.txt");
	char body[200001], err[256] = "", *text = (char *)1;
	size_t len = 7;

	memset(body, 'x', sizeof body);
	cr_assert_eq(tu_write(at, body, 200000), 0);
	cr_assert_eq(cvc_file_read(at, 200000, &text, &len, err, sizeof err), CVC_OK, "%s", err);
	cr_assert_eq(len, 200000, "a file of exactly max bytes is read whole");
	cr_assert_eq(text[len], '\0');
	free(text);
	cr_assert_eq(tu_write(at, body, 200001), 0);
	cr_assert_eq(cvc_file_read(at, 200000, &text, &len, err, sizeof err), CVC_ERR_FORMAT);
	cr_assert_null(text);
	cr_assert(strstr(err, "byte 200000: expected at most 200000 bytes"), "%s", err);
	/* A small bound is exact too (it once read a whole first chunk of 128 KiB). */
	cr_assert_eq(cvc_file_read(at, 10, &text, &len, err, sizeof err), CVC_ERR_FORMAT);
	cr_assert_eq(cvc_file_read(tu_path(dir, "absent.txt"), 10, &text, &len, err, sizeof err),
		     CVC_ERR_NOTFOUND);
	cr_assert(strstr(err, "cannot open"), "%s", err);
}

/* The line-oriented tables (catalog, measured tables, plan) split by the
 * same grammar as the record reader, on one line. */
Test(base, one_line_splits_by_the_csv_grammar)
{
	char line[] = "H100,\"NVIDIA H100, SXM\",\"say \"\"hi\"\"\",,989";
	char *f[6];

	cr_assert_eq(cvc_csv_split(line, f, 6), 5);
	cr_assert_str_eq(f[0], "H100");
	cr_assert_str_eq(f[1], "NVIDIA H100, SXM");
	cr_assert_str_eq(f[2], "say \"hi\"");
	cr_assert_str_eq(f[3], "");
	cr_assert_str_eq(f[4], "989");

	char many[] = "a,b,c,d";
	cr_assert_eq(cvc_csv_split(many, f, 2), 2, "fields past maxf are dropped");
	cr_assert_str_eq(f[1], "b");

	const char *bad[] = {"a,\"open", "a,\"x\"y,b", "a,b\"c", "\"x\"\"", "\""};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char buf[32];

		strcpy(buf, bad[i]);
		cr_assert_eq(cvc_csv_split(buf, f, 6), -1, "'%s'", bad[i]);
	}
}

Test(base, bounded_growth_stops_at_max_elements)
{
	int *a = NULL;
	size_t cap = 0;

	cr_assert_eq(cvc_grow_bounded(&a, &cap, 1, sizeof *a, 100), CVC_OK);
	cr_assert_eq(cap, 64);
	cr_assert_eq(cvc_grow_bounded(&a, &cap, 65, sizeof *a, 100), CVC_OK);
	cr_assert_eq(cap, 100, "doubling is clamped to max");
	cr_assert_eq(cvc_grow_bounded(&a, &cap, 100, sizeof *a, 100), CVC_OK);
	cr_assert_eq(cvc_grow_bounded(&a, &cap, 101, sizeof *a, 100), CVC_ERR_NOMEM);
	cr_assert_eq(cap, 100);
	free(a);
}

/* The string helpers, each case with the answer it must give. */
Test(base, suffixes_and_bar_separated_words)
{
	static const struct {
		int (*fn)(const char *, const char *);
		const char *s, *arg;
		int want;
	} cases[] = {
		{cvc_str_ends, "trace.json.gz", ".gz", 1},
		{cvc_str_ends, ".gz", ".gz", 1},
		{cvc_str_ends, "x", "", 1},
		{cvc_str_ends, "gz", ".gz", 0},
		{cvc_str_ends, "a.gz.json", ".gz", 0},
		{cvc_str_in_list, "auto|ring|tree", "ring", 1},
		{cvc_str_in_list, "auto|ring|tree", "tree", 1},
		{cvc_str_in_list, "auto", "auto", 1},
		{cvc_str_in_list, "auto|ring|tree", "rin", 0},
		{cvc_str_in_list, "auto|ring|tree", "ring|tree", 0},
		{cvc_str_in_list, "", "x", 0},
		{cvc_str_in_list, "a||b", "", 1}, /* an empty word matches an empty entry */
	};

	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		cr_assert_eq(cases[i].fn(cases[i].s, cases[i].arg), cases[i].want, "case %zu: '%s', '%s'",
			     i, cases[i].s, cases[i].arg);
}

/* One definition per share (issue 35): comm and exposed over the step,
 * comm over compute, and no share of a step that has no length. */
Test(base, shares_have_one_denominator_each)
{
	cvc_shares s;

	cvc_shares_of(4.0, 3.0, 2.0, 0.5, &s);
	cr_expect_float_eq(s.comm_share, 0.5, 1e-15);
	cr_expect_float_eq(s.exposed_share, 0.125, 1e-15);
	cr_expect_float_eq(s.comm_to_compute, 2.0 / 3.0, 1e-15);
	cvc_shares_of(0.0, 0.0, 2.0, 0.5, &s);
	cr_expect(isnan(s.comm_share) && isnan(s.exposed_share) && isnan(s.comm_to_compute));
}

/* The plain number as printf's "%.*f" writes it, trailing zeros and a bare
 * point dropped, "-0" as "0": what cvc_fmt_plain() wrote before its fast
 * path, kept here as the reference. */
static void plain_ref(double v, int sig, char *buf, size_t len)
{
	double a = fabs(v);
	int d;
	char *dot, *e;

	buf[0] = '\0';
	if (!isfinite(v))
		return;
	if (a == 0) {
		snprintf(buf, len, "0");
		return;
	}
	d = sig - 1 - (int)floor(log10(a));
	d = d < 0 ? 0 : d > 30 ? 30 : d;
	snprintf(buf, len, "%.*f", d, v);
	if ((dot = strchr(buf, '.'))) {
		e = buf + strlen(buf);
		while (e > dot + 1 && e[-1] == '0')
			*--e = '\0';
		if (e == dot + 1)
			*dot = '\0';
	}
	if (!strcmp(buf, "-0"))
		snprintf(buf, len, "0");
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Claim: cvc_fmt_plain() writes what printf's "%.*f" writes, byte for byte,
 * though it rounds most numbers without printf: random doubles from 2^-40
 * to 2^40 of both signs at 1 to 17 significant digits, the exact halves
 * printf rounds to even (1234567.5, 0.125), their neighbours one ulp away,
 * whole numbers, and a buffer too short for the number.
 */
Test(base, plain_numbers_are_printfs_byte_for_byte)
{
	static const double halves[] = {0.125, 0.375, 2.5, 3.5, 1234567.5, 1234568.5, 0.0625,
					99999.5, 999999.5, 1e6 + 0.5, 8388608.5, 0.5, 1.5};
	uint64_t s = 0x9e3779b97f4a7c15u;
	char got[64], want[64];
	int bad = 0;

	for (int i = 0; i < 300000 && bad < 5; i++) {
		uint64_t r = xorshift(&s);
		double m = 1 + (double)(r >> 12) / 4503599627370496.0; /* [1, 2) */
		double v = ldexp(m, (int)(r % 81) - 40) * (r & 2048 ? -1 : 1);
		int sig = 1 + (int)((r >> 3) % 17);

		if (i % 4 == 1)
			v = nearbyint(v); /* whole numbers */
		if (i % 4 == 2) /* a number of 6 or fewer digits, as rounded counts are */
			v = nearbyint(v * 1e3) / 1e3;
		cvc_fmt_plain(v, sig, got, sizeof got);
		plain_ref(v, sig, want, sizeof want);
		if (strcmp(got, want)) {
			cr_expect_str_eq(got, want, "%.17g at %d digits", v, sig);
			bad++;
		}
	}
	for (size_t i = 0; i < sizeof halves / sizeof halves[0]; i++)
		for (int sig = 1; sig <= 9; sig++)
			for (int k = -1; k <= 1; k++) {
				double v = k ? nextafter(halves[i], k * INFINITY) : halves[i];

				cvc_fmt_plain(v, sig, got, sizeof got);
				plain_ref(v, sig, want, sizeof want);
				cr_expect_str_eq(got, want, "%.17g at %d digits", v, sig);
				cvc_fmt_plain(-v, sig, got, sizeof got);
				plain_ref(-v, sig, want, sizeof want);
				cr_expect_str_eq(got, want, "%.17g at %d digits", -v, sig);
			}
	/* past 2^30, where only whole numbers are written without printf: a
	 * model's FLOPs, a run's tokens, up to 2^64 and past it, and their
	 * halves (printf rounds those to even) */
	for (int i = 0; i < 100000 && bad < 5; i++) {
		uint64_t r = xorshift(&s);
		double m = 1 + (double)(r >> 12) / 4503599627370496.0;
		double v = ldexp(m, 30 + (int)(r % 40)) * (r & 2048 ? -1 : 1);
		int sig = 1 + (int)((r >> 3) % 17);

		if (i % 3 == 1)
			v = nearbyint(v);
		if (i % 3 == 2)
			v = floor(v) + 0.5; /* a half where one is representable */
		cvc_fmt_plain(v, sig, got, sizeof got);
		plain_ref(v, sig, want, sizeof want);
		if (strcmp(got, want)) {
			cr_expect_str_eq(got, want, "%.17g at %d digits", v, sig);
			bad++;
		}
	}
	cvc_fmt_plain(-0.0, 6, got, sizeof got);
	cr_expect_str_eq(got, "0");
	cvc_fmt_plain(0, 6, got, 1);
	cr_expect_str_eq(got, "");
	cvc_fmt_plain(1234.5678, 8, got, 5);
	plain_ref(1234.5678, 8, want, 5);
	cr_expect_str_eq(got, want);
}

/*
 * Claim: cvc_fmt_whole() writes what printf's "%.0f" writes: halves to
 * even (12.5 is "12", 13.5 "14"), "-0" kept, numbers past its fast path,
 * and random percentages.
 */
Test(base, whole_numbers_are_printfs_byte_for_byte)
{
	static const double edge[] = {
		12.5, 13.5, 0.5, 1.5, -0.4, -2.5, 0, 99.5, 1e12 + 0.5, 3e9, 1073741823.5,
		1073741824.5, 0.49999999999999994, 4503599627370494.5, 4503599627370495.5,
		9007199254740993.0, 1.8446744073709550e19, 1.8446744073709552e19, -3.5e15};
	uint64_t s = 0x243f6a8885a308d3u;
	char got[64], want[64];

	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
		snprintf(want, sizeof want, "%.0f", edge[i]);
		cr_expect_str_eq(cvc_fmt_whole(edge[i], got, sizeof got), want, "%.17g", edge[i]);
	}
	for (int i = 0; i < 100000; i++) {
		uint64_t r = xorshift(&s);
		double v = (double)(r >> 11) / 9007199254740992.0 * 200 - 50;

		if (i % 2)
			v = nearbyint(v * 2) / 2; /* the halves */
		snprintf(want, sizeof want, "%.0f", v);
		if (strcmp(cvc_fmt_whole(v, got, sizeof got), want)) {
			cr_expect_str_eq(got, want, "%.17g", v);
			break;
		}
	}
}
