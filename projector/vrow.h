/*
 * vrow.h - reading one row of a measured-runs table as a scenario
 * (vrow.c), for validate.c.  Not installed.
 */
#ifndef CVC_PROJ_VROW_H
#define CVC_PROJ_VROW_H

#include <stddef.h>

#include "cvc/cvc_model.h"
#include "proj_internal.h"

/* ---- cells and words (vcell.c, vtext.c, vgpu.c, vstack.c) ---------------- */

/* A numeric cell as people write it (vcell_number()). */
struct vnum {
	double v;           /* the number, the unit not applied */
	double to;          /* a ramp's final value ("3072->15360"), NaN when none */
	int guess;          /* a '?' after it: the transcriber's guess */
	int approx;         /* "~", "about": approximate */
	int bound;          /* "up to", "<": an upper bound 1; "at least", ">": -1 */
	int grouped;        /* written with thousands separators or a decimal comma */
	char unit;          /* written on the number: 'K' 'M' 'G' 'B' 'T' '%', or 0 */
	char qualifier[16]; /* the words before it ("~", "up to") */
	char remark[160];   /* the text after it, trimmed, without enclosing () */
};

/*
 * Reads the number a cell starts with and what follows it.  decimal_comma:
 * a ';'-separated file, where "7,5" is 7.5 (else "1,024" is 1024).
 * Returns 0, or -1 with *what naming what was expected ("a number", "a
 * finite number", "a number >= 0").
 */
int vcell_number(const char *cell, int decimal_comma, struct vnum *n, const char **what);

/* A number in a remark and the words after it ("2048 per expert"). */
struct vlabel {
	double v;
	char word[48]; /* lower case, up to the next separator */
	size_t pos;    /* offset in the text */
};

/* The numbers of text with their words, at most max; returns the count. */
size_t vcell_labels(const char *text, struct vlabel *out, size_t max);

/* A lower-case copy of text in t (len bytes: longer text is cut). */
void vtext_lower(char *t, size_t len, const char *text);

/* Where word w starts in lower-case t as a whole word (a version may
 * follow: "fsdp2"), NULL when it does not. */
const char *vtext_find(const char *t, const char *w);

/* vtext_find() of the first n bytes of w. */
const char *vtext_find_n(const char *t, const char *w, size_t n);

/* Whether lower-case t holds one of the '|'-separated words as a word. */
int vtext_has(const char *t, const char *words);

/* Whether the word at p (n bytes) of t is negated ("no X", "X=0"). */
int vtext_negated(const char *t, const char *p, size_t n);

/* The first of the '|'-separated words text names: 1 when on, 0 when
 * negated ("without sequence parallel", "sp=0"), -1 when none is named. */
int vtext_switch(const char *text, const char *words);

/* vtext_switch() of text already lower case (no copy, no length bound). */
int vtext_switch_lower(const char *t, const char *words);

/* A sharding cell as its words say (vtext_sharding()). */
struct vshard {
	int stage;          /* ZeRO stage 0..3, -1 when none named */
	int stage_unnamed;  /* "ZeRO" with no stage */
	int hybrid;         /* shard inside a group, replicate across it */
	int torch_fsdp;     /* PyTorch FSDP's names (FULL_SHARD, FSDP2, ...) */
	int fsdp_off;       /* FSDP named and switched off ("FSDP=0", "no FSDP") */
	int ddp;            /* plain data parallel: the stack decides the optimizer */
	int dist_opt;       /* Megatron's distributed optimizer named */
	int offload;        /* states or parameters offloaded to the host */
	double group;       /* the shard group's size, 0 when not given */
	double replicas;    /* the replicas of it, 0 when not given */
	int group_pair;     /* given as "A/B" */
};

/* Reads a sharding cell; 0, or -1 when it names no sharding. */
int vtext_sharding(const char *text, struct vshard *s);

/* A dtype cell: cvc's dtype and fp8_recipe names (vtext_dtype()). */
struct vdtype {
	const char *dtype;   /* "bf16", "fp16", "fp32", "fp8", "nvfp4", "mxfp4", "fp4" */
	const char *recipe;  /* fp8: "delayed", "current", "blockwise", "mxfp8"; NULL none */
	char recipe_word[32];
};

/* Reads a dtype cell; 0, or -1 when it names no dtype. */
int vtext_dtype(const char *text, struct vdtype *d);

