/*
 * archs.c - the catalog of open models' published configurations
 * (projector/archs.yaml, compiled in): each entry a name, its aliases, the
 * configuration's source and where its values were read, and the scenario
 * fields they set.  `model: NAME` in a scenario file and validate's rows
 * that name a model look it up here (docs/SCENARIOS.md "Models by name").
 * Names match in any case with punctuation ignored, so the Hugging Face
 * name, the published table's and cvc's own all find the entry.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "cvc/cvc_base.h"
#include "proj_internal.h"

extern const char cvc_proj_archs_yaml[];
extern const size_t cvc_proj_archs_yaml_len;

struct str_node {
	struct str_node *next;
	char s[];
};

#define ARCHS_MEMO 64

struct proj_archs {
	struct proj_arch *e;
	size_t n, cap;
	struct str_node *pool; /* every string an entry points to */
	/* names looked up and what each found (NULL: nothing), direct-mapped
	 * by hash, while the set holds memo_n entries: validate asks for each
	 * row's model several times, a table's rows repeat their few models,
	 * and a lookup normalises every name and alias of the catalog (a
	 * memo of the last name alone missed on every row of a table whose
	 * models alternate: a tenth of validate's time) */
	struct {
		char q[128];
		const struct proj_arch *e;
		size_t n;               /* the set's size when found; 0: empty */
	} memo[ARCHS_MEMO];
};

const char *proj_archs_keep(proj_archs *a, const char *s)
{
	size_t n = strlen(s);
	struct str_node *p = malloc(sizeof *p + n + 1);

	if (!p)
		return NULL;
	memcpy(p->s, s, n + 1);
	p->next = a->pool;
	a->pool = p;
	return p->s;
}

proj_archs *proj_archs_new(void)
{
	return calloc(1, sizeof(proj_archs));
}

void proj_archs_free(proj_archs *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->e[i].aliases);
	free(a->e);
	while (a->pool) {
		struct str_node *n = a->pool->next;

		free(a->pool);
		a->pool = n;
	}
	free(a);
}

size_t proj_archs_count(const proj_archs *a)
{
	return a ? a->n : 0;
}

const struct proj_arch *proj_archs_at(const proj_archs *a, size_t i)
{
	return a && i < a->n ? &a->e[i] : NULL;
}

/* A name as compared: lower case, letters, digits and '.' only
 * ("Qwen/Qwen3-30B-A3B" -> "qwenqwen330ba3b"); text in parentheses dropped
 * ("DeepSeek-LLM-67B (dense)").  The '.' stays because it is part of a
 * version or a size: without it "gpt3-1.3b" would be "gpt3-13b".  Returns
 * 0, or -1 when it does not fit. */
static int norm(const char *s, char *out, size_t len)
{
	size_t n = 0;
	int depth = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '(')
			depth++;
		else if (c == ')' && depth > 0)
			depth--;
		else if (!depth && (isalnum(c) || c == '.')) {
			if (n + 1 >= len)
				return -1;
			out[n++] = (char)tolower(c);
		}
	}
	out[n] = 0;
	return n ? 0 : -1;
}

/* Whether name is s, or the part of s after its organisation ("org/name"). */
static int same(const char *name_n, const char *s)
{
	char t[256];
	const char *slash = strchr(s, '/');

	if (!norm(s, t, sizeof t) && !strcmp(t, name_n))
		return 1;
	return slash && !norm(slash + 1, t, sizeof t) && !strcmp(t, name_n);
}

/* The entry one of whose names is name_n exactly. */
static const struct proj_arch *exact(const proj_archs *a, const char *name_n)
{
	for (size_t i = 0; i < a->n; i++) {
		const struct proj_arch *e = &a->e[i];

		if (same(name_n, e->name))
			return e;
		for (size_t j = 0; j < e->naliases; j++)
			if (same(name_n, e->aliases[j]))
				return e;
	}
	return NULL;
}

/* Whether s (or its part after the organisation) starts with prefix_n. */
static int starts(const char *prefix_n, const char *s)
{
	char t[256];
	const char *slash = strchr(s, '/');
	size_t n = strlen(prefix_n);

	if (!norm(s, t, sizeof t) && !strncmp(t, prefix_n, n))
		return 1;
	return slash && !norm(slash + 1, t, sizeof t) && !strncmp(t, prefix_n, n);
}

