/* test_intervals.c - union / intersection lengths and the streaming merger. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_analyze.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int64_t uni(const cvc_ival *in, size_t n)
{
	cvc_ival tmp[64];

	cr_assert(n <= N(tmp));
	if (n)
		memcpy(tmp, in, n * sizeof *in);
	return cvc_ivals_union_ns(tmp, n);
}

Test(intervals, empty)
{
	cr_expect_eq(cvc_ivals_union_ns(NULL, 0), 0);
	cr_expect_eq(cvc_ivals_normalize(NULL, 0), 0);
	cr_expect_eq(cvc_ivals_intersect_ns(NULL, 0, NULL, 0), 0);
}

Test(intervals, single_and_disjoint)
{
	cvc_ival a[] = {{0, 10}};
	cvc_ival b[] = {{0, 1}, {3, 4}, {10, 20}};

	cr_expect_eq(uni(a, N(a)), 10);
	cr_expect_eq(uni(b, N(b)), 12);
}

Test(intervals, nested)
{
	/* [0,10) holds [2,5) and [3,4): the union is the outer one. */
	cvc_ival a[] = {{2, 5}, {0, 10}, {3, 4}};

	cr_expect_eq(uni(a, N(a)), 10);
	cr_expect_eq(cvc_ivals_normalize(a, N(a)), 1);
	cr_expect_eq(a[0].start_ns, 0);
	cr_expect_eq(a[0].end_ns, 10);
}

Test(intervals, touching_merge)
{
	cvc_ival a[] = {{5, 10}, {0, 5}, {10, 12}};
	size_t n = cvc_ivals_normalize(a, N(a));

	cr_expect_eq(n, 1, "touching intervals merge into one, got %zu", n);
	cr_expect_eq(a[0].start_ns, 0);
	cr_expect_eq(a[0].end_ns, 12);
}

Test(intervals, identical)
{
	cvc_ival a[] = {{3, 7}, {3, 7}, {3, 7}};

	cr_expect_eq(uni(a, N(a)), 4);
}

Test(intervals, zero_length_and_inverted)
{
	cvc_ival a[] = {{5, 5}, {7, 3}, {1, 2}, {9, 9}};
	size_t n;

	cr_expect_eq(uni(a, N(a)), 1);
	n = cvc_ivals_normalize(a, N(a));
	cr_expect_eq(n, 1);
	/* A zero-length interval inside another changes nothing. */
	{
		cvc_ival b[] = {{0, 10}, {4, 4}};

		cr_expect_eq(uni(b, N(b)), 10);
	}
}

Test(intervals, negative_times)
{
	cvc_ival a[] = {{-10, -5}, {-7, 2}};

	cr_expect_eq(uni(a, N(a)), 12);
}

Test(intervals, intersect_cases)
{
	cvc_ival a[] = {{0, 10}}, b[] = {{5, 15}};
	cvc_ival c[] = {{0, 5}}, d[] = {{5, 10}};
	cvc_ival e[] = {{0, 100}}, f[] = {{10, 20}, {30, 35}, {90, 120}};
	cvc_ival g[] = {{0, 4}, {6, 10}, {12, 20}}, h[] = {{2, 7}, {9, 13}, {19, 30}};

	cr_expect_eq(cvc_ivals_intersect_ns(a, 1, b, 1), 5);
	cr_expect_eq(cvc_ivals_intersect_ns(c, 1, d, 1), 0, "touching: no overlap");
	cr_expect_eq(cvc_ivals_intersect_ns(e, 1, f, 3), 10 + 5 + 10, "nested");
	cr_expect_eq(cvc_ivals_intersect_ns(f, 3, e, 1), 25, "symmetric");
	/* [2,4)+[6,7)+[9,10)+[12,13)+[19,20) = 2+1+1+1+1 */
	cr_expect_eq(cvc_ivals_intersect_ns(g, 3, h, 3), 6);
	cr_expect_eq(cvc_ivals_intersect_ns(a, 1, a, 1), 10, "identical");
	cr_expect_eq(cvc_ivals_intersect_ns(a, 1, NULL, 0), 0);
}

