/*
 * scenario.c - scenario files: YAML (libyaml's document API, so every node
 * keeps its line and column for messages) into a study: blocks of axes,
 * each axis a list of alternatives, each alternative a list of field
 * assignments.  Expansion is the cross product of a block's axes (run.c).
 *
 * Layout of a file (docs/SCENARIOS.md):
 *   name: STR                 optional
 *   defaults: BLOCK           optional, merged under every block
 *   scenarios: [BLOCK, ...]   or the BLOCK keys at top level
 *   BLOCK := {model|training|parallelism|hardware|comm|cost: SECTION, where: EXPR|[EXPR]}
 *   SECTION := {key: VALUE} | [ {key: VALUE}, ... ]   (a list = alternatives)
 *   VALUE := scalar | [scalar, ...] | {from: a, to: b, mul: m | step: s}
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_csv.h"
#include "proj_internal.h"
#include "study.h"

#define MAX_FILE_BYTES (16u << 20)
#define MAX_ALTS 1000000u       /* over all axes of the file, after flattening:
				 * what the parsed study holds in memory (about
				 * 70 bytes each); a sweep of 10^7 comes from
				 * crossing several axes */
#define MAX_SCENARIOS 1e10      /* the cross product: 10^10 scenarios at 1 us
				 * each is almost three hours */
#define MAX_NODES 1500000u      /* YAML nodes of a file, counted before libyaml
				 * loads it: its document holds about 170 bytes
				 * a node (8 M scalars peaked at 1.35 GB, 1 M
				 * at 213 MB), so this is about 256 MiB; the 16
				 * MiB a file may have could hold 8 M */

cvc_status proj_scn_fail(cvc_proj_study *st, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (n)
		snprintf(st->errmsg, sizeof st->errmsg, "'%s': line %lu, column %lu: %s",
			 st->file, (unsigned long)n->start_mark.line + 1,
			 (unsigned long)n->start_mark.column + 1, msg);
	else
		snprintf(st->errmsg, sizeof st->errmsg, "'%s': %s", st->file, msg);
	return CVC_ERR_FORMAT;
}

cvc_status proj_scn_nomem(cvc_proj_study *st)
{
	snprintf(st->errmsg, sizeof st->errmsg, "'%s': out of memory", st->file);
	return CVC_ERR_NOMEM;
}

/* libyaml ran out of memory: the system's fault, not the file's (exit 1;
 * it was "expected valid YAML", exit 2). */
static cvc_status yaml_nomem(cvc_proj_study *st)
{
	snprintf(st->errmsg, sizeof st->errmsg, "'%s': out of memory while reading the YAML",
		 st->file);
	return CVC_ERR_NOMEM;
}

/* Fails at a parser mark (the event pass has no nodes yet). */
static cvc_status fail_mark(cvc_proj_study *st, yaml_mark_t mk, cvc_status rc, const char *what,
			    const char *detail)
{
	snprintf(st->errmsg, sizeof st->errmsg, "'%s': line %lu, column %lu: %s%s", st->file,
		 (unsigned long)mk.line + 1, (unsigned long)mk.column + 1, what, detail);
	return rc;
}

/*
 * What the file asks of the loader, before libyaml builds its document
 * (issue 36 items 9 and 16): at most MAX_NODES nodes (a 16 MiB list peaked
 * at 1.41 GB before the alternatives cap could fire), one document (a
 * second was dropped silently), no NUL byte in a proj_scn_scalar (it cut a name
 * short).  Parse errors are left to the loader, which reports them.
 */
