/*
 * study.h - the parsed form of a scenario file, shared by scenario.c (which
 * builds it) and run.c (which expands it).  Not installed.
 */
#ifndef CVC_PROJ_STUDY_H
#define CVC_PROJ_STUDY_H

#include <stddef.h>

#include <yaml.h>

#include "proj_internal.h"

#define PROJ_MAX_FIELDS_PER_SECTION 96
#define PROJ_MAX_WHERE 16
#define PROJ_MAX_BLOCKS 256

/* One field set to one value (str for PF_STR fields, num otherwise). */
struct assign {
	int field;
	double num;
	const char *str;
};

/* One alternative of an axis: a set of assignments applied together. */
struct alt {
	struct assign *a;
	int n;
};

/* An axis of the cross product: exactly one alternative is chosen. */
struct axis {
	struct alt *alts;
	size_t nalt, cap;
};

/* A scenario block: base values, axes (applied in order, later wins), filters. */
struct block {
	cvc_proj_scenario base;
	struct axis *axes;
	size_t naxes, capaxes;
	proj_expr *where[PROJ_MAX_WHERE];
	int nwhere;
	double size;
};

struct pool_str {
	struct pool_str *next;
	char s[];
};

struct cvc_proj_study {
	char file[256];
	char name[96];
	char errmsg[1024];
	struct block *blocks;
	size_t nblocks;
	struct pool_str *pool;
	size_t nalts;   /* alternatives over every axis of every block */
	cvc_proj_walk_cb walk; /* cvc_proj_study_on_walk */
	void *walk_user;
	proj_archs *archs;     /* the catalog of models, loaded when a model is named */
	proj_archs *configs;   /* the strings of config.json files read */
	/* where the file names each GPU (its interned string), so that a name
	 * the catalog lacks, found when the study runs, is said with its line
	 * and column; the first few dozen names only */
	struct {
		const char *s;
		unsigned long line, col;
	} gpu_at[32];
	size_t ngpu_at;
};

void proj_assign(cvc_proj_scenario *sc, const struct assign *a);

/* ---- shared by scenario.c and scnmodel.c ---------------------------------- */

/* The study's message for node n (NULL: the file): CVC_ERR_FORMAT. */
cvc_status proj_scn_fail(cvc_proj_study *st, const yaml_node_t *n, const char *fmt, ...)
	CVC_PRINTF(3, 4);
/* The entry of st->gpu_at holding the interned GPU name s (its line and
 * column in the file), -1 when none: a GPU named in every block has one
 * entry, so the others have room. */
int proj_scn_gpu_mark(const cvc_proj_study *st, const char *s);
/* Out of memory, said: CVC_ERR_NOMEM. */
cvc_status proj_scn_nomem(cvc_proj_study *st);
/* s interned in the study's pool (lives as long as the study); NULL: no memory. */
const char *proj_scn_intern(cvc_proj_study *st, const char *s);
/* A scalar node's text; NULL for any other node. */
const char *proj_scn_scalar(const yaml_node_t *n);
/* A mapping pair's key (*k) and value (*v); the key's text, NULL when not a scalar. */
const char *proj_scn_pair(yaml_document_t *doc, const yaml_node_pair_t *pr, yaml_node_t **k,
			  yaml_node_t **v);
/* One more alternative of n assignments on ax (bounded over the study). */
cvc_status proj_scn_alt_push(cvc_proj_study *st, struct axis *ax, const struct assign *as, int n);
void proj_scn_axis_release(struct axis *ax);

/* The model a scenario names (scnmodel.c): the catalog's (config 0) or a
 * config.json's fields, one part each, appended to parts. */
cvc_status proj_scn_arch_parts(cvc_proj_study *st, const yaml_node_t *n, int config,
			       const char *val, struct axis *parts, size_t *nparts);
/* A model mapping m holding a catalog name and nothing else: refused. */
cvc_status proj_scn_name_alone(cvc_proj_study *st, yaml_document_t *doc, yaml_node_t *m);

#endif