Test(intervals, merger_streaming)
{
	cvc_merger m;

	cvc_merger_init(&m);
	cr_expect_eq(cvc_merger_total(&m), 0);
	cr_expect_eq(cvc_merger_add(&m, 0, 10), CVC_OK);
	cr_expect_eq(cvc_merger_add(&m, 2, 5), CVC_OK);   /* nested */
	cr_expect_eq(cvc_merger_add(&m, 10, 12), CVC_OK); /* touching */
	cr_expect_eq(cvc_merger_add(&m, 12, 12), CVC_OK); /* zero-length */
	cr_expect_eq(cvc_merger_total(&m), 12);
	cr_expect_eq(cvc_merger_add(&m, 20, 25), CVC_OK);
	cr_expect_eq(cvc_merger_add(&m, 20, 25), CVC_OK); /* identical */
	cr_expect_eq(cvc_merger_total(&m), 17);
	cr_expect_eq(cvc_merger_add(&m, 1, 100), CVC_ERR_USAGE, "unsorted input is refused");
	cr_expect_eq(cvc_merger_total(&m), 17, "and ignored");
}

/* Brute force: covered[t] for every integer t of [0, T). */
static void paint(unsigned char *grid, int64_t T, const cvc_ival *iv, size_t n,
		  unsigned char bit)
{
	for (size_t i = 0; i < n; i++)
		for (int64_t t = iv[i].start_ns; t < iv[i].end_ns && t < T; t++)
			if (t >= 0)
				grid[t] |= bit;
}

static int cmp_start(const void *pa, const void *pb)
{
	const cvc_ival *a = pa, *b = pb;

	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

static void random_set(unsigned *seed, cvc_ival *iv, size_t n, int64_t T, int64_t maxlen)
{
	for (size_t i = 0; i < n; i++) {
		int64_t s = rand_r(seed) % T;
		int64_t len = rand_r(seed) % 8 == 0 ? 0 : rand_r(seed) % (maxlen + 1);

		iv[i].start_ns = s;
		iv[i].end_ns = s + len > T ? T : s + len;
	}
}

Test(intervals, random_against_grid)
{
	enum { T = 2000, NMAX = 200 };
	static unsigned char grid[T];
	cvc_ival a[NMAX], b[NMAX], a2[NMAX], b2[NMAX];
	unsigned seed = 12345;

	for (int round = 0; round < 300; round++) {
		size_t na = 1 + (size_t)(rand_r(&seed) % NMAX);
		size_t nb = (size_t)(rand_r(&seed) % NMAX);
		int64_t maxlen = 1 + rand_r(&seed) % 150;
		int64_t ga = 0, gb = 0, gab = 0, gu = 0;
		cvc_merger m;
		size_t ka, kb;

		random_set(&seed, a, na, T, maxlen);
		random_set(&seed, b, nb, T, maxlen);
		memset(grid, 0, sizeof grid);
		paint(grid, T, a, na, 1);
		paint(grid, T, b, nb, 2);
		for (int t = 0; t < T; t++) {
			ga += (grid[t] & 1) != 0;
			gb += (grid[t] & 2) != 0;
			gab += grid[t] == 3;
			gu += grid[t] != 0;
		}
		/* Streaming merger over the start-sorted copy. */
		memcpy(a2, a, na * sizeof *a);
		qsort(a2, na, sizeof *a2, cmp_start);
		cvc_merger_init(&m);
		for (size_t i = 0; i < na; i++)
			cr_assert_eq(cvc_merger_add(&m, a2[i].start_ns, a2[i].end_ns), CVC_OK);
		cr_assert_eq(cvc_merger_total(&m), ga, "round %d: merger %lld, grid %lld", round,
			     (long long)cvc_merger_total(&m), (long long)ga);

		memcpy(a2, a, na * sizeof *a);
		memcpy(b2, b, nb * sizeof *b);
		cr_assert_eq(cvc_ivals_union_ns(a2, na), ga, "round %d: union a", round);
		cr_assert_eq(cvc_ivals_union_ns(b2, nb), gb, "round %d: union b", round);
		ka = cvc_ivals_normalize(a2, na);
		kb = cvc_ivals_normalize(b2, nb);
		for (size_t i = 1; i < ka; i++)
			cr_assert_gt(a2[i].start_ns, a2[i - 1].end_ns, "normalized: gaps stay");
		cr_assert_eq(cvc_ivals_intersect_ns(a2, ka, b2, kb), gab, "round %d: intersect",
			     round);
		/* The identity the analyzer relies on. */
		cr_assert_eq(ga + gb - gu, gab);
	}
}
