/*
 * unused.c - fields a scenario sets that its layout does not use, said in
 * the warnings column with the stack's reason: otherwise a sweep over them
 * gives identical rows and no word why (docs/SCENARIOS.md "Output
 * columns", warnings).
 */
#include <stdio.h>
#include <string.h>

#include "proj_internal.h"

/* "FIELD: not applied, WHY" into r's warnings. */
static void unused(cvc_proj_result *r, const char *field, const char *why)
{
	char item[240];

	snprintf(item, sizeof item, "%s: not applied, %s", field, why);
	proj_warn_add(r, item);
}

void proj_unused_warn(const cvc_proj_scenario *sc, cvc_proj_result *r)
{
	int fp8 = sc->dtype == CVC_PROJ_FP8;
	int tpo = sc->tp_overlap_ag > 0 || sc->tp_overlap_rs > 0;

	/* as Megatron-Core ignores --recompute-modules without
	 * --recompute-granularity selective */
	if (sc->recompute != CVC_PROJ_RECOMP_SELECTIVE && sc->recompute_modules &&
	    strspn(sc->recompute_modules, " ,") != strlen(sc->recompute_modules))
		proj_warn_add(r, "recompute_modules: not applied, recompute is not selective");
	/* Megatron-LM's arguments.py asserts sequence parallelism for
	 * --tp-comm-overlap: its GEMMs overlap the sequence-parallel
	 * all-gather and reduce-scatter; the 3D grid overlaps its own */
	if (tpo && sc->tp > 1 && !sc->sp && !proj_is_3d(sc))
		unused(r, "tp_overlap", "it needs sp (Megatron-Core overlaps the sequence-parallel "
		       "gather and scatter)");
	/* the fp8 fields under another dtype are not said: a study sweeping
	 * the dtype sets them for its fp8 rows */
	if (fp8 && sc->fp8_param_gather > 0 && !proj_fp8_params(sc))
		unused(r, "fp8_param_gather", "it needs Megatron-Core with zero >= 1 (the distributed "
		       "optimizer or FSDP gathers the fp8 weights)");
	/* hybrid sharding splits what ZeRO shards: nothing at zero 0 */
	if (sc->shard_group > 0 && sc->zero < 1)
		unused(r, "shard_group", "zero is 0 (nothing is sharded)");
	/* the modules keep no input of their own: full recompute keeps only
	 * each layer's, selective recompute of mlp or moe only the FFN's, a
	 * hybrid's Mamba blocks are not the attention modules' */
	if (sc->offload_modules && strspn(sc->offload_modules, " ,") != strlen(sc->offload_modules) &&
	    r->valid && !(r->mem_offload_gb > 0))
		unused(r, "offload_modules", "the modules named keep no input of their own here "
		       "(recompute rebuilds it)");
}