static cvc_status check_events(cvc_proj_study *st, const char *text, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	size_t nodes = 0, docs = 0;
	cvc_status rc = CVC_OK;
	int done = 0;

	if (!yaml_parser_initialize(&p))
		return proj_scn_nomem(st);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done && !rc) {
		if (!yaml_parser_parse(&p, &ev)) {
			if (p.error == YAML_MEMORY_ERROR)
				rc = yaml_nomem(st);
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT && ++docs > 1)
			rc = fail_mark(st, ev.start_mark, CVC_ERR_FORMAT,
				       "a second YAML document: a scenario file holds one "
				       "(put its blocks under 'scenarios:')", "");
		else if (ev.type == YAML_SCALAR_EVENT &&
			 memchr(ev.data.scalar.value, '\0', ev.data.scalar.length)) {
			char detail[120];

			snprintf(detail, sizeof detail, "'%.60s'", (const char *)ev.data.scalar.value);
			rc = fail_mark(st, ev.start_mark, CVC_ERR_FORMAT,
				       "expected text, found a NUL byte after ", detail);
		}
		if (!rc && (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
			    ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_ALIAS_EVENT) &&
		    ++nodes > MAX_NODES) {
			char detail[160];

			snprintf(detail, sizeof detail, " %u nodes (about 256 MiB to load); narrow "
				 "the lists or split the study", MAX_NODES);
			rc = fail_mark(st, ev.start_mark, CVC_ERR_FORMAT,
				       "more YAML than a scenario file may hold:", detail);
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

/* Interns s in the study's pool; the pointer lives as long as the study. */
const char *proj_scn_intern(cvc_proj_study *st, const char *s)
{
	struct pool_str *p;
	size_t n = strlen(s);

	for (p = st->pool; p; p = p->next)
		if (strcmp(p->s, s) == 0)
			return p->s;
	p = malloc(sizeof *p + n + 1);
	if (!p)
		return NULL;
	memcpy(p->s, s, n + 1);
	p->next = st->pool;
	st->pool = p;
	return p->s;
}

const char *proj_scn_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A mapping pair's key (*k) and value (*v); returns the key's text, NULL
 * when the key is not a scalar. */
const char *proj_scn_pair(yaml_document_t *doc, const yaml_node_pair_t *pr, yaml_node_t **k,
			  yaml_node_t **v)
{
	*k = yaml_document_get_node(doc, pr->key);
	*v = yaml_document_get_node(doc, pr->value);
	return proj_scn_scalar(*k);
}

/*
 * A key written twice in one mapping: YAML loaders keep one silently.  The
 * keys seen go into an open-addressing set of pair indexes (FNV-1a), so a
 * mapping of n keys costs O(n): the pairwise check took 50 s for 100k keys
 * and never finished for 400k (issue 36 item 9).  The second of two equal
 * keys, in file order, is the one named.
 */
static cvc_status no_duplicates(cvc_proj_study *st, yaml_document_t *doc, const yaml_node_t *m)
{
	const yaml_node_pair_t *p0 = m->data.mapping.pairs.start;
	size_t n = (size_t)(m->data.mapping.pairs.top - p0), cap = 16;
	uint32_t *set;
	cvc_status rc = CVC_OK;

	while (cap < 2 * n)
		cap *= 2;
	set = calloc(cap, sizeof *set); /* pair index + 1; 0 = empty */
	if (!set)
		return proj_scn_nomem(st);
	for (size_t i = 0; i < n && !rc; i++) {
		const yaml_node_t *kn = yaml_document_get_node(doc, p0[i].key);
		const char *k = proj_scn_scalar(kn);
		size_t len, j;

		if (!k)
			continue;
		len = kn->data.scalar.length;
		for (j = cvc_hash_fnv1a(k, len) & (cap - 1); set[j]; j = (j + 1) & (cap - 1)) {
			const yaml_node_t *on = yaml_document_get_node(doc, p0[set[j] - 1].key);

			if (on->data.scalar.length == len && memcmp(on->data.scalar.value, k, len) == 0) {
				rc = proj_scn_fail(st, kn, "key '%.200s' given twice in one mapping", k);
				break;
			}
		}
		set[j] = (uint32_t)i + 1;
	}
	free(set);
	return rc;
}

/* Fields whose 0 would silently mean "the default" (kv_heads 0 = heads,
 * micro_batch 0 = 1, ...): written in a file they must be at least 1. */
static int positive_only(const char *key)
{
	static const char *const keys[] = {"kv_heads", "micro_batch", "gpus_per_node", "experts",
					   "top_k", "clusters", "local_sgd_h", "layers", "hidden", "heads",
					   "vocab", "seq", "global_batch", "moe_layer_freq"};

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (strcmp(key, keys[i]) == 0)
			return 1;
	return 0;
}

int proj_scn_gpu_mark(const cvc_proj_study *st, const char *s)
{
	for (size_t i = 0; i < st->ngpu_at; i++)
		if (st->gpu_at[i].s == s)
			return (int)i;
	return -1;
}

/* Converts one scalar node to an assignment for field f. */
static cvc_status scalar_value(cvc_proj_study *st, const yaml_node_t *n, int f, int fsdp,
			       struct assign *a)
{
	const struct proj_field *fd = &proj_fields[f];
	const char *s = proj_scn_scalar(n);

	if (!s)
		return proj_scn_fail(st, n, "expected a value for '%s'", fd->key);
	a->field = f;
	a->num = 0;
	a->str = NULL;
	if (fsdp || fd->type == PF_FLAG) {
		int v;

		if (fsdp ? proj_parse_flag(s, &v) : proj_parse_field_flag(fd, s, &v))
			return proj_scn_fail(st, n, "expected true or false for '%s'%s",
				       fsdp == 3 ? "fsdp" : fsdp == 1 ? "distributed_optimizer"
							    : fd->key,
				       !fsdp && !strcmp(fd->key, "cuda_graphs")
					       ? " (or full_iteration: the whole forward and backward)"
					       : "");
		/* the flag is a ZeRO stage: fsdp 3, distributed_optimizer 1 */
		a->num = fsdp ? fsdp * v : v;
		return CVC_OK;
	}
	switch (fd->type) {
	case PF_NUM:
		if (fd->allow_auto && strcmp(s, "auto") == 0) {
			a->num = PROJ_AUTO;
			return CVC_OK;
		}
		if (proj_parse_number(s, &a->num) && !strcmp(fd->key, "moe_layer_freq"))
			return proj_scn_fail(st, n, "expected a number for 'moe_layer_freq' (for a "
				       "Megatron-style list such as ([0]*3+[1]*58) write "
				       "moe_first_dense: 3 and moe_layer_freq: 1)");
		if (proj_parse_number(s, &a->num) || a->num < 0)
			return proj_scn_fail(st, n, "expected a non-negative number for '%s'%s", fd->key,
				       fd->allow_auto ? " or auto" : "");
		if (a->num < 1 && positive_only(fd->key))
			return proj_scn_fail(st, n, "expected a number of at least 1 for '%s' (leave it "
				       "out for the default)", fd->key);
		return CVC_OK;
	case PF_ENUM: {
		int idx = proj_enum_index(fd->names, s);

		if (idx < 0)
			return proj_scn_fail(st, n, "expected one of %s for '%s'", fd->names, fd->key);
		a->num = idx;
		return CVC_OK;
	}
	case PF_STR:
		/* a layer pattern has a character per layer */
		if (strlen(s) > (strcmp(fd->key, "layer_pattern") && strcmp(fd->key, "pp_layout")
				 ? 200u : 4096u))
			return proj_scn_fail(st, n, "value of '%s' is too long", fd->key);
		if (!strcmp(fd->key, "pp_layout") && s[strspn(s, "ELtm|(),*0123456789")])
			return proj_scn_fail(st, n, "pp_layout: expected E, t, m, L, '|', '(', ')', ',', '*' "
				       "and counts (Megatron-Core's --pipeline-model-parallel-layout), "
				       "not '%c'", s[strspn(s, "ELtm|(),*0123456789")]);
		if (!strcmp(fd->key, "layer_pattern") && s[strspn(s, "M*-E")])
			return proj_scn_fail(st, n, "layer_pattern: expected M, *, - or E for each layer "
				       "(Mamba, attention, MLP, MoE), not '%c'", s[strspn(s, "M*-E")]);
		{
			const char *names;
			char bad[80];

			if (proj_modules_bad(fd->key, s, bad, sizeof bad, &names))
				return proj_scn_fail(st, n, "%s: '%s' is not one of %s (several: one "
					       "string, 'core_attn moe_act')", fd->key, bad, names);
		}
		a->str = proj_scn_intern(st, s);
		if (a->str && !strcmp(fd->key, "gpu") && proj_scn_gpu_mark(st, a->str) < 0 &&
		    st->ngpu_at < sizeof st->gpu_at / sizeof st->gpu_at[0]) {
			st->gpu_at[st->ngpu_at].s = a->str;
			st->gpu_at[st->ngpu_at].line = (unsigned long)n->start_mark.line + 1;
			st->gpu_at[st->ngpu_at++].col = (unsigned long)n->start_mark.column + 1;
		}
		return a->str ? CVC_OK : proj_scn_nomem(st);
	case PF_FLAG:
		break;
	}
	return CVC_ERR_INTERNAL;
}

cvc_status proj_scn_alt_push(cvc_proj_study *st, struct axis *ax, const struct assign *as, int n)
{
	struct alt *al;

	if (st->nalts >= MAX_ALTS)
		return proj_scn_fail(st, NULL, "too many alternatives: more than %u over all axes (narrow "
			       "the ranges or split the study)", MAX_ALTS);
	st->nalts++;
	if (cvc_grow(&ax->alts, &ax->cap, ax->nalt + 1, sizeof *ax->alts, 8) != CVC_OK)
		return proj_scn_nomem(st);
	al = &ax->alts[ax->nalt];
	al->a = malloc((size_t)(n ? n : 1) * sizeof *as);
	if (!al->a)
		return proj_scn_nomem(st);
	memcpy(al->a, as, (size_t)n * sizeof *as);
	al->n = n;
	ax->nalt++;
	return CVC_OK;
}

void proj_scn_axis_release(struct axis *ax)
{
	for (size_t i = 0; i < ax->nalt; i++)
		free(ax->alts[i].a);
	free(ax->alts);
	memset(ax, 0, sizeof *ax);
}

/* The values a field takes: a scalar, a list, or a range mapping. */
static cvc_status field_values(cvc_proj_study *st, yaml_document_t *doc, yaml_node_t *v,
			       int f, int fsdp, struct axis *ax)
{
	struct assign a;
	cvc_status rc;

	if (v->type == YAML_SCALAR_NODE) {
		if ((rc = scalar_value(st, v, f, fsdp, &a)))
			return rc;
		return proj_scn_alt_push(st, ax, &a, 1);
	}
	if (v->type == YAML_SEQUENCE_NODE) {
		yaml_node_item_t *it;

		if (v->data.sequence.items.start == v->data.sequence.items.top)
			return proj_scn_fail(st, v, "expected at least one value in the list");
		for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
			yaml_node_t *e = yaml_document_get_node(doc, *it);

			if ((rc = scalar_value(st, e, f, fsdp, &a)))
				return rc;
			if ((rc = proj_scn_alt_push(st, ax, &a, 1)))
				return rc;
		}
		return CVC_OK;
	}
	/* range: {from, to, mul | step} */
	{
		double from = NAN, to = NAN, mul = NAN, step = NAN;
		yaml_node_pair_t *pr;

		if (proj_fields[f].type != PF_NUM)
			return proj_scn_fail(st, v, "a range needs a numeric field, '%s' is not",
				       proj_fields[f].key);
		if ((rc = no_duplicates(st, doc, v)))
			return rc;
		for (pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top; pr++) {
			yaml_node_t *k, *x;
			const char *ks = proj_scn_pair(doc, pr, &k, &x), *xs = proj_scn_scalar(x);
			double d;

			if (!ks)
				return proj_scn_fail(st, k, "expected from, to, mul or step");
			if (!xs || proj_parse_number(xs, &d))
				return proj_scn_fail(st, x, "expected a number for '%s'", ks);
			if (!strcmp(ks, "from"))
				from = d;
			else if (!strcmp(ks, "to"))
				to = d;
			else if (!strcmp(ks, "mul"))
				mul = d;
			else if (!strcmp(ks, "step"))
				step = d;
			else
				return proj_scn_fail(st, k, "expected from, to, mul or step");
		}
		if (isnan(from) || isnan(to))
			return proj_scn_fail(st, v, "a range needs both 'from' and 'to'");
		if (isnan(mul) == isnan(step))
			return proj_scn_fail(st, v, "a range needs exactly one of 'mul' or 'step'");
		if (!isnan(mul) && (mul <= 1 || from <= 0))
			return proj_scn_fail(st, v, "'mul' must be > 1 and 'from' > 0");
		if (!isnan(step) && step <= 0)
			return proj_scn_fail(st, v, "'step' must be > 0");
		if (from < 0 || to < from)
			return proj_scn_fail(st, v, "expected 0 <= from <= to");
		if (from < 1 && positive_only(proj_fields[f].key))
			return proj_scn_fail(st, v, "expected 'from' of at least 1 for '%s'",
				       proj_fields[f].key);
		a.field = f;
		a.str = NULL;
		/* a relative tolerance keeps 0.1-step ranges from losing their end */
		for (double x = from; x <= to * (1 + 1e-12); ) {
			a.num = x;
			if ((rc = proj_scn_alt_push(st, ax, &a, 1)))
				return rc;
			if (!isnan(mul))
				x *= mul;
			else
				x = from + step * (double)ax->nalt;
		}
		return CVC_OK;
	}
}

/* Cross product of per-field axes into one flattened axis (a section given
 * as a list of mappings: each mapping may itself hold lists). */
static cvc_status flatten(cvc_proj_study *st, struct axis *parts, size_t n, struct axis *out)
{
	size_t idx[PROJ_MAX_FIELDS_PER_SECTION] = {0};
	struct assign as[PROJ_MAX_FIELDS_PER_SECTION];
	cvc_status rc;

	if (n > PROJ_MAX_FIELDS_PER_SECTION)
		return proj_scn_fail(st, NULL, "too many keys in one section");
	for (;;) {
		size_t i;

		for (i = 0; i < n; i++)
			as[i] = parts[i].alts[idx[i]].a[0];
		if ((rc = proj_scn_alt_push(st, out, as, (int)n)))
			return rc;
		for (i = n; i-- > 0;) {
			if (++idx[i] < parts[i].nalt)
				break;
			idx[i] = 0;
		}
		if (i == (size_t)-1 || n == 0)
			return CVC_OK;
	}
}

static cvc_status block_add_axis(cvc_proj_study *st, struct block *b, struct axis *ax)
{
	if (cvc_grow(&b->axes, &b->capaxes, b->naxes + 1, sizeof *b->axes, 16) != CVC_OK)
		return proj_scn_nomem(st);
	b->axes[b->naxes++] = *ax;
	memset(ax, 0, sizeof *ax);
	return CVC_OK;
}

/* One mapping of a section: each key becomes an axis in parts[]. */
/* The fields a section's keys set so far, and the key that set each. */
struct seen {
	int f[PROJ_MAX_FIELDS_PER_SECTION];
	const char *k[PROJ_MAX_FIELDS_PER_SECTION];
	size_t n;
};

/* outer: the section's fields when m is a mapping inside it (hardware's
 * scale), so that scale: {compute: 2} and scale_compute: 3 are one field
 * named twice; NULL for a section's own mapping. */
static cvc_status section_map(cvc_proj_study *st, yaml_document_t *doc, const char *sec,
			      yaml_node_t *m, struct axis *parts, size_t *nparts,
			      const char *prefix, struct seen *outer)
{
	yaml_node_pair_t *pr;
	cvc_status rc;
	int named;
	struct seen local = {.n = 0}, *sn = outer ? outer : &local;

	if ((rc = no_duplicates(st, doc, m)))
		return rc;
	/* a model by name or by its config.json first: the other keys override it */
	for (pr = m->data.mapping.pairs.start, named = 0; !strcmp(sec, "model") && !prefix[0] &&
							  pr < m->data.mapping.pairs.top; pr++) {
		yaml_node_t *k, *v;
		const char *ks = proj_scn_pair(doc, pr, &k, &v);

		if (!ks || (strcmp(ks, "arch") && strcmp(ks, "config")))
			continue;
		if (named++)
			return proj_scn_fail(st, k, "give the model by arch or by config, not both");
		if ((rc = proj_scn_arch_parts(st, v, !strcmp(ks, "config"), proj_scn_scalar(v), parts, nparts)))
			return rc;
	}
	if (!strcmp(sec, "model") && !prefix[0] && !named && (rc = proj_scn_name_alone(st, doc, m)))
		return rc;
	for (pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
		yaml_node_t *k, *v;
		const char *ks = proj_scn_pair(doc, pr, &k, &v);
		char key[80];
		int f, fsdp = 0;

		if (!ks)
			return proj_scn_fail(st, k, "expected a key");
		if (!strcmp(sec, "model") && !prefix[0] && (!strcmp(ks, "arch") || !strcmp(ks, "config")))
			continue;
		snprintf(key, sizeof key, "%s%s", prefix, ks);
		if (!prefix[0] && strcmp(sec, "hardware") == 0 && strcmp(ks, "scale") == 0) {
			/* hardware: {scale: {compute: 4, inter_bw: 1}} */
			if (v->type != YAML_MAPPING_NODE)
				return proj_scn_fail(st, v, "expected a mapping of scale factors");
			if ((rc = section_map(st, doc, sec, v, parts, nparts, "scale_", sn)))
				return rc;
			continue;
		}
		if (strcmp(sec, "training") == 0 &&
		    (strcmp(ks, "fsdp") == 0 || strcmp(ks, "distributed_optimizer") == 0)) {
			fsdp = strcmp(ks, "fsdp") == 0 ? 3 : 1;
			f = proj_field_find("training", "zero");
		} else {
			f = proj_field_find(sec, key);
		}
		if (f < 0)
			return proj_scn_fail(st, k, "unknown key '%s' in section '%s'", key, sec);
		if (*nparts >= PROJ_MAX_FIELDS_PER_SECTION)
			return proj_scn_fail(st, k, "too many keys in section '%s'", sec);
		/* two names of one field (seq and seq_len, head_dim and
		 * kv_channels, zero and fsdp): the last one won, silently */
		for (size_t i = 0; i < sn->n; i++)
			if (sn->f[i] == f)
				return proj_scn_fail(st, k, "'%s' and '%s' set the same field ('%s'): give "
					       "one", ks, sn->k[i], proj_fields[f].key);
		if (sn->n < PROJ_MAX_FIELDS_PER_SECTION) {
			sn->f[sn->n] = f;
			sn->k[sn->n++] = ks;
		}
		if ((rc = field_values(st, doc, v, f, fsdp, &parts[*nparts]))) {
			/* not yet counted in *nparts: the caller would not free it (fuzzing) */
			proj_scn_axis_release(&parts[*nparts]);
			return rc;
		}
		(*nparts)++;
	}
	return CVC_OK;
}

static cvc_status parse_section(cvc_proj_study *st, yaml_document_t *doc, struct block *b,
				const char *sec, yaml_node_t *v)
{
	struct axis parts[PROJ_MAX_FIELDS_PER_SECTION];
	size_t nparts = 0;
	cvc_status rc = CVC_OK;

	memset(parts, 0, sizeof parts);
	if (strcmp(sec, "parallelism") == 0 && v->type == YAML_SCALAR_NODE &&
	    strcmp(proj_scn_scalar(v), "auto") == 0) {
		/* `parallelism: auto` = every valid tp x pp */
		struct assign a[2] = {{proj_field_find(sec, "tp"), PROJ_AUTO, NULL},
				      {proj_field_find(sec, "pp"), PROJ_AUTO, NULL}};
		struct axis ax = {0};

		if ((rc = proj_scn_alt_push(st, &ax, a, 2)) || (rc = block_add_axis(st, b, &ax)))
			proj_scn_axis_release(&ax);
		return rc;
	}
	if (v->type == YAML_SCALAR_NODE && !strcmp(sec, "model")) {
		/* `model: NAME`: the catalog's model */
		if ((rc = proj_scn_arch_parts(st, v, 0, proj_scn_scalar(v), parts, &nparts)))
			goto out;
		for (size_t i = 0; i < nparts; i++)
			if ((rc = block_add_axis(st, b, &parts[i])))
				goto out;
	} else if (v->type == YAML_MAPPING_NODE) {
		if ((rc = section_map(st, doc, sec, v, parts, &nparts, "", NULL)))
			goto out;
		for (size_t i = 0; i < nparts; i++)
			if ((rc = block_add_axis(st, b, &parts[i])))
				goto out;
	} else if (v->type == YAML_SEQUENCE_NODE) {
		/* alternatives: each mapping flattened, all into one axis */
		struct axis ax = {0};
		yaml_node_item_t *it;

		if (v->data.sequence.items.start == v->data.sequence.items.top) {
			rc = proj_scn_fail(st, v, "expected at least one mapping in '%s'", sec);
			goto out;
		}
		for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
			yaml_node_t *e = yaml_document_get_node(doc, *it);

			nparts = 0;
			if (e && e->type == YAML_SCALAR_NODE && !strcmp(sec, "model")) {
				rc = proj_scn_arch_parts(st, e, 0, proj_scn_scalar(e), parts, &nparts);
			} else if (!e || e->type != YAML_MAPPING_NODE) {
				rc = proj_scn_fail(st, e, "expected a mapping of '%s' keys", sec);
				break;
			} else {
				rc = section_map(st, doc, sec, e, parts, &nparts, "", NULL);
			}
			if (!rc)
				rc = flatten(st, parts, nparts, &ax);
			for (size_t i = 0; i < nparts; i++)
				proj_scn_axis_release(&parts[i]);
			nparts = 0;
			if (rc)
				break;
		}
		if (!rc)
			rc = block_add_axis(st, b, &ax);
		proj_scn_axis_release(&ax);
	} else {
		rc = proj_scn_fail(st, v, "expected a mapping or a list of mappings for '%s'", sec);
	}
out:
	for (size_t i = 0; i < nparts; i++)
		proj_scn_axis_release(&parts[i]);
	return rc;
}

