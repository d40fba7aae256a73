/*
 * graph.h - which CUDA-graph nodes NCCL's kernel launches made, for the
 * injection library's resource callbacks (issue 19 item 8).
 *
 * A collective captured into a CUDA graph is launched by NCCL once, at
 * capture; its replays run the executable graph's clone of the node the
 * captured launch created, and their kernel records carry that clone's
 * graphNodeId and the cudaGraphLaunch's correlation id, not the launch's.
 * The callbacks therefore spool "node N was made by NCCL launch E"
 * (GRAPHNODE_CREATED inside the launch) and "node N' is a clone of N"
 * (GRAPHNODE_CLONED, cudaGraphInstantiate); materialize follows the clones
 * back to the launch.  Only clones of NCCL-made nodes (and their clones)
 * are spooled: instantiating a graph clones every node, thousands in a
 * PyTorch step.
 *
 * Pure: no CUPTI call (the injection library asks cuptiGetGraphNodeId and
 * passes the ids), so the unit tests drive it with synthetic ids.  Not
 * thread safe: the caller serialises.
 */
#ifndef CVC_INJECT_GRAPH_H
#define CVC_INJECT_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "cvc/cvc_profile.h"

/* CUPTI's resource callback ids (cupti_callbacks.h, CUDA 13.0). */
#define CVCI_CBID_GRAPHNODE_CREATED 13
#define CVCI_CBID_GRAPHNODE_CLONED 20

struct cvci_graph {
	uint64_t *ids;        /* open addressing, 0 = empty: nodes NCCL made, and clones */
	size_t mask, used, max;
	int64_t untracked;    /* nodes not remembered (table full): their clones are lost */
	int64_t id_failed;    /* callbacks whose node id lookup failed */
};

/* Room for max_nodes ids (at least 16).  CVC_ERR_NOMEM on failure. */
cvc_status cvci_graph_init(struct cvci_graph *g, size_t max_nodes);

/* Frees the table; accepts a zeroed or released tracker. */
void cvci_graph_release(struct cvci_graph *g);

/*
 * One resource callback: cbid (CVCI_CBID_GRAPHNODE_*), ids_ok (0 when
 * cuptiGetGraphNodeId failed: counted, nothing spooled), node (the new or
 * cloned node's id), original (the node it was cloned from; CLONED only),
 * launch (the NCCL launch id pushed on this thread, 0 = none; CREATED
 * only).  Returns 1 and fills *type and *rec when a spool record is due.
 */
int cvci_graph_event(struct cvci_graph *g, uint32_t cbid, int ids_ok, uint64_t node,
		     uint64_t original, uint64_t launch, uint32_t *type,
		     struct cvc_spool_graph *rec);

#endif