/* A recompute cell (vtext_recompute()). */
struct vrecompute {
	int kind;          /* CVC_PROJ_RECOMP_*, -1 when none */
	char modules[128]; /* Megatron-Core's --recompute-modules it names, ',' joined */
};

int vtext_recompute(const char *text, struct vrecompute *rc);

/* The hardware cell (vgpu_read()). */
struct vgpu {
	const cvc_hw_spec *spec; /* the catalog GPU named, NULL none */
	int in_paren;                   /* named only inside parentheses */
	char matched[160];              /* the words that named it */
	double domain;                  /* NVLink domain size named (NVL72), 0 none */
	double per_node;                /* GPUs per node named ("8/node"), 0 none */
	double count;                   /* the run's GPUs named ("512x H100"), 0 none */
	double nic_gbps;                /* network per GPU, GB/s, 0 none */
	const char *nic_how;            /* how the rate was read */
	int nic_assumed;                /* per GPU / per node not stated */
	char nic_text[64];
	double nvlink_gbps;             /* NVLink per GPU unidirectional, GB/s, 0 none */
	int nvlink_assumed;             /* read as bidirectional, not stated */
	char nvlink_text[64];
	char ignored[64];               /* a rate whose link the cell does not name */
	double mem_gb;                  /* memory per GPU the cell states ("96GB"), 0 none */
	char variant_of[48];            /* the GPU named, when mem_gb chose a variant of it */
	double power_w;                 /* power limit the cell states ("500W"), 0 none */
};

/* Reads a hardware cell; gpn: GPUs per node when the cell says none.
 * 0, or -1 when no catalog GPU is named. */
int vgpu_read(const cvc_hw_catalog *cat, const char *text, double gpn,
	      struct vgpu *g);

/* Stacks (vstack_read()). */
enum {
	VS_UNKNOWN = 0, VS_MEGATRON_LM, VS_MEGATRON_DS, VS_NEMO, VS_BRIDGE, VS_FOUNDRY,
	VS_TORCHTITAN, VS_DEEPSPEED, VS_JAX, VS_AUTOMODEL
};

struct vstack {
	int family;           /* VS_* */
	const char *name;     /* "Megatron-DeepSpeed", ...; NULL when none */
	char word[48];        /* the word that named it */
	int year, month;      /* the latest date the text gives (0: none) */
	char date_from[48];   /* the words it came from */
};

/* Reads lower-case text; 0, or -1 when it names no stack (dates may still
 * be set). */
int vstack_read(const char *t, struct vstack *st);

/* Whether the stack is Megatron's (Megatron-LM, -DeepSpeed, NeMo, Bridge). */
int vstack_megatron(const struct vstack *st);

/* Whether the stack's date is known and before year-month. */
int vstack_before(const struct vstack *st, int year, int month);

/* Whether the stack's date falls in from_y-from_m .. to_y-to_m, months
 * included: not before the first (an unknown date is not), and known and
 * not after the last; to_y 0: no last, any date or none. */
int vstack_within(const struct vstack *st, int from_y, int from_m, int to_y, int to_m);


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
	V_TEXT,      /* source, notes: carried, and read for the stack and its kernels */
	V_NET        /* network, interconnect: link rates as the gpu cell's */
};

struct vcol {
	enum vrole role;
	int field; /* V_FIELD: index in proj_fields */
	int notes; /* V_TEXT: the notes column (the row's own words, not its source's) */
};

struct vrow_map {
	struct vcol col[VROW_MAX_COLS];
	size_t n;
	int has_gpu, has_dtype, has_measured;
};

/* What a row's cells said besides its scenario: read by the cells, used
 * by the defaults that follow (vdefault.c). */
struct vgiven {
	int dtype, recompute, zero, gpu, ffn_type, tp, pp, framework, recipe;
	struct vshard shard;  /* the sharding cell, as read */
	int has_shard;
	char shard_cell[64];
	struct vgpu hw;       /* the hardware cell (and a network column) */
	int has_hw, has_net;
	double shared_n;      /* shared experts named in the experts cell ("256+1 shared") */
	int mla;              /* kv_heads says multi-latent attention */
	int mtp_catalog;      /* mtp_layers is cvc's catalog's, and the row
			       * says nothing of multi-token prediction */
	const char *dtype_name; /* the dtype as read, for a dtype cvc does not price */
	char dtype_cell[64];
	int dtype_guess;      /* the cell says it guesses ("fp8?") */
	double batch_tokens;  /* a global batch given in tokens ("4M tokens") */
	double batch_num;     /* its number, and the unit letter written on it */
	char batch_unit;
	char batch_cell[64];
};

