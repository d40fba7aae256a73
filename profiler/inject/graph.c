/*
 * graph.c - the CUDA-graph nodes NCCL's launches made; see graph.h.
 */
#include <stdlib.h>

#include "graph.h"

cvc_status cvci_graph_init(struct cvci_graph *g, size_t max_nodes)
{
	size_t n = 32;

	g->untracked = g->id_failed = 0;
	g->used = 0;
	if (max_nodes < 16)
		max_nodes = 16;
	while (n < max_nodes * 2) /* at most half full: short probes */
		n *= 2;
	g->ids = calloc(n, sizeof *g->ids);
	if (!g->ids)
		return CVC_ERR_NOMEM;
	g->mask = n - 1;
	g->max = max_nodes;
	return CVC_OK;
}

void cvci_graph_release(struct cvci_graph *g)
{
	free(g->ids);
	g->ids = NULL;
	g->mask = g->used = g->max = 0;
}

static size_t slot_of(const struct cvci_graph *g, uint64_t id)
{
	size_t j = (size_t)((id * 0x9E3779B97F4A7C15ull) >> 17) & g->mask;

	while (g->ids[j] && g->ids[j] != id)
		j = (j + 1) & g->mask;
	return j;
}

static int known(const struct cvci_graph *g, uint64_t id)
{
	return g->ids[slot_of(g, id)] == id;
}

/* Remembers id; a full table counts it instead (its clones are not spooled). */
static void remember(struct cvci_graph *g, uint64_t id)
{
	size_t j = slot_of(g, id);

	if (g->ids[j] == id)
		return;
	if (g->used >= g->max) {
		g->untracked++;
		return;
	}
	g->ids[j] = id;
	g->used++;
}

int cvci_graph_event(struct cvci_graph *g, uint32_t cbid, int ids_ok, uint64_t node,
		     uint64_t original, uint64_t launch, uint32_t *type,
		     struct cvc_spool_graph *rec)
{
	if (!g->ids)
		return 0; /* released: the process is finishing */
	if (cbid == CVCI_CBID_GRAPHNODE_CREATED) {
		if (!launch)
			return 0; /* not made by an NCCL launch: nothing to join */
		if (!ids_ok || !node) {
			g->id_failed++;
			return 0;
		}
		remember(g, node);
		*type = CVC_SPOOL_GNODE;
		rec->node_id = node;
		rec->ref = launch;
		return 1;
	}
	if (cbid != CVCI_CBID_GRAPHNODE_CLONED)
		return 0;
	if (!ids_ok || !node || !original) {
		g->id_failed++;
		return 0;
	}
	/* a clone of a clone (cudaGraphClone, then instantiate) is followed too */
	if (!known(g, original))
		return 0;
	remember(g, node);
	*type = CVC_SPOOL_GCLONE;
	rec->node_id = node;
	rec->ref = original;
	return 1;
}