static cvc_status add_where(cvc_proj_study *st, struct block *b, yaml_node_t *n)
{
	const char *s = proj_scn_scalar(n);
	char err[160];
	proj_expr *e;

	if (!s)
		return proj_scn_fail(st, n, "expected an expression string");
	if (b->nwhere >= PROJ_MAX_WHERE)
		return proj_scn_fail(st, n, "too many where: filters (limit %d)", PROJ_MAX_WHERE);
	e = proj_expr_compile(s, err, sizeof err);
	if (!e) {
		/* the column inside the expression, shifted by the node's column
		 * would be wrong for quoted scalars: report both */
		return proj_scn_fail(st, n, "in where: %s", err);
	}
	b->where[b->nwhere++] = e;
	return CVC_OK;
}

static cvc_status parse_block(cvc_proj_study *st, yaml_document_t *doc, struct block *b,
			      yaml_node_t *m)
{
	static const char *const sections[] = {"model", "training", "parallelism",
					       "hardware", "comm", "cost"};
	yaml_node_pair_t *pr;
	cvc_status rc;

	/* a section given twice merges, later keys winning (docs/SCENARIOS.md);
	 * a key twice inside one section is an error (section_map) */
	if (m->type != YAML_MAPPING_NODE)
		return proj_scn_fail(st, m, "expected a mapping of sections");
	for (pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
		yaml_node_t *k, *v;
		const char *ks = proj_scn_pair(doc, pr, &k, &v);
		size_t i;

		if (!ks)
			return proj_scn_fail(st, k, "expected a section name");
		if (strcmp(ks, "where") == 0) {
			if (v->type == YAML_SEQUENCE_NODE) {
				yaml_node_item_t *it;

				for (it = v->data.sequence.items.start;
				     it < v->data.sequence.items.top; it++)
					if ((rc = add_where(st, b, yaml_document_get_node(doc, *it))))
						return rc;
			} else if ((rc = add_where(st, b, v))) {
				return rc;
			}
			continue;
		}
		if (strcmp(ks, "name") == 0 || strcmp(ks, "scenarios") == 0 ||
		    strcmp(ks, "defaults") == 0)
			continue; /* top-level keys, handled by the caller */
		for (i = 0; i < sizeof sections / sizeof sections[0]; i++)
			if (strcmp(ks, sections[i]) == 0)
				break;
		if (i == sizeof sections / sizeof sections[0])
			return proj_scn_fail(st, k,
				       "unknown section '%s' (expected model, training, "
				       "parallelism, hardware, comm, cost or where)", ks);
		if ((rc = parse_section(st, doc, b, sections[i], v)))
			return rc;
	}
	return CVC_OK;
}