/* One row as read: its scenario, what was measured, what was assumed. */
struct vrow {
	const char *path;
	long line;
	cvc_proj_scenario sc;
	char name[128], gpu[64];  /* strings sc points to */
	char rcmods[128];
	char ofmods[128]; /* the offload_modules cell */
	char pattern[512], layout[256]; /* layer_pattern and pp_layout cells */
	double tps, iter, tflops, mfu; /* NaN when not given */
	int conv;                 /* enum proj_flops for tflops/mfu; -1 none */
	int hybrid;               /* hybrid sharding named */
	double net_gbps;          /* node network named in the gpu text, GB/s */
	int given[64], ngiven;    /* fields the row gave */
	struct vgiven g;          /* what the cells said (vrow_read()) */
	struct vstack stack;      /* the software stack its text names */
	char text[2048];          /* source and notes, lower case */
	size_t notes_at, notes_len; /* the notes cell's span in text (0, 0: none) */
	int decimal_comma;        /* a ';'-separated file */
	int strict;               /* --strict: an assumption is a reason */
	struct {                  /* the last hardware cells read, kept across
				   * rows: a table repeats its few GPUs */
		char cell[160];
		double gpn;
		struct vgpu g;
		int rc;
	} hwmemo[4];
	int nhw;
	const char *fid_key[48];  /* vrow_fid()'s memo, kept across rows */
	int fid[48], nfid;
	int has_measured;         /* a measured cell is not empty */
	proj_archs *archs;        /* cvc's catalog of models by name (validate.c) */
	int regressed;            /* measured in a release its stack's tracker
				   * records as regressed for it (vrecipe.c) */
	int ran;                  /* what its release ran and validate does not
				   * assume: an entry of vrecipe.c's; -1 none */
	char assumed[4096];       /* "; "-separated; cut with VROW_NOTES_CUT
				   * at its end when more was said */
	int kind;                 /* enum cvc_proj_vwhy of why */
	char why[512];            /* not expressible: why */
};

/* The fields a row naming a model of cvc's catalog leaves blank, from the
 * catalog, said (vdefault.c). */
void vrow_catalog(struct vrow *r);

/* Roles of the header's columns, by their names as people write them
 * (trimmed, any case, ' ' and '-' for '_': "TP", "Global Batch"). */
int vrow_columns(struct vrow_map *map, char **names, size_t n);

/*
 * Starts row r: the scenario defaults, nothing assumed or refused yet.
 * legacy: the Megatron-LM 2021 table form (no gpu or dtype column), whose
 * conventions it sets and says.  default_conv: FLOP convention of rows
 * without one (-1: none).
 */
void vrow_start(struct vrow *r, int legacy, int default_conv);

/*
 * Reads cells (map->n of them) into r, started by vrow_start().  Returns 0 (r->sc ready for evaluation), or 1
 * when the row cannot be projected (r->why, r->kind): a cell it cannot
 * read is one of those reasons, never an error of the file.
 */
int vrow_read(struct vrow *r, const struct vrow_map *map, char **names, char **cells,
	      cvc_proj_ctx *ctx, int legacy);

/* What ends r->assumed when the notes said more than it holds. */
#define VROW_NOTES_CUT " [notes cut here: more than 4 KB]"

/* Appends "; fmt" to r->assumed: a value read from the row's text. */
void vrow_note(struct vrow *r, const char *fmt, ...) CVC_PRINTF(2, 3);

/*
 * An assumption: a value the row does not state (a default, a guess, a
 * remark interpreted, an ambiguity resolved), appended as vrow_note().
 * Under --strict the first one makes the row unprojected instead (r->why,
 * kind CVC_PROJ_VWHY_STRICT) and later ones are dropped.
 */
void vrow_assume(struct vrow *r, const char *fmt, ...) CVC_PRINTF(2, 3);

/* Sets r->why (kind: enum cvc_proj_vwhy) unless a reason is already set;
 * returns 1, vrow_read()'s "cannot be projected". */