/* The one entry a name of which starts with prefix_n; NULL when none or
 * more than one. */
static const struct proj_arch *by_prefix(const proj_archs *a, const char *prefix_n)
{
	const struct proj_arch *hit = NULL;

	for (size_t i = 0; i < a->n; i++) {
		const struct proj_arch *e = &a->e[i];
		int m = starts(prefix_n, e->name);

		for (size_t j = 0; !m && j < e->naliases; j++)
			m = starts(prefix_n, e->aliases[j]);
		if (m && hit)
			return NULL;
		if (m)
			hit = e;
	}
	return hit;
}

/* A model's parameters in billions as published totals count them (the
 * multi-token-prediction modules left out: DeepSeek-V3's 671B); 0 when its
 * scenario does not finalize. */
static double params_b(const struct proj_arch *e)
{
	cvc_proj_scenario sc;
	double t;

	cvc_proj_scenario_default(&sc);
	proj_arch_apply(e, &sc);
	t = proj_params_total_b(&sc, NULL);
	return isfinite(t) ? t : 0;
}

/* e when its parameters are size billions within 10%, else NULL. */
static const struct proj_arch *sized(const struct proj_arch *e, double size)
{
	return e && fabs(params_b(e) / size - 1) <= 0.10 ? e : NULL;
}

/*
 * A name as published tables print it, a size last ("DeepSeek V3 671B",
 * "Qwen3 MoE 30B", "GLM 4.5 Air 106B"): the entry named by the words
 * before the size, or else the one entry whose name starts with all the
 * words ("qwen3-30b-a3b"), "MoE" left out of both, taken only when the
 * entry's parameters are that size within 10% (so "GPT3-5B" is not
 * gpt3-175b, whose alias "gpt3" the words before the size name).
 */
static const struct proj_arch *by_size(const proj_archs *a, const char *name)
{
	char w[16][64], head[256] = "", all[256] = "";
	int nw = 0, depth = 0;
	size_t len;
	double size, unit;
	char *end;
	const struct proj_arch *e;

	for (const char *p = name; *p && nw < 16;) {
		size_t n = 0;

		if (*p == '(' || *p == ')') {
			depth += *p == '(' ? 1 : depth > 0 ? -1 : 0;
			p++;
			continue;
		}
		while (*p && (isalnum((unsigned char)*p) || *p == '.') && n + 1 < sizeof w[0])
			w[nw][n++] = (char)tolower((unsigned char)*p++);
		w[nw][n] = 0;
		if (n && !depth)
			nw++;
		if (!n)
			p++;
	}
	if (nw < 2)
		return NULL;
	len = strlen(w[nw - 1]);
	size = strtod(w[nw - 1], &end);
	unit = len > 1 && end == w[nw - 1] + len - 1
		       ? (w[nw - 1][len - 1] == 'b' ? 1 : w[nw - 1][len - 1] == 'm' ? 1e-3
						 : w[nw - 1][len - 1] == 't' ? 1e3 : 0)
		       : 0;
	if (!(size > 0) || !(unit > 0) || !isdigit((unsigned char)w[nw - 1][0]))
		return NULL;
	size *= unit;
	for (int i = 0; i < nw; i++) {
		if (!strcmp(w[i], "moe"))
			continue;
		if (i < nw - 1 && strlen(head) + strlen(w[i]) < sizeof head)
			strcat(head, w[i]);
		if (strlen(all) + strlen(w[i]) < sizeof all)
			strcat(all, w[i]);
	}
	if ((e = sized(head[0] ? exact(a, head) : NULL, size)))
		return e;
	return sized(by_prefix(a, all), size);
}

const struct proj_arch *proj_archs_find(proj_archs *a, const char *name)
{
	char n[256];
	const struct proj_arch *e;
	size_t len, slot;

	if (!a || !name)
		return NULL;
	len = strlen(name);
	slot = (size_t)(cvc_hash_fnv1a(name, len) % ARCHS_MEMO);
	if (a->memo[slot].n == a->n && a->n && !strcmp(a->memo[slot].q, name))
		return a->memo[slot].e;
	if (norm(name, n, sizeof n))
		e = NULL;
	else if (!(e = exact(a, n)))
		e = by_size(a, name);
	if (len < sizeof a->memo[slot].q) {
		memcpy(a->memo[slot].q, name, len + 1);
		a->memo[slot].e = e;
		a->memo[slot].n = a->n;
	}
	return e;
}