/*
 * Folds single-alternative axes into the block's base scenario when no
 * earlier multi-alternative axis touches the same field (then applying the
 * value once gives the same result as applying it per scenario), and counts
 * the block's size.
 */
static void block_finish(struct block *b)
{
	size_t w = 0;

	b->size = 1;
	for (size_t i = 0; i < b->naxes; i++) {
		struct axis *ax = &b->axes[i];
		int fold = ax->nalt == 1;

		for (size_t j = 0; fold && j < w; j++)
			for (size_t t = 0; fold && t < b->axes[j].nalt; t++)
				for (int p = 0; fold && p < b->axes[j].alts[t].n; p++)
					for (int q = 0; q < ax->alts[0].n; q++)
						if (b->axes[j].alts[t].a[p].field ==
						    ax->alts[0].a[q].field)
							fold = 0;
		if (fold) {
			for (int q = 0; q < ax->alts[0].n; q++)
				proj_assign(&b->base, &ax->alts[0].a[q]);
			proj_scn_axis_release(ax);
			continue;
		}
		b->axes[w++] = *ax;
		b->size *= (double)ax->nalt;
	}
	b->naxes = w;
}

void proj_assign(cvc_proj_scenario *sc, const struct assign *a)
{
	if (proj_fields[a->field].type == PF_STR)
		*(const char **)((char *)sc + proj_fields[a->field].offset) = a->str;
	else
		proj_field_set_num(sc, a->field, a->num);
}

