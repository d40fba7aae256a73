/*
 * materialize_graph.c - NCCL sizes for kernels replayed from CUDA graphs
 * (issue 19 item 8), the part of cvc_profile_materialize() that reads the
 * spool's graph records.
 *
 * A collective captured into a graph is launched by NCCL once, at capture;
 * the replays' kernels carry the cudaGraphLaunch's correlation id, so the
 * direct join (correlation -> NCCL launch id) finds nothing for them.  The
 * injection library spooled which node each NCCL launch created (GNODE)
 * and which node each executable-graph node was cloned from (GCLONE); a
 * replayed kernel's graphNodeId is the clone's, so it is followed back
 * through the clones to the created node and its launch.
 */
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_vocab.h"
#include "materialize_int.h"

/* Clones followed at most (instantiate, and a cudaGraphClone or two before
 * it, make short chains); more is a loop in a damaged spool. */
#define MAT_CLONE_HOPS 64

cvc_status mat_graph_alloc(struct mat *m)
{
	if (m->ngnodes && !(m->gnodes = calloc(m->ngnodes, sizeof *m->gnodes)))
		return mat_fail(m, CVC_ERR_NOMEM, 0, "out of memory for CUDA-graph nodes");
	if (m->nclones && !(m->clones = calloc(m->nclones, sizeof *m->clones)))
		return mat_fail(m, CVC_ERR_NOMEM, 0, "out of memory for CUDA-graph clones");
	return CVC_OK;
}

void mat_graph_collect(struct mat *m, uint32_t type, const struct cvc_spool_graph *g)
{
	if (type == CVC_SPOOL_GNODE && m->gn_fill < m->ngnodes)
		m->gnodes[m->gn_fill++] = *g;
	else if (type == CVC_SPOOL_GCLONE && m->cl_fill < m->nclones)
		m->clones[m->cl_fill++] = *g;
}

static int graph_cmp(const void *a, const void *b)
{
	const struct cvc_spool_graph *x = a, *y = b;

	/* ties (a damaged spool naming one node twice) by ref: the same
	 * answer whatever order qsort leaves them in */
	if (x->node_id != y->node_id)
		return x->node_id < y->node_id ? -1 : 1;
	return (x->ref > y->ref) - (x->ref < y->ref);
}

void mat_graph_sort(struct mat *m)
{
	if (m->gn_fill)
		qsort(m->gnodes, m->gn_fill, sizeof *m->gnodes, graph_cmp);
	if (m->cl_fill)
		qsort(m->clones, m->cl_fill, sizeof *m->clones, graph_cmp);
}

/* The first entry of t[0..n) for node id, or NULL. */
static const struct cvc_spool_graph *graph_find(const struct cvc_spool_graph *t, size_t n,
						 uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid].node_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && t[lo].node_id == id ? &t[lo] : NULL;
}

/* The NCCL launch that created node (through its clones), or -1. */
static int64_t graph_launch(const struct mat *m, uint64_t node)
{
	for (int hop = 0; hop <= MAT_CLONE_HOPS; hop++) {
		const struct cvc_spool_graph *g = graph_find(m->gnodes, m->gn_fill, node);

		if (g)
			return g->ref <= (uint64_t)INT64_MAX ? (int64_t)g->ref : -1;
		g = graph_find(m->clones, m->cl_fill, node);
		if (!g)
			return -1;
		node = g->ref;
	}
	return -1;
}

/* Whether the kernel's name is NCCL's, by the rule cvc analyze applies. */
static int nccl_kernel(const struct mat *m, uint32_t name_sid)
{
	char name[256];

	return mat_str(m, name_sid, name, sizeof name) == 0 && cvc_hta_is_comm(name);
}

cvc_status mat_graph_join(struct mat *m, size_t off, int64_t activity_id,
			  const struct cvc_spool_act *s)
{
	int joined = 0;
	cvc_status st;

	if ((st = mat_coll(m, off, activity_id, graph_launch(m, s->graph_node_id), &joined)))
		return st;
	if (joined) {
		m->graph_joined++;
		m->stats->graph_replay_joined++;
	} else if (nccl_kernel(m, s->name_sid)) {
		m->graph_unjoined++; /* node made without the plugin, or its records lost */
	}
	return CVC_OK;
}

cvc_status mat_graph_finish(struct mat *m)
{
	cvc_status st;

	if (!m->ngnodes && !m->nclones && !m->graph_joined && !m->graph_unjoined)
		return CVC_OK; /* no graphs, or a version 1 spool: the old counts */
	if ((st = cvc_db_run_meta_add(m->db, m->run_id, "nccl_graph_replay_joined",
				      m->graph_joined)) ||
	    (st = cvc_db_run_meta_add(m->db, m->run_id, "nccl_graph_replay_unjoined",
				      m->graph_unjoined)))
		return mat_dbfail(m, st);
	return CVC_OK;
}

void mat_graph_free(struct mat *m)
{
	free(m->gnodes);
	free(m->clones);
	m->gnodes = m->clones = NULL;
}
