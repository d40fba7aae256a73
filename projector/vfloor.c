/*
 * vfloor.c - the lowest MAPE any projection could score on a table that
 * measured the same scenario more than once.
 *
 * Published tables repeat a layout: the same model on the same GPUs at the
 * same parallelism, measured again in a later container release, or with
 * a setting the row does not print.  cvc reads such rows into the same
 * scenario and projects them alike (a resolved scenario prices to the same
 * bits), so their measurements' disagreement is error no projection that
 * sees only what the rows state can remove.  Per set of rows projected
 * alike, the least sum of |x - m| / m over one figure x is that set's
 * share of the floor; the minimum of a sum of |x - m_i| / m_i is at one of
 * the m_i (a weighted median), so trying each is exact.
 */
#include <math.h>
#include <stdlib.h>

#include "vrow.h"

static int by_pred(const void *a, const void *b)
{
	double x = ((const struct vpair *)a)->pred, y = ((const struct vpair *)b)->pred;

	return (x > y) - (x < y);
}

/* The least sum of |x - m| / m over the n measurements of one set, in %. */
static double set_floor(const struct vpair *s, size_t n)
{
	double best = INFINITY;

	for (size_t i = 0; i < n; i++) {
		double sum = 0;

		for (size_t j = 0; j < n; j++)
			sum += fabs(s[i].meas - s[j].meas) / s[j].meas;
		best = fmin(best, sum);
	}
	return 100 * best;
}

double vfloor_sum(struct vpair *a, size_t n, int *sets, int *shared)
{
	double sum = 0;

	*sets = *shared = 0;
	qsort(a, n, sizeof *a, by_pred);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && a[j].pred == a[i].pred)
			j++;
		if (j - i > 1) {
			(*sets)++;
			*shared += (int)(j - i);
			sum += set_floor(a + i, j - i);
		}
		i = j;
	}
	return sum;
}