static cvc_status new_block(cvc_proj_study *st, struct block **out)
{
	struct block *v;

	if (st->nblocks >= PROJ_MAX_BLOCKS)
		return proj_scn_fail(st, NULL, "too many scenario blocks (limit %d)", PROJ_MAX_BLOCKS);
	v = realloc(st->blocks, (st->nblocks + 1) * sizeof *v);
	if (!v)
		return proj_scn_nomem(st);
	st->blocks = v;
	memset(&v[st->nblocks], 0, sizeof v[0]);
	cvc_proj_scenario_default(&v[st->nblocks].base);
	v[st->nblocks].base.study = st->name;
	*out = &v[st->nblocks++];
	return CVC_OK;
}

static cvc_status parse_doc(cvc_proj_study *st, yaml_document_t *doc)
{
	yaml_node_t *root = yaml_document_get_root_node(doc);
	yaml_node_t *defaults = NULL, *scen = NULL, *other = NULL;
	yaml_node_pair_t *pr;
	struct block *b;
	cvc_status rc;

	if (!root)
		return proj_scn_fail(st, NULL, "line 1: expected a mapping (the file is empty)");
	if (root->type != YAML_MAPPING_NODE)
		return proj_scn_fail(st, root, "expected a mapping at the top level");
	for (pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k, *v;
		const char *ks = proj_scn_pair(doc, pr, &k, &v);

		if (!ks) {
			other = other ? other : k;
			continue;
		}
		if (strcmp(ks, "name") == 0) {
			const char *s = proj_scn_scalar(v);

			if (!s || strlen(s) >= sizeof st->name)
				return proj_scn_fail(st, v, "expected a short study name");
			snprintf(st->name, sizeof st->name, "%s", s);
		} else if (strcmp(ks, "defaults") == 0) {
			defaults = v;
		} else if (strcmp(ks, "scenarios") == 0) {
			scen = v;
			if (v->type != YAML_SEQUENCE_NODE)
				return proj_scn_fail(st, v, "expected a list of scenario blocks");
		} else if (!other) {
			other = k; /* a block's section, or a typo: known once scenarios is */
		}
	}
	/* beside a scenarios list, a top-level key of any other name is a
	 * typo (`default:`), never a section: it was ignored, silently */
	if (scen && other)
		return proj_scn_fail(st, other, "unknown top-level key '%.80s' beside 'scenarios' "
				     "(expected name, defaults or scenarios)",
				     proj_scn_scalar(other) ? proj_scn_scalar(other) : "");
	if (scen) {
		yaml_node_item_t *it;

		for (it = scen->data.sequence.items.start; it < scen->data.sequence.items.top;
		     it++) {
			if ((rc = new_block(st, &b)))
				return rc;
			if (defaults && (rc = parse_block(st, doc, b, defaults)))
				return rc;
			if ((rc = parse_block(st, doc, b, yaml_document_get_node(doc, *it))))
				return rc;
		}
	} else {
		if ((rc = new_block(st, &b)))
			return rc;
		if (defaults && (rc = parse_block(st, doc, b, defaults)))
			return rc;
		if ((rc = parse_block(st, doc, b, root)))
			return rc;
	}
	for (size_t i = 0; i < st->nblocks; i++)
		block_finish(&st->blocks[i]);
	if (cvc_proj_study_size(st) > MAX_SCENARIOS)
		return proj_scn_fail(st, NULL, "expands to %.3g scenarios, more than the %.0e a study may "
			       "have (narrow the ranges or split the study)",
			       cvc_proj_study_size(st), MAX_SCENARIOS);
	return CVC_OK;
}