static cvc_status fail(char *err, size_t errlen, const yaml_node_t *n, const char *fmt, ...)
	CVC_PRINTF(4, 5);

static cvc_status fail(char *err, size_t errlen, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (n)
		snprintf(err, errlen, "'archs.yaml': line %lu: %s",
			 (unsigned long)n->start_mark.line + 1, msg);
	else
		snprintf(err, errlen, "'archs.yaml': %s", msg);
	return CVC_ERR_INTERNAL;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

cvc_status proj_arch_set(proj_archs *a, struct proj_arch *e, const char *key, const char *val,
			 char *why, size_t whylen)
{
	int f = proj_field_find(NULL, key);
	struct proj_arch_kv *kv;

	if (f < 0) {
		snprintf(why, whylen, "unknown field '%s'", key);
		return CVC_ERR_FORMAT;
	}
	for (kv = e->kv; kv < e->kv + e->nkv; kv++)
		if (kv->field == f)
			break;
	if (kv == e->kv + e->nkv) {
		if (e->nkv >= PROJ_ARCH_MAX_KV) {
			snprintf(why, whylen, "more than %d fields", PROJ_ARCH_MAX_KV);
			return CVC_ERR_FORMAT;
		}
		e->nkv++;
	}
	kv->field = f;
	kv->num = 0;
	kv->str = NULL;
	switch (proj_fields[f].type) {
	case PF_NUM:
		if (proj_parse_number(val, &kv->num) || kv->num < 0) {
			snprintf(why, whylen, "'%s': expected a number, not '%.40s'", key, val);
			return CVC_ERR_FORMAT;
		}
		break;
	case PF_ENUM:
		if ((kv->num = proj_enum_index(proj_fields[f].names, val)) < 0) {
			snprintf(why, whylen, "'%s': expected one of %s, not '%.40s'", key,
				 proj_fields[f].names, val);
			return CVC_ERR_FORMAT;
		}
		break;
	case PF_FLAG: {
		int v;

		if (proj_parse_field_flag(&proj_fields[f], val, &v)) {
			snprintf(why, whylen, "'%s': expected true or false", key);
			return CVC_ERR_FORMAT;
		}
		kv->num = v;
		break;
	}
	case PF_STR:
		if (!(kv->str = proj_archs_keep(a, val)))
			return CVC_ERR_NOMEM;
		break;
	}
	return CVC_OK;
}

/* One entry's `model` mapping. */
static cvc_status read_model(proj_archs *a, yaml_document_t *doc, yaml_node_t *m,
			     struct proj_arch *e, char *err, size_t errlen)
{
	if (!m || m->type != YAML_MAPPING_NODE)
		return fail(err, errlen, m, "expected a mapping of model fields");
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));
		const char *v = scalar(yaml_document_get_node(doc, p->value));
		char why[200];
		cvc_status rc;

		if (!k || !v)
			return fail(err, errlen, m, "expected key: value pairs");
		if ((rc = proj_arch_set(a, e, k, v, why, sizeof why)))
			return rc == CVC_ERR_NOMEM ? rc : fail(err, errlen, m, "%s: %s", e->name, why);
	}
	return CVC_OK;
}