int vrow_cannot(struct vrow *r, int kind, const char *fmt, ...) CVC_PRINTF(3, 4);

/* ---- vfield.c: a scenario field's cell; vdefault.c: what the row did not say */

/* A cell of scenario field `field` (column k, cleaned t, guess: a '?' was
 * removed): 0 read, 1 not projected (r->why). */
int vrow_field(struct vrow *r, int field, const char *k, const char *t, int guess);

/* The value of the first word rule of the enum field named key that text
 * names (vfield.c's published wordings), -1 when none; _lower: text is
 * already lower case. */
int vrow_enum_words(const char *key, const char *text);
int vrow_enum_words_lower(const char *key, const char *t);

/* proj_field_find(NULL, key), remembered per key string in r. */
int vrow_fid(struct vrow *r, const char *key);

/* Whether field f was given by the row, and marking it so. */
int vrow_given(const struct vrow *r, int f);
void vrow_mark(struct vrow *r, int f);

/* What Megatron-Bridge's performance recipe for the row's model (cvc's
 * catalog name) and GPU sets for its recompute and FP8 scaling, where the
 * row is of that stack and does not say it, said (vrecipe.c). */
void vrecipe_apply(struct vrow *r);
/* The dispatcher the transcribed recipe of r's model and layout runs
 * (CVC_PROJ_DISPATCH_*), why filled with its source; -1 when none is
 * transcribed (vrecipe.c). */
int vrecipe_dispatcher(const struct vrow *r, char *why, size_t len);
/* A release its stack's tracker records as regressed for the row's model
 * and GPU: said, and r->regressed set (after the defaults). */
void vrecipe_regressed(struct vrow *r);
/* The CUDA graphs a token-drop recipe of the row's model and GPU ran,
 * where the row is labelled token drop and does not say them (after the
 * defaults, which read the label). */
void vrecipe_graphs(struct vrow *r);
/* The layers whose activations the recipe of the row's model, GPU and
 * layout offloads to the host, where the row does not say (after the
 * defaults: its sharding, recompute and CUDA graphs). */
void vrecipe_offload(struct vrow *r);
/* The offload_modules a Megatron-Bridge row's model recipe turns on
 * (Nemotron 3 Ultra's fused_group_mlp), said; after vrecipe_offload(). */
void vrecipe_offload_modules(struct vrow *r);
/* The row's scenario with what its release ran that cvc can price (a
 * dispatcher, the 1F1B overlap, CUDA graphs, FP8 attention) in alt, and
 * those named in what: 1, or 0 when its release ran nothing listed. */
int vrecipe_ran_alt(const struct vrow *r, cvc_proj_scenario *alt, char *what, size_t len);

/* Whether the row's cells leave its recompute to a recipe, a launcher or
 * a default: neither its recompute nor its recompute_modules cell said it. */
int vrow_recompute_open(struct vrow *r);
/* Sets the recompute kind (CVC_PROJ_RECOMP_*) and, not NULL, the modules
 * a recipe or a launcher ran, marked as the row's; the caller says where
 * they came from. */
void vrow_set_recompute(struct vrow *r, int kind, const char *modules);

/* What a launcher other than Megatron-Bridge's presets ran for the row's
 * recompute, where cvc has read it (vlaunch.c): 1 when it set it, said;
 * 0 when it knows none for the row. */
int vlaunch_recompute(struct vrow *r);
/* mtp_layers 0 for a row whose launcher's model has no MTP module, said;
 * 1 when it was. */
int vlaunch_mtp(struct vrow *r);

/* Fills what the row did not say, from its stack and era, and says it:
 * 0, or 1 when the row cannot be projected (r->why). */
int vrow_defaults(struct vrow *r, cvc_proj_ctx *ctx, int legacy);

/* ---- vfloor.c: what the table's own repeats leave to any projection */

/* A projected row: its projection and its measurement (> 0). */
struct vpair {
	double pred, meas;
};

/* Sorts a by projection; over the sets of rows projected alike, the sum of
 * each set's least |x - m| / m under one figure x, in % (divide by the rows
 * scored for the floor MAPE); *sets and *shared count the sets of two rows
 * or more and their rows. */
double vfloor_sum(struct vpair *a, size_t n, int *sets, int *shared);

#endif
