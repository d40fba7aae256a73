/*
 * materialize_project.c - NVTX ranges projected onto the GPU timeline.
 *
 * An NVTX range is the CPU thread's: push, launch, pop, and the GPU runs the
 * launched kernels later, often after the pop.  Cut by the CPU window, the
 * steps of a PyTorch loop on an H200 held 3 to 87 of their ~78 kernels each
 * (docs/GPU-VALIDATION.md).  Kineto (gpu_user_annotation) and Nsight Systems
 * ("NVTX projected on the GPU") attribute a kernel to the range its launch
 * call was made in; so does this: for each range, the kernels, copies and
 * memsets whose API call (same correlation id) started on the range's
 * thread inside it, and a GPU-timeline range (CVC_RANGE_GPU) per device from
 * the first one's start to the last one's end.  `cvc analyze --by step`
 * prefers such ranges to the CPU ones.
 */
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_base.h"
#include "materialize_int.h"

static int launch_cmp(const void *pa, const void *pb)
{
	const struct mat_launch *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

static int span_cmp(const void *pa, const void *pb)
{
	const struct mat_span *a = pa, *b = pb;

	return (a->corr > b->corr) - (a->corr < b->corr);
}

cvc_status mat_proj_launch(struct mat *m, uint32_t corr, int64_t start_ns, int64_t tid)
{
	struct mat_launch *l;

	if (!corr || tid < 0)
		return CVC_OK;
	if (cvc_grow(&m->launches, &m->caplaunches, m->nlaunches + 1, sizeof *l, 1024))
		return mat_dbfail(m, CVC_ERR_NOMEM);
	l = &m->launches[m->nlaunches++];
	l->corr = corr;
	l->start_ns = start_ns;
	l->tid = tid;
	return CVC_OK;
}

cvc_status mat_proj_span(struct mat *m, uint32_t corr, int device, int64_t s, int64_t e)
{
	struct mat_span *p;

	/* a spool without API records projects nothing: keep nothing */
	if (!corr || !m->napi)
		return CVC_OK;
	if (cvc_grow(&m->spans, &m->capspans, m->nspans + 1, sizeof *p, 1024))
		return mat_dbfail(m, CVC_ERR_NOMEM);
	p = &m->spans[m->nspans++];
	p->corr = corr;
	p->device = device;
	p->start_ns = s;
	p->end_ns = e;
	return CVC_OK;
}

void mat_proj_sort(struct mat *m)
{
	if (m->nlaunches)
		qsort(m->launches, m->nlaunches, sizeof *m->launches, launch_cmp);
	if (m->nspans)
		qsort(m->spans, m->nspans, sizeof *m->spans, span_cmp);
}

/* First launch at or after (tid, t). */
static size_t launch_lower(const struct mat *m, int64_t tid, int64_t t)
{
	size_t lo = 0, hi = m->nlaunches;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mat_launch *l = &m->launches[mid];

		if (l->tid < tid || (l->tid == tid && l->start_ns < t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First span of correlation corr (nspans if none). */
static size_t span_lower(const struct mat *m, uint32_t corr)
{
	size_t lo = 0, hi = m->nspans;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->spans[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#define PROJ_DEVICES 64

cvc_status mat_proj_range(struct mat *m, const cvc_range *cpu)
{
	struct { int device; int64_t s, e; } d[PROJ_DEVICES];
	size_t nd = 0;
	cvc_status st;

	if (cpu->tid < 0 || !m->nlaunches || !m->nspans)
		return CVC_OK;
	for (size_t i = launch_lower(m, cpu->tid, cpu->start_ns);
	     i < m->nlaunches && m->launches[i].tid == cpu->tid &&
	     m->launches[i].start_ns <= cpu->end_ns; i++)
		for (size_t j = span_lower(m, m->launches[i].corr);
		     j < m->nspans && m->spans[j].corr == m->launches[i].corr; j++) {
			const struct mat_span *p = &m->spans[j];
			size_t k = 0;

			while (k < nd && d[k].device != p->device)
				k++;
			if (k == nd) {
				if (nd == PROJ_DEVICES)
					continue;
				d[nd].device = p->device, d[nd].s = p->start_ns, d[nd].e = p->end_ns;
				nd++;
				continue;
			}
			if (p->start_ns < d[k].s)
				d[k].s = p->start_ns;
			if (p->end_ns > d[k].e)
				d[k].e = p->end_ns;
		}
	for (size_t k = 0; k < nd; k++) {
		cvc_range g = *cpu;

		g.kind = CVC_RANGE_GPU;
		g.device = d[k].device;
		g.start_ns = d[k].s;
		g.end_ns = d[k].e;
		if ((st = cvc_db_range_add(m->db, &g)))
			return mat_dbfail(m, st);
		m->stats->ranges++;
		m->projected++;
	}
	return CVC_OK;
}

void mat_proj_free(struct mat *m)
{
	free(m->launches);
	free(m->spans);
	m->launches = NULL;
	m->spans = NULL;
}