cvc_status cvc_proj_study_parse(const char *name, const char *text, size_t len,
				cvc_proj_study **out)
{
	cvc_proj_study *st = calloc(1, sizeof *st);
	yaml_parser_t parser;
	yaml_document_t doc;
	int have_parser = 0, have_doc = 0;
	cvc_status rc = CVC_OK;
	const char *base;

	*out = st;
	if (!st)
		return CVC_ERR_NOMEM;
	snprintf(st->file, sizeof st->file, "%s", name ? name : "<scenarios>");
	base = strrchr(st->file, '/');
	base = base ? base + 1 : st->file;
	{
		size_t n = strlen(base);

		if (n > 5 && strcmp(base + n - 5, ".yaml") == 0)
			n -= 5;
		if (n >= sizeof st->name)
			n = sizeof st->name - 1;
		memcpy(st->name, base, n);
		st->name[n] = 0;
	}
	if (len > MAX_FILE_BYTES) {
		rc = proj_scn_fail(st, NULL, "file larger than %u bytes", MAX_FILE_BYTES);
		goto out;
	}
	if ((rc = check_events(st, text, len)))
		goto out;
	if (!yaml_parser_initialize(&parser)) {
		rc = proj_scn_nomem(st);
		goto out;
	}
	have_parser = 1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_mark_t mk = parser.problem_mark;

		/* out of memory is not the file's fault (it was "expected valid YAML") */
		if (parser.error == YAML_MEMORY_ERROR) {
			rc = yaml_nomem(st);
			goto out;
		}

		snprintf(st->errmsg, sizeof st->errmsg,
			 "'%s': line %lu, column %lu: expected valid YAML (%s)", st->file,
			 (unsigned long)mk.line + 1, (unsigned long)mk.column + 1,
			 parser.problem ? parser.problem : "parse error");
		rc = CVC_ERR_FORMAT;
		goto out;
	}
	have_doc = 1;
	rc = parse_doc(st, &doc);
