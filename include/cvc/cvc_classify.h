/*
 * cvc_classify.h - kernel name -> operator class, by an ordered PCRE2 rule
 * set (shipped default compiled into the binary, or a user file).
 *
 * Rules are tried in order; the first match wins.  Named captures give the
 * collective type, algorithm, protocol and dtype of communication kernels.
 * A loaded cvc_rules is immutable and may be shared between threads:
 * cvc_rules_match() makes its PCRE2 match data per call.  The rule file
 * format is documented at the top of analysis/rules/default.rules.
 */
#ifndef CVC_CLASSIFY_H
#define CVC_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "cvc.h"
#include "cvc_db.h"

/* Stable ids: stored in op_classes.id.  Append only. */
typedef enum cvc_op_class {
	CVC_CLS_OTHER = 0,
	CVC_CLS_GEMM = 1,
	CVC_CLS_ATTENTION = 2,
	CVC_CLS_CONV = 3,
	CVC_CLS_NORM = 4,
	CVC_CLS_SOFTMAX = 5,
	CVC_CLS_ELEMENTWISE = 6,
	CVC_CLS_REDUCTION = 7,
	CVC_CLS_OPTIMIZER = 8,
	CVC_CLS_EMBEDDING = 9,
	CVC_CLS_COPY = 10,
	CVC_CLS_ALLREDUCE = 11,
	CVC_CLS_ALLGATHER = 12,
	CVC_CLS_REDUCESCATTER = 13,
	CVC_CLS_BROADCAST = 14,
	CVC_CLS_REDUCE = 15,
	CVC_CLS_SENDRECV = 16,
	CVC_CLS_ALLTOALL = 17,
	CVC_CLS_OTHER_COMM = 18,
	CVC_CLS_COUNT
} cvc_op_class;

/* "gemm", "allreduce", "other-comm", ...; NULL for out-of-range values. */
CVC_API const char *cvc_class_name(cvc_op_class c);
/* Parses a class name; CVC_ERR_NOTFOUND when unknown. */
CVC_API cvc_status cvc_class_parse(const char *name, cvc_op_class *out);
/* 1 for the communication classes (allreduce .. other-comm). */
CVC_API int cvc_class_is_comm(cvc_op_class c);

typedef struct cvc_rules cvc_rules;

/* What a rule says of one kernel name.  Empty strings where not captured. */
typedef struct cvc_class_match {
	cvc_op_class cls;
	int rule;          /* index of the matching rule, -1 = no rule matched */
	char coll[32];     /* allreduce, allgather, ... */
	char algo[32];     /* RING, TREE, NVLS, COLLNET_DIRECT, ... */
	char proto[16];    /* LL, LL128, SIMPLE */
	char dtype[16];    /* f32, bf16, float, ... as the name spells it */
} cvc_class_match;

/* The shipped rule set (analysis/rules/default.rules, compiled in). */
CVC_API cvc_status cvc_rules_default(cvc_rules **out, char *err, size_t errlen);

/*
 * Loads a rule file, alone: its rules replace the shipped ones (`--rules-
 * only`).  A bad line or regex fails with CVC_ERR_FORMAT and a message
 * "'<path>': line N, column C: <what>" in err.  *out is owned by the
 * caller: free with cvc_rules_free().
 */
CVC_API cvc_status cvc_rules_load(const char *path, cvc_rules **out, char *err,
				  size_t errlen);

/*
 * The rules of the file at path, then the shipped ones (`--rules`): a
 * user's file adds what cvc does not know and, tried first, overrides what
 * it gets wrong, while every kernel the file does not name keeps its
 * shipped class.  Errors and ownership as cvc_rules_load().
 */
CVC_API cvc_status cvc_rules_load_over_default(const char *path, cvc_rules **out, char *err,
					       size_t errlen);

/* Accepts NULL. */
CVC_API void cvc_rules_free(cvc_rules *r);

/* Classifies name[0..len).  Thread safe (match data is per call). */
CVC_API cvc_status cvc_rules_match(const cvc_rules *r, const char *name, size_t len,
				   cvc_class_match *m);

/*
 * Writes op_classes and name_class for the kernel names in db.  all = 0
 * labels only names with no class yet (what every import does); all = 1
 * relabels every name (a new rule set).  rules NULL = the shipped default.
 * Names used by kernel activities are matched against the rules (rule NULL
 * in name_class when none matches: class other); names used only by memcpy
 * or memset activities are labelled copy.  Each distinct name is matched
 * once.  Must run inside the caller's transaction: CVC_ERR_USAGE otherwise.
 */
CVC_API cvc_status cvc_classify_db(cvc_db *db, const cvc_rules *rules, int all);

/*
 * cvc_classify_db(db, arg, 0) in the shape of cvc_import_opts.after: an
 * import that should label its kernel names passes it with the rules (a
 * const cvc_rules *, NULL = shipped) as after_arg.  run_id is unused: new
 * names of any run are labelled.
 */
CVC_API cvc_status cvc_classify_after_import(cvc_db *db, int64_t run_id, void *rules);

/* Number of rules in r (0 for NULL). */
CVC_API size_t cvc_rules_count(const cvc_rules *r);

/* 1-based line of rule i in its file; 0 when i is out of range. */
CVC_API int cvc_rules_line(const cvc_rules *r, int i);

/* The file rule i comes from: the user's path, or "default.rules" for a
 * shipped rule (borrowed; valid while r lives); NULL out of range. */
CVC_API const char *cvc_rules_source(const cvc_rules *r, int i);

/* ---- reading the labels back (for `cvc classify` and reports) ---------- */

/* Device activities (kernels, memcpys, memsets) of one class. */
typedef struct cvc_class_total {
	int64_t count;
	int64_t total_ns;
} cvc_class_total;

/*
 * Sums activities per class as stored in name_class (names without a label
 * count as other).  run_id < 0 = every run.  out[c] for every class c;
 * *all_ns (may be NULL) receives the total over all classes.  Read only.
 */
CVC_API cvc_status cvc_classify_summary(cvc_db *db, int64_t run_id,
					cvc_class_total out[CVC_CLS_COUNT],
					int64_t *all_ns);

/* Called once per kernel name no rule matched; non-zero stops the walk. */
typedef int (*cvc_unknown_fn)(void *arg, const char *name, int64_t count,
			      int64_t total_ns);

/*
 * Walks the distinct kernel names (kind kernel only) of run_id (< 0: all
 * runs), by total time descending, and calls fn for each one that no rule
 * of rules (NULL = the shipped default) matches.  Read only: the stored
 * labels are not consulted nor changed.
 */
CVC_API cvc_status cvc_classify_unknown(cvc_db *db, const cvc_rules *rules,
					int64_t run_id, cvc_unknown_fn fn, void *arg);

/*
 * The share of run_id's kernel time (< 0: every run) in kernels labelled
 * other whose names look like communication (dispatch, combine, all-to-all,
 * all-reduce, all-gather, reduce-scatter, send, recv, barrier, NVSHMEM):
 * communication of a stack no rule knows, counted as compute.  A name no
 * classification labelled yet (a database `cvc profile` materialized, read
 * before any `cvc classify` or analysis wrote labels) is judged by the
 * shipped rules, as an import would label it.  example (may be NULL) gets
 * the name with the most time.  Read only.
 */
CVC_API cvc_status cvc_classify_suspects(cvc_db *db, int64_t run_id, double *share,
					 char *example, size_t len);

#endif
