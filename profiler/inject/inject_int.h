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
 * Counts an NCCL call captured into a CUDA graph (run_meta
 * nccl_graph_captured_calls).  Its replays launch without NCCL's profiler
 * events: they get its size through the graph node the captured launch
 * created (cvci_nccl_current_launch, graph.h).  Any thread.
 */
void cvci_note_graph_call(void);

/*
 * The NCCL launch id the profiler plugin has pushed as the external
 * correlation on the calling thread, for the kernel launch NCCL is making
 * right now; 0 outside such a launch, or when the push failed.
 */
uint64_t cvci_nccl_current_launch(void);

struct cvci_decoder;

/*
 * Says in one line why CUPTI, subscribed and enabled, delivered no buffer
 * by exit: the CUDA driver found no device (run_meta cuda_init_result), or
 * another client registered its own buffer callbacks (nobuffers.c).
 */
void cvci_say_no_buffers(struct cvci_decoder *dec);

/* Whether a CUDA driver (libcuda.so.1) is loaded in this process. */
int cvci_driver_loaded(void);

#endif