out:
	if (have_doc)
		yaml_document_delete(&doc);
	if (have_parser)
		yaml_parser_delete(&parser);
	return rc;
}

cvc_status cvc_proj_study_load(const char *path, cvc_proj_study **out)
{
	char *buf = NULL, err[sizeof((cvc_proj_study *)0)->errmsg];
	size_t len = 0;
	cvc_status rc;

	*out = NULL;
	rc = cvc_file_read(path, MAX_FILE_BYTES, &buf, &len, err, sizeof err);
	if (rc) {
		/* a study that holds only the message, for cvc_proj_study_errmsg */
		cvc_proj_study *st = rc == CVC_ERR_NOMEM ? NULL : calloc(1, sizeof *st);

		if (!st)
			return CVC_ERR_NOMEM;
		snprintf(st->errmsg, sizeof st->errmsg, "%s", err);
		*out = st;
		return rc;
	}
	rc = cvc_proj_study_parse(path, buf, len, out);
	free(buf);
	return rc;
}

extern const char cvc_proj_default_yaml[];
extern const size_t cvc_proj_default_yaml_len;

cvc_status cvc_proj_study_default(cvc_proj_study **out)
{
	return cvc_proj_study_parse("default.yaml", cvc_proj_default_yaml,
				    cvc_proj_default_yaml_len, out);
}

void cvc_proj_study_free(cvc_proj_study *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nblocks; i++) {
		struct block *b = &st->blocks[i];

		for (size_t j = 0; j < b->naxes; j++)
			proj_scn_axis_release(&b->axes[j]);
		free(b->axes);
		for (int j = 0; j < b->nwhere; j++)
			proj_expr_free(b->where[j]);
	}
	free(st->blocks);
	proj_archs_free(st->archs);
	proj_archs_free(st->configs);
	while (st->pool) {
		struct pool_str *n = st->pool->next;

		free(st->pool);
		st->pool = n;
	}
	free(st);
}

const char *cvc_proj_study_errmsg(const cvc_proj_study *st)
{
	return st ? st->errmsg : "";
}

const char *cvc_proj_study_name(const cvc_proj_study *st)
{
	return st ? st->name : "";
}

double cvc_proj_study_size(const cvc_proj_study *st)
{
	double n = 0;

	for (size_t i = 0; st && i < st->nblocks; i++)
		n += st->blocks[i].size;
	return n;
}