/* One entry of the catalog's list. */
static cvc_status read_entry(proj_archs *a, yaml_document_t *doc, yaml_node_t *m, char *err,
			     size_t errlen)
{
	struct proj_arch *e;
	cvc_status rc = CVC_OK;

	if (m->type != YAML_MAPPING_NODE)
		return fail(err, errlen, m, "expected a mapping for each model");
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		struct proj_arch *v = realloc(a->e, cap * sizeof *v);

		if (!v)
			return CVC_ERR_NOMEM;
		a->e = v;
		a->cap = cap;
	}
	e = &a->e[a->n++];
	memset(e, 0, sizeof *e);
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
	     !rc && p < m->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char **slot = NULL;

		if (!k)
			return fail(err, errlen, m, "expected a key");
		if (!strcmp(k, "model")) {
			rc = read_model(a, doc, v, e, err, errlen);
			continue;
		}
		if (!strcmp(k, "aliases") && v && v->type == YAML_SEQUENCE_NODE) {
			size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);

			if (!(e->aliases = calloc(n ? n : 1, sizeof *e->aliases)))
				return CVC_ERR_NOMEM;
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top; it++) {
				const char *s = scalar(yaml_document_get_node(doc, *it));

				if (!s)
					return fail(err, errlen, v, "expected alias names");
				if (!(e->aliases[e->naliases++] = proj_archs_keep(a, s)))
					return CVC_ERR_NOMEM;
			}
			continue;
		}
		if (!strcmp(k, "name"))
			slot = &e->name;
		else if (!strcmp(k, "source"))
			slot = &e->source;
		else if (!strcmp(k, "read"))
			slot = &e->read;
		if (!slot || !scalar(v))
			return fail(err, errlen, m, "unexpected key '%s'", k);
		if (!(*slot = proj_archs_keep(a, scalar(v))))
			return CVC_ERR_NOMEM;
	}
	if (!rc && (!e->name || !e->source || !e->read || !e->nkv))
		return fail(err, errlen, m, "each model needs name, source, read and model");
	return rc;
}

cvc_status proj_archs_load(proj_archs **out, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	proj_archs *a = proj_archs_new();
	cvc_status rc = CVC_OK;

	*out = NULL;
	if (!a)
		return CVC_ERR_NOMEM;
	if (!yaml_parser_initialize(&parser)) {
		proj_archs_free(a);
		return CVC_ERR_NOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)cvc_proj_archs_yaml,
				     cvc_proj_archs_yaml_len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "'archs.yaml': line %lu: expected valid YAML (%s)",
			 (unsigned long)parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "parse error");
		yaml_parser_delete(&parser);
		proj_archs_free(a);
		return CVC_ERR_INTERNAL;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root || root->type != YAML_SEQUENCE_NODE)
		rc = fail(err, errlen, root, "expected a list of models");
	for (yaml_node_item_t *it = root && !rc ? root->data.sequence.items.start : NULL;
	     it && !rc && it < root->data.sequence.items.top; it++)
		rc = read_entry(a, &doc, yaml_document_get_node(&doc, *it), err, errlen);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc) {
		proj_archs_free(a);
		return rc;
	}
	*out = a;
	return CVC_OK;
}

void proj_arch_apply(const struct proj_arch *e, cvc_proj_scenario *sc)
{
	for (int i = 0; i < e->nkv; i++) {
		const struct proj_arch_kv *kv = &e->kv[i];

		if (proj_fields[kv->field].type == PF_STR)
			*(const char **)((char *)sc + proj_fields[kv->field].offset) = kv->str;
		else
			proj_field_set_num(sc, kv->field, kv->num);
	}
}

/* s as one CSV cell, quoted, its quotes doubled. */
static void csv_cell(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

cvc_status cvc_proj_archs_write(FILE *f, char *err, size_t errlen)
{
	proj_archs *a = NULL;
	cvc_status rc = proj_archs_load(&a, err, errlen);

	if (rc)
		return rc;
	fprintf(f, "name,aliases,source,read\n");
	for (size_t i = 0; i < a->n; i++) {
		const struct proj_arch *e = &a->e[i];

		char al[2048] = "";
		size_t n = 0;

		for (size_t j = 0; j < e->naliases && n < sizeof al; j++) {
			int k = snprintf(al + n, sizeof al - n, "%s%s", j ? " " : "", e->aliases[j]);

			n += k > 0 ? (size_t)k : 0;
		}
		csv_cell(f, e->name);
		fputc(',', f);
		csv_cell(f, al);
		fputc(',', f);
		csv_cell(f, e->source);
		fputc(',', f);
		csv_cell(f, e->read);
		fputc('\n', f);
	}
	proj_archs_free(a);
	if (ferror(f)) {
		snprintf(err, errlen, "write error: %s", strerror(errno ? errno : EIO));
		return CVC_ERR_IO;
	}
	return CVC_OK;
}
