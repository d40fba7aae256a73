/*
 * vby.h - the groups of `cvc validate --by`: which cells (or what read of
 * a row) make a row's group key.
 */
#ifndef CVC_PROJ_VBY_H
#define CVC_PROJ_VBY_H

#include <stddef.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_csv.h"
#include "vrow.h"

/* Parts of one --by list ("moe,model,gpu"): more would make keys nobody
 * reads as one group. */
#define VBY_MAX 4

struct vby {
	int n;              /* parts; 0: no --by */
	int col[VBY_MAX];   /* a column's index, or VBY_STACK / VBY_MOE */
	int hw[VBY_MAX];    /* the column is the GPU: the catalog's name */
};

#define VBY_STACK (-2) /* the stack and release the row's text names */
#define VBY_MOE (-3)   /* MoE or dense, as the row's model reads */

/*
 * Reads spec, a comma-separated list of up to VBY_MAX parts, each a column
 * of hdr, or 'stack' or 'moe' where the file has no such column, into b
 * (b->n = 0 for a NULL spec).  CVC_ERR_USAGE naming path and the part that
 * is none of these, an empty part or too many.
 */
cvc_status vby_parse(struct vby *b, const char *spec, const cvc_csv_rec *hdr, const char *path,
		     char *err, size_t errlen);

/* Row's group key in key (n bytes): the parts' values, each trimmed of
 * spaces and a guess's trailing '?' ("(empty)" when nothing is left),
 * joined by " / "; the empty string without --by. */
const char *vby_key(const struct vby *b, const struct vrow *row, const cvc_csv_rec *rec,
		    char *key, size_t n);

#endif
