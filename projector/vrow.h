/*
 * vrow.h - reading one row of a measured-runs table as a scenario
 * (vrow.c), for validate.c.  Not installed.
 */
#ifndef CVC_PROJ_VROW_H
#define CVC_PROJ_VROW_H

#include <stddef.h>

#include "proj_internal.h"

#define VROW_MAX_COLS 256

/* What a column of the table is to validate. */
enum vrole {
	V_CARRY = 0, /* not read: carried through to the output */
	V_FIELD,     /* a scenario field (fields.c, with its aliases) */
	V_GPU,       /* catalog name, free text around it */
	V_ZERO,      /* ZeRO stage or FSDP / ZeRO wording */
	V_DTYPE,     /* "bf16 (amp)", ... */
	V_RECOMP,    /* "none", "full", ... */
	V_CONV,      /* FLOP convention of tflops_per_gpu / mfu_pct */
	V_TPS,       /* measured tokens/s per GPU */
	V_ITER,      /* measured step time, s */
	V_TFLOPS,    /* measured TFLOP/s per GPU */
	V_MFU,       /* measured MFU, % */
	V_TEXT       /* source, notes: carried, and read for the stack's kernels */
};

struct vcol {
	enum vrole role;
	int field; /* V_FIELD: index in proj_fields */
};

struct vrow_map {
	struct vcol col[VROW_MAX_COLS];
	size_t n;
	int has_gpu, has_dtype, has_measured;
};

/* One row as read: its scenario, what was measured, what was assumed. */
struct vrow {
	const char *path;
	long line;
	cvc_proj_scenario sc;
	char name[128], gpu[64];  /* strings sc points to */
	char rcmods[128];
	double tps, iter, tflops, mfu; /* NaN when not given */
	int conv;                 /* enum proj_flops for tflops/mfu; -1 none */
	int hybrid;               /* hybrid sharding named */
	double net_gbps;          /* node network named in the gpu text, GB/s */
	int given[64], ngiven;    /* fields the row gave */
	char assumed[1536];       /* "; "-separated */
	char why[256];            /* not expressible: why */
	char err[512];            /* malformed: message with file and line */
};

/* Roles of the header's columns. */
int vrow_columns(struct vrow_map *map, char **names, size_t n);

/*
 * Reads cells (map->n of them) into r.  legacy: the Megatron-LM 2021 table
 * form (no gpu or dtype column).  default_conv: FLOP convention of rows
 * without one (-1: none).  Returns 0 (r->sc ready for evaluation), 1 when
 * the row cannot be projected (r->why), -1 when a cell is malformed
 * (r->err).
 */
int vrow_read(struct vrow *r, const struct vrow_map *map, char **names, char **cells,
	      cvc_proj_ctx *ctx, int legacy, int default_conv);

/* Appends "; fmt" to r->assumed. */
void vrow_note(struct vrow *r, const char *fmt, ...) CVC_PRINTF(2, 3);

#endif
