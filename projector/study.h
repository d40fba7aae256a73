/*
 * study.h - the parsed form of a scenario file, shared by scenario.c (which
 * builds it) and run.c (which expands it).  Not installed.
 */
#ifndef CVC_PROJ_STUDY_H
#define CVC_PROJ_STUDY_H

#include <stddef.h>

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
};

void proj_assign(cvc_proj_scenario *sc, const struct assign *a);

#endif
