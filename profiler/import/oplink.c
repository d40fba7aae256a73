/*
 * oplink.c - framework op -> launch links by CPU-time nesting (oplink.h).
 *
 * Why nesting: Kineto traces from PyTorch before about 2.1 write each
 * kernel's "External id" as its CUDA correlation id, so the id the CPU op
 * carries names none of its kernels.  What does hold in every version is
 * that the runtime call which launched the kernel ran on the op's thread
 * inside the op's span, and that the call and the kernel share the
 * correlation id.  HTA and Perfetto rebuild call stacks the same way.
 */
#include <stdint.h>
#include <stdlib.h>

#include "import_int.h"
#include "oplink.h"

int oplink_add_op(oplink *l, const struct oplink_op *op)
{
	if (cvc_grow_bounded(&l->ops, &l->capops, l->nops + 1, sizeof *l->ops,
			     SIZE_MAX / sizeof *l->ops))
		return -1;
	l->ops[l->nops++] = *op;
	return 0;
}

int oplink_add_launch(oplink *l, const struct oplink_launch *la)
{
	if (l->max_launches && l->nl >= l->max_launches) {
		l->dropped++;
		return 0;
	}
	if (cvc_grow_bounded(&l->launches, &l->capl, l->nl + 1, sizeof *l->launches,
			     SIZE_MAX / sizeof *l->launches))
		return -1;
	l->launches[l->nl++] = *la;
	return 0;
}

static int cmp64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* Thread, then start; an enclosing op (longer) before the ones inside it. */
static int cmp_op(const void *a, const void *b)
{
	const struct oplink_op *x = a, *y = b;
	int c;

	if ((c = cmp64(x->pid, y->pid)) || (c = cmp64(x->tid, y->tid)) ||
	    (c = cmp64(x->start_ns, y->start_ns)) || (c = cmp64(y->end_ns, x->end_ns)))
		return c;
	return cmp64(x->shape_id, y->shape_id);
}

static int cmp_launch(const void *a, const void *b)
{
	const struct oplink_launch *x = a, *y = b;
	int c;

	if ((c = cmp64(x->pid, y->pid)) || (c = cmp64(x->tid, y->tid)) ||
	    (c = cmp64(x->ts_ns, y->ts_ns)))
		return c;
	return cmp64(x->correlation, y->correlation);
}

static int same_thread(const struct oplink_op *o, const struct oplink_launch *la)
{
	return o->pid == la->pid && o->tid == la->tid;
}

static int thread_before(const struct oplink_op *o, const struct oplink_launch *la)
{
	return o->pid < la->pid || (o->pid == la->pid && o->tid < la->tid);
}

/*
 * One merge pass over both sorted arrays with a stack of the ops open at
 * the current launch: ops are pushed as their start passes, popped when
 * they have ended, and the top is the innermost.  Ops that overlap without
 * nesting (clock rounding) are tolerated: an ended op deeper in the stack
 * is dropped when it surfaces.
 */
cvc_status oplink_write(oplink *l, cvc_db *db, int64_t run_id, int rank, int64_t *linked)
{
	size_t *stack = NULL, depth = 0, io = 0;
	cvc_status st = CVC_OK;

	*linked = 0;
	if (l->nops == 0 || l->nl == 0)
		return CVC_OK;
	qsort(l->ops, l->nops, sizeof *l->ops, cmp_op);
	qsort(l->launches, l->nl, sizeof *l->launches, cmp_launch);
	stack = malloc(l->nops * sizeof *stack);
	if (!stack)
		return CVC_ERR_NOMEM;
	for (size_t i = 0; i < l->nl; i++) {
		const struct oplink_launch *la = &l->launches[i];

		if (depth && !same_thread(&l->ops[stack[depth - 1]], la))
			depth = 0;
		while (io < l->nops && thread_before(&l->ops[io], la))
			io++;
		while (io < l->nops && same_thread(&l->ops[io], la) &&
		       l->ops[io].start_ns <= la->ts_ns)
			stack[depth++] = io++;
		while (depth && l->ops[stack[depth - 1]].end_ns < la->ts_ns)
			depth--;
		if (!depth)
			continue;
		if ((st = cvc_db_op_launch_add(db, l->ops[stack[depth - 1]].shape_id, run_id, rank,
					       la->correlation)))
			break;
		(*linked)++;
	}
	free(stack);
	return st;
}

void oplink_host_time(oplink *l, int64_t stall_ns, int64_t *busy_ns, int64_t *gaps,
		      int64_t *threads)
{
	*busy_ns = *gaps = *threads = 0;
	if (l->nl == 0)
		return;
	qsort(l->launches, l->nl, sizeof *l->launches, cmp_launch);
	*threads = 1;
	for (size_t i = 1; i < l->nl; i++) {
		const struct oplink_launch *a = &l->launches[i - 1], *b = &l->launches[i];
		int64_t d = b->ts_ns - a->ts_ns;

		if (a->pid != b->pid || a->tid != b->tid) {
			(*threads)++;
			continue;
		}
		if (d >= 0 && d < stall_ns) {
			*busy_ns += d;
			(*gaps)++;
		}
	}
}

void oplink_release(oplink *l)
{
	free(l->ops);
	free(l->launches);
	l->ops = NULL;
	l->launches = NULL;
	l->nops = l->capops = l->nl = l->capl = 0;
}
