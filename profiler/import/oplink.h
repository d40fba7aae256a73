/*
 * oplink.h - links framework ops to the kernels they launched by CPU-time
 * nesting, for traces whose kernels do not carry the op's id.
 *
 * The importer hands over two kinds of CPU-side intervals as it meets them,
 * in any order: ops worth linking (with the op_shapes row they became) and
 * runtime launch calls (with their correlation id, which the kernel shares).
 * At the end each launch goes to the innermost op on the same process and
 * thread whose span contains it, and the pair is written to op_launches.
 */
#ifndef CVC_OPLINK_H
#define CVC_OPLINK_H

#include <stddef.h>
#include <stdint.h>

#include "cvc/cvc_db.h"

struct oplink_op {
	int64_t pid, tid, start_ns, end_ns, shape_id;
};

struct oplink_launch {
	int64_t pid, tid, ts_ns, correlation;
};

typedef struct oplink {
	struct oplink_op *ops;
	size_t nops, capops;
	struct oplink_launch *launches;
	size_t nl, capl;
	size_t max_launches;  /* memory bound; later launches are counted, not kept */
	int64_t dropped;
} oplink;

/* Both return 0, or -1 when out of memory. */
int oplink_add_op(oplink *l, const struct oplink_op *op);
int oplink_add_launch(oplink *l, const struct oplink_launch *la);

/*
 * Writes the op_launches rows of run_id / rank; *linked receives the number
 * of launches that fell inside an op.  Sorts the arrays in place.
 */
cvc_status oplink_write(oplink *l, cvc_db *db, int64_t run_id, int rank, int64_t *linked);

/*
 * The host's time per launch: over each thread's launches in time order,
 * the time from one launch call to the next, summed into *busy_ns when
 * under stall_ns (a longer one is the thread waiting: a synchronisation,
 * another thread's work, the end of a phase), counted into *gaps; *threads
 * receives the launching threads.  Sorts the launches in place; the ones
 * the memory bound dropped are not in it.
 */
void oplink_host_time(oplink *l, int64_t stall_ns, int64_t *busy_ns, int64_t *gaps,
		      int64_t *threads);

void oplink_release(oplink *l);

#endif
