/*
 * inject_int.h - what the parts of libcvc_inject.so share (inject.c owns the
 * writer thread and the spool; nccl_plugin.c feeds it NCCL calls).
 */
#ifndef CVC_INJECT_INT_H
#define CVC_INJECT_INT_H

#include <stdint.h>

#include "cvc/cvc_profile.h"

/*
 * Queues the NCCL calls of one kernel launch for the writer thread; func and
 * dtype are copied.  Never blocks: a full queue counts the record as lost.
 * Safe from any thread, also before InitializeInjection ran.
 */
void cvci_queue_coll(const struct cvc_spool_coll *c, const char *func, const char *dtype);

/*
 * Notes a communicator NCCL initialised (nranks, this process's rank in
 * it): the largest one (the first among equals) names the process's rank,
 * which `cvc import` prefers to the launcher's environment.  Any thread.
 */
void cvci_note_comm(int nranks, int rank);

/*
 * Counts an NCCL call captured into a CUDA graph: its size joins the launch
 * made at capture, but the graph's replays launch without NCCL's profiler
 * events and carry no size (run_meta nccl_graph_captured_calls, and a
 * `cvc analyze` warning).  Any thread.
 */
void cvci_note_graph_call(void);

#endif
