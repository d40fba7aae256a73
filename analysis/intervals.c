/*
 * intervals.c - union and intersection lengths of half-open ns intervals.
 *
 * The analyzer feeds activities in start order and only needs the streaming
 * merger; the array functions are the reference the tests check it against
 * and serve callers that hold intervals in memory.
 *
 * Lengths are unsigned: end - start of two int64 times with end >= start is
 * exact in uint64_t, and the union of intervals lying within [lo, hi] is at
 * most hi - lo, so a union sums without overflow whatever the times (issue
 * 36 item 7: one kernel over [-2^62, 2^62] overflowed here).  A total past
 * INT64_MAX, possible only outside the accepted window (CVC_TIME_LIMIT_NS),
 * is reported as INT64_MAX.
 */
#include <stdlib.h>

#include "cvc/cvc_analyze.h"

/* end - start for end >= start, exact. */
static uint64_t span_len(int64_t start, int64_t end)
{
	return (uint64_t)end - (uint64_t)start;
}

static int64_t clamp_total(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int ival_cmp(const void *pa, const void *pb)
{
	const cvc_ival *a = pa, *b = pb;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->end_ns != b->end_ns)
		return a->end_ns < b->end_ns ? -1 : 1;
	return 0;
}

size_t cvc_ivals_normalize(cvc_ival *iv, size_t n)
{
	size_t out = 0;

	if (n == 0)
		return 0;
	qsort(iv, n, sizeof *iv, ival_cmp);
	for (size_t i = 0; i < n; i++) {
		if (iv[i].end_ns <= iv[i].start_ns)
			continue;
		/* Touching runs merge too: [1,2) and [2,3) leave no gap. */
		if (out > 0 && iv[i].start_ns <= iv[out - 1].end_ns) {
			if (iv[i].end_ns > iv[out - 1].end_ns)
				iv[out - 1].end_ns = iv[i].end_ns;
			continue;
		}
		iv[out++] = iv[i];
	}
	return out;
}

int64_t cvc_ivals_union_ns(cvc_ival *iv, size_t n)
{
	uint64_t total = 0;

	n = cvc_ivals_normalize(iv, n);
	for (size_t i = 0; i < n; i++)
		total += span_len(iv[i].start_ns, iv[i].end_ns);
	return clamp_total(total);
}

int64_t cvc_ivals_intersect_ns(const cvc_ival *a, size_t na, const cvc_ival *b,
			       size_t nb)
{
	size_t i = 0, j = 0;
	uint64_t total = 0;

	while (i < na && j < nb) {
		int64_t s = a[i].start_ns > b[j].start_ns ? a[i].start_ns : b[j].start_ns;
		int64_t e = a[i].end_ns < b[j].end_ns ? a[i].end_ns : b[j].end_ns;

		if (e > s)
			total += span_len(s, e);
		/* The one that ends first cannot meet anything further on. */
		if (a[i].end_ns < b[j].end_ns)
			i++;
		else
			j++;
	}
	return clamp_total(total);
}

void cvc_merger_init(cvc_merger *m)
{
	m->closed_ns = 0;
	m->cur_start = m->cur_end = 0;
	m->open = 0;
}

cvc_status cvc_merger_add(cvc_merger *m, int64_t s, int64_t e)
{
	if (m->open && s < m->cur_start)
		return CVC_ERR_USAGE;
	if (e <= s)
		return CVC_OK;
	if (m->open && s <= m->cur_end) {
		if (e > m->cur_end)
			m->cur_end = e;
		return CVC_OK;
	}
	if (m->open)
		m->closed_ns += span_len(m->cur_start, m->cur_end);
	m->cur_start = s;
	m->cur_end = e;
	m->open = 1;
	return CVC_OK;
}

int64_t cvc_merger_total(const cvc_merger *m)
{
	return clamp_total(m->closed_ns + (m->open ? span_len(m->cur_start, m->cur_end) : 0));
}
