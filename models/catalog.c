/*
 * catalog.c - the hardware catalog: GPU and system spec sheets parsed from
 * models/hw/catalog.csv (compiled in) and user files of the same format,
 * with forgiving name lookup.  (The name tables of dtypes and collectives
 * every room shares are in db/vocab.c.)
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_csv.h"
#include "cvc/cvc_model.h"

extern const char cvc_hw_catalog_csv[];
extern const size_t cvc_hw_catalog_csv_len;

#define CAT_MAX_ENTRIES 4096 /* a user file cannot make the catalog unbounded */
#define ALIAS_MAX 512
#define LINE_MAX_LEN 4096

struct entry {
	cvc_hw_spec spec;
	char aliases[ALIAS_MAX]; /* normalised, '|'-separated */
};

struct cvc_hw_catalog {
	struct entry *v;
	size_t n, cap;
	char err[512];
};


const char *cvc_model_kind_name(cvc_model_kind k)
{
	switch (k) {
	case CVC_MODEL_GEMM:
		return "gemm";
	case CVC_MODEL_COLLECTIVE:
		return "collective";
	case CVC_MODEL_MEMBOUND:
		return "membound";
	case CVC_MODEL_ATTENTION:
		return "attention";
	}
	return NULL;
}

/* ---- catalog --------------------------------------------------------------- */

static cvc_status cat_fail(cvc_hw_catalog *cat, cvc_status st, const char *fmt, ...)
	CVC_PRINTF(3, 4);

static cvc_status cat_fail(cvc_hw_catalog *cat, cvc_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cat->err, sizeof cat->err, fmt, ap);
	va_end(ap);
	return st;
}

const char *cvc_hw_catalog_errmsg(const cvc_hw_catalog *cat)
{
	return cat ? cat->err : "out of memory";
}

void cvc_hw_catalog_free(cvc_hw_catalog *cat)
{
	if (!cat)
		return;
	free(cat->v);
	free(cat);
}

size_t cvc_hw_catalog_count(const cvc_hw_catalog *cat)
{
	return cat ? cat->n : 0;
}

const cvc_hw_spec *cvc_hw_catalog_at(const cvc_hw_catalog *cat, size_t i)
{
	return cat && i < cat->n ? &cat->v[i].spec : NULL;
}

/* The columns of the catalog format, in the order of the shipped header.
 * A file's header names its columns: older files lack the optional ones
 * (intra_topology, fp4_tflops, nvlink_domain, sfu_texp, host_bw_gbps), and their order
 * is free. */
enum col {
	C_NAME, C_KIND, C_BASE, C_VENDOR, C_ALIASES, C_FP32, C_TF32, C_BF16, C_FP16,
	C_FP8, C_FP4, C_HBM_BW, C_HBM_GB, C_SMS, C_INTRA, C_GPN, C_DOMAIN, C_INTER, C_TDP,
	C_SFU, C_HOST, C_TOPO, C_SOURCE, C_NCOL
};

static const char *const col_names[C_NCOL] = {
	"name", "kind", "base", "vendor", "aliases", "fp32_tflops", "tf32_tflops",
	"bf16_tflops", "fp16_tflops", "fp8_tflops", "fp4_tflops", "hbm_bw_gbps", "hbm_gb",
	"sm_count", "intra_bw_gbps", "gpus_per_node", "nvlink_domain", "inter_bw_gbps", "tdp_w",
	"sfu_texp", "host_bw_gbps", "intra_topology", "source"};

/* Columns a file written before them may leave out. */
static int col_optional(int c)
{
	return c == C_TOPO || c == C_FP4 || c == C_DOMAIN || c == C_SFU || c == C_HOST;
}

/* The catalog dtype of each peak column. */
static const struct {
	int col;
	cvc_hw_dtype dt;
} peak_cols[] = {{C_FP32, CVC_HW_FP32}, {C_TF32, CVC_HW_TF32}, {C_BF16, CVC_HW_BF16},
		 {C_FP16, CVC_HW_FP16}, {C_FP8, CVC_HW_FP8},   {C_FP4, CVC_HW_FP4}};

int cvc_hw_domain(const cvc_hw_spec *spec)
{
	if (!spec)
		return 0;
	return spec->nvlink_domain > 0 ? spec->nvlink_domain : spec->gpus_per_node;
}

cvc_status cvc_hw_dtype_path(const cvc_hw_spec *spec, cvc_hw_dtype dt, cvc_hw_dtype *as)
{
	/* each dtype's paths in order; -1 ends a list */
	static const int paths[CVC_HW_NDTYPE][3] = {
		[CVC_HW_FP32] = {CVC_HW_FP32, -1, -1},
		[CVC_HW_TF32] = {CVC_HW_TF32, CVC_HW_FP32, -1},
		[CVC_HW_BF16] = {CVC_HW_BF16, CVC_HW_FP16, CVC_HW_TF32},
		[CVC_HW_FP16] = {CVC_HW_FP16, CVC_HW_BF16, CVC_HW_TF32},
		[CVC_HW_FP8] = {CVC_HW_FP8, -1, -1},
		[CVC_HW_FP4] = {CVC_HW_FP4, -1, -1},
	};

	if (!spec || !as || (unsigned)dt >= CVC_HW_NDTYPE)
		return CVC_ERR_USAGE;
	*as = dt;
	for (int j = 0; j < 3 && paths[dt][j] >= 0; j++)
		if (spec->peak_tflops[paths[dt][j]] > 0) {
			*as = (cvc_hw_dtype)paths[dt][j];
			return CVC_OK;
		}
	return CVC_ERR_NOTFOUND;
}

static struct entry *find_exact(cvc_hw_catalog *cat, const char *norm)
{
	char n2[CVC_HW_NAME_MAX];

	for (size_t i = 0; i < cat->n; i++) {
		cvc_name_fold(cat->v[i].spec.name, n2, sizeof n2);
		if (strcmp(n2, norm) == 0)
			return &cat->v[i];
	}
	return NULL;
}

/* Parses a number field; empty = missing (returns 0 and *set = 0). */
static int parse_num(const char *s, double *out, int *set)
{
	*set = 0;
	if (!*s)
		return 0;
	if (cvc_parse_f64(s, out) != CVC_OK || *out < 0)
		return -1;
	*set = 1;
	return 0;
}

static void copy_field(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src);
}

static cvc_status parse_entry(cvc_hw_catalog *cat, const char *name, int lineno,
			      char **f, struct entry *e)
{
	double num[C_NCOL] = {0};
	int set[C_NCOL] = {0};
	struct entry *base = NULL;

	memset(e, 0, sizeof *e);
	if (!*f[C_NAME])
		return cat_fail(cat, CVC_ERR_FORMAT, "'%s': line %d: expected a name", name, lineno);
	if (strcmp(f[C_KIND], "gpu") != 0 && strcmp(f[C_KIND], "system") != 0)
		return cat_fail(cat, CVC_ERR_FORMAT,
				"'%s': line %d: expected kind 'gpu' or 'system', got '%s'", name,
				lineno, f[C_KIND]);
	for (int c = C_FP32; c <= C_HOST; c++)
		if (parse_num(f[c], &num[c], &set[c]))
			return cat_fail(cat, CVC_ERR_FORMAT,
					"'%s': line %d: expected a non-negative number for %s, got '%s'",
					name, lineno, col_names[c], f[c]);
	/* Counts become ints: a larger value would not convert (found by fuzzing). */
	for (int c = C_SMS; c <= C_DOMAIN; c++)
		if ((c == C_SMS || c == C_GPN || c == C_DOMAIN) && num[c] > 1e6)
			return cat_fail(cat, CVC_ERR_FORMAT,
					"'%s': line %d: expected a count below 1000000 for %s", name,
					lineno, col_names[c]);
	if (strcmp(f[C_KIND], "system") == 0) {
		char nb[CVC_HW_NAME_MAX];

		cvc_name_fold(f[C_BASE], nb, sizeof nb);
		base = find_exact(cat, nb);
		if (!base || strcmp(base->spec.kind, "gpu") != 0)
			return cat_fail(cat, CVC_ERR_FORMAT,
					"'%s': line %d: expected the base GPU of system '%s' to be "
					"an earlier gpu entry, got '%s'",
					name, lineno, f[C_NAME], f[C_BASE]);
		e->spec = base->spec;
		copy_field(e->spec.base, sizeof e->spec.base, base->spec.name);
	}
	copy_field(e->spec.name, sizeof e->spec.name, f[C_NAME]);
	copy_field(e->spec.kind, sizeof e->spec.kind, f[C_KIND]);
	if (*f[C_VENDOR] || !base)
		copy_field(e->spec.vendor, sizeof e->spec.vendor, f[C_VENDOR]);
	for (size_t i = 0; i < sizeof peak_cols / sizeof peak_cols[0]; i++)
		if (set[peak_cols[i].col] || !base)
			e->spec.peak_tflops[peak_cols[i].dt] = num[peak_cols[i].col];
#define TAKE(col, field, type)                  \
	do {                                    \
		if (set[col] || !base)          \
			e->spec.field = (type)num[col]; \
	} while (0)
	TAKE(C_HBM_BW, hbm_bw_gbps, double);
	TAKE(C_HBM_GB, hbm_gb, double);
	TAKE(C_SMS, sm_count, int);
	TAKE(C_INTRA, intra_bw_gbps, double);
	TAKE(C_GPN, gpus_per_node, int);
	TAKE(C_DOMAIN, nvlink_domain, int);
	TAKE(C_INTER, inter_bw_gbps, double);
	TAKE(C_TDP, tdp_w, double);
	TAKE(C_SFU, sfu_texp, double);
	TAKE(C_HOST, host_bw_gbps, double);
#undef TAKE
	if (*f[C_TOPO] && strcmp(f[C_TOPO], "mesh") && strcmp(f[C_TOPO], "switch"))
		return cat_fail(cat, CVC_ERR_FORMAT,
				"'%s': line %d: expected intra_topology 'switch', 'mesh' or empty, "
				"got '%s'",
				name, lineno, f[C_TOPO]);
	if (*f[C_TOPO] || !base)
		e->spec.intra_mesh = !strcmp(f[C_TOPO], "mesh");
	copy_field(e->spec.source, sizeof e->spec.source, f[C_SOURCE]);
	if (!base && (e->spec.peak_tflops[CVC_HW_BF16] <= 0 && e->spec.peak_tflops[CVC_HW_FP16] <= 0 &&
		      e->spec.peak_tflops[CVC_HW_FP32] <= 0))
		return cat_fail(cat, CVC_ERR_FORMAT,
				"'%s': line %d: expected at least one peak TFLOP/s figure", name,
				lineno);
	if (!base && (e->spec.hbm_bw_gbps <= 0 || e->spec.sm_count <= 0))
		return cat_fail(cat, CVC_ERR_FORMAT,
				"'%s': line %d: expected hbm_bw_gbps and sm_count > 0", name, lineno);
	/* Aliases, normalised once so lookups only compare. */
	{
		size_t j = 0;
		const char *p = f[C_ALIASES];

		while (*p) {
			const char *bar = strchr(p, '|');
			size_t len = bar ? (size_t)(bar - p) : strlen(p);
			char raw[128], norm[128];

			if (len >= sizeof raw)
				len = sizeof raw - 1;
			memcpy(raw, p, len);
			raw[len] = '\0';
			cvc_name_fold(raw, norm, sizeof norm);
			if (*norm && j + strlen(norm) + 2 < sizeof e->aliases) {
				memcpy(e->aliases + j, norm, strlen(norm));
				j += strlen(norm);
				e->aliases[j++] = '|';
			}
			p += len + (bar ? 1 : 0);
			if (!bar)
				break;
		}
		e->aliases[j] = '\0';
	}
	return CVC_OK;
}

/* Where each column sits in the file's lines (-1: left out), from its
 * header hf[0..nf). */
static cvc_status read_header(cvc_hw_catalog *cat, const char *name, int lineno, char **hf,
			      int nf, int at[C_NCOL])
{
	for (int c = 0; c < C_NCOL; c++)
		at[c] = -1;
	for (int k = 0; k < nf; k++) {
		int c = 0;

		while (c < C_NCOL && strcmp(hf[k], col_names[c]) != 0)
			c++;
		if (c == C_NCOL)
			return cat_fail(cat, CVC_ERR_FORMAT,
					"'%s': line %d: expected a catalog column ('%s', ..., '%s'), "
					"got '%s'",
					name, lineno, col_names[0], col_names[C_NCOL - 1], hf[k]);
		if (at[c] >= 0)
			return cat_fail(cat, CVC_ERR_FORMAT,
					"'%s': line %d: expected column '%s' once, got it twice", name,
					lineno, col_names[c]);
		at[c] = k;
	}
	for (int c = 0; c < C_NCOL; c++)
		if (at[c] < 0 && !col_optional(c))
			return cat_fail(cat, CVC_ERR_FORMAT,
					"'%s': line %d: expected column '%s' in the header", name,
					lineno, col_names[c]);
	return CVC_OK;
}

static cvc_status load_text(cvc_hw_catalog *cat, const char *name, const char *text,
			    size_t len)
{
	char line[LINE_MAX_LEN];
	size_t pos = 0, keep_n = cat->n;
	int lineno = 0, have_header = 0, ncol = 0, at[C_NCOL];
	char empty[1] = "";
	cvc_status st = CVC_OK;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char *raw[C_NCOL + 1], *f[C_NCOL];
		int nf;
		struct entry e;

		lineno++;
		if (ll >= sizeof line) {
			st = cat_fail(cat, CVC_ERR_FORMAT, "'%s': line %d: expected a line shorter than %zu bytes",
				      name, lineno, sizeof line);
			goto out;
		}
		memcpy(line, text + pos, ll);
		line[ll] = '\0';
		pos += ll + 1;
		if (ll && line[ll - 1] == '\r')
			line[--ll] = '\0';
		if (!ll || line[0] == '#')
			continue;
		nf = cvc_csv_split(line, raw, C_NCOL + 1);
		if (nf < 0) {
			st = cat_fail(cat, CVC_ERR_FORMAT,
				      "'%s': line %d: expected fields quoted as RFC 4180 quotes them",
				      name, lineno);
			goto out;
		}
		if (!have_header) {
			if (nf > C_NCOL) {
				st = cat_fail(cat, CVC_ERR_FORMAT,
					      "'%s': line %d: expected the header '%s,...,%s' (at most %d "
					      "columns)",
					      name, lineno, col_names[0], col_names[C_NCOL - 1], C_NCOL);
				goto out;
			}
			if ((st = read_header(cat, name, lineno, raw, nf, at)))
				goto out;
			ncol = nf;
			have_header = 1;
			continue;
		}
		if (nf != ncol) {
			st = cat_fail(cat, CVC_ERR_FORMAT,
				      "'%s': line %d: expected %d comma-separated fields, got %d", name,
				      lineno, ncol, nf);
			goto out;
		}
		for (int c = 0; c < C_NCOL; c++)
			f[c] = at[c] >= 0 ? raw[at[c]] : empty;
		if ((st = parse_entry(cat, name, lineno, f, &e)))
			goto out;
		{
			char norm[CVC_HW_NAME_MAX];
			struct entry *old;

			cvc_name_fold(e.spec.name, norm, sizeof norm);
			old = find_exact(cat, norm);
			if (old) {
				*old = e; /* a user entry replaces the shipped one */
				continue;
			}
		}
		if (cat->n == CAT_MAX_ENTRIES) {
			st = cat_fail(cat, CVC_ERR_NOMEM, "'%s': line %d: more than %d catalog entries",
				      name, lineno, CAT_MAX_ENTRIES);
			goto out;
		}
		if (cat->n == cat->cap &&
		    cvc_grow(&cat->v, &cat->cap, cat->cap + 1, sizeof *cat->v, 32) != CVC_OK) {
			st = cat_fail(cat, CVC_ERR_NOMEM, "out of memory");
			goto out;
		}
		cat->v[cat->n++] = e;
	}
	if (!have_header)
		st = cat_fail(cat, CVC_ERR_FORMAT, "'%s': line %d: expected the catalog header", name,
			      lineno + 1);
out:
	if (st)
		cat->n = keep_n; /* replaced entries stay replaced: documented as all or nothing for additions */
	return st;
}

cvc_status cvc_hw_catalog_load_text(cvc_hw_catalog *cat, const char *name, const char *text,
				    size_t len)
{
	if (!cat || !text)
		return CVC_ERR_USAGE;
	cat->err[0] = '\0';
	return load_text(cat, name ? name : "(text)", text, len);
}

cvc_status cvc_hw_catalog_load(cvc_hw_catalog *cat, const char *path)
{
	FILE *f = NULL;
	char *buf = NULL;
	size_t n = 0;
	cvc_status st = CVC_OK;
	struct stat sb;

	if (!cat || !path)
		return CVC_ERR_USAGE;
	f = fopen(path, "rb");
	if (!f) {
		int e = errno;

		st = cat_fail(cat, cvc_open_status(e), "'%s': cannot open: %s", path, strerror(e));
		goto out;
	}
	/* a folder opens but does not read: the user's input, not the machine,
	 * is wrong (it read as "read error", exit 1) */
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		st = cat_fail(cat, CVC_ERR_USAGE, "'%s': expected a catalog file (CSV), got a folder",
			      path);
		goto out;
	}
	/* A catalog is a few kB; 4 MiB is far beyond any real one. */
	buf = malloc(4u << 20);
	if (!buf) {
		st = cat_fail(cat, CVC_ERR_NOMEM, "out of memory");
		goto out;
	}
	n = fread(buf, 1, 4u << 20, f);
	if (ferror(f)) {
		st = cat_fail(cat, CVC_ERR_IO, "'%s': read error", path);
		goto out;
	}
	if (n == 4u << 20) {
		st = cat_fail(cat, CVC_ERR_FORMAT, "'%s': byte %zu: expected a catalog under 4 MiB",
			      path, n);
		goto out;
	}
	st = cvc_hw_catalog_load_text(cat, path, buf, n);
out:
	if (f)
		fclose(f);
	free(buf);
	return st;
}

cvc_status cvc_hw_catalog_new(cvc_hw_catalog **out)
{
	cvc_hw_catalog *cat;
	const char *env;
	cvc_status st;

	*out = NULL;
	cat = calloc(1, sizeof *cat);
	if (!cat)
		return CVC_ERR_NOMEM;
	*out = cat;
	if ((st = load_text(cat, "models/hw/catalog.csv", cvc_hw_catalog_csv,
			    cvc_hw_catalog_csv_len)))
		return st;
	env = getenv("CVC_CATALOG");
	if (env && *env)
		return cvc_hw_catalog_load(cat, env);
	return CVC_OK;
}

/* Longest canonical name or alias that is a prefix of norm; its length. */
static size_t prefix_len(const struct entry *e, const char *norm)
{
	char nn[CVC_HW_NAME_MAX];
	size_t best = 0, n;

	cvc_name_fold(e->spec.name, nn, sizeof nn);
	n = strlen(nn);
	if (n && strncmp(norm, nn, n) == 0)
		best = n;
	for (const char *p = e->aliases; *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		if (len > best && strncmp(norm, p, len) == 0)
			best = len;
		p += len + (bar ? 1 : 0);
	}
	return best;
}

/* name folded with the vendor words taken off ("NVIDIA H100" -> "h100"). */
static const char *fold_name(const char *name, char *norm, size_t len)
{
	static const char *const prefixes[] = {"nvidia", "tesla", "amd", "instinct", "geforce"};
	const char *q = norm;

	cvc_name_fold(name, norm, len);
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
			size_t pl = strlen(prefixes[i]);

			if (strncmp(q, prefixes[i], pl) == 0 && q[pl]) {
				q += pl;
				again = 1;
			}
		}
	}
	return q;
}

const cvc_hw_spec *cvc_hw_catalog_lookup(const cvc_hw_catalog *cat, const char *name)
{
	char norm[160];
	const char *q;
	const struct entry *best = NULL;
	size_t best_len = 0;

	if (!cat || !name)
		return NULL;
	q = fold_name(name, norm, sizeof norm);
	if (!*q)
		return NULL;
	/* a canonical name before any alias: "gb200-nvl72" is the system
	 * even though the GPU row lists "GB200 NVL72" among its aliases */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < cat->n; i++) {
			char nn[CVC_HW_NAME_MAX];

			cvc_name_fold(cat->v[i].spec.name, nn, sizeof nn);
			if (pass == 0 && (strcmp(nn, q) == 0 || strcmp(nn, norm) == 0))
				return &cat->v[i].spec;
			if (pass == 1 && (cvc_str_in_list(cat->v[i].aliases, q) ||
					  cvc_str_in_list(cat->v[i].aliases, norm)))
				return &cat->v[i].spec;
		}
	/* "h100sxm580gbhbm3" -> the entry with the longest matching prefix;
	 * at least 4 characters so "a1" does not match "a100". */
	for (size_t i = 0; i < cat->n; i++) {
		size_t l = prefix_len(&cat->v[i], q);

		if (l > best_len) {
			best_len = l;
			best = &cat->v[i];
		}
	}
	return best && best_len >= 4 ? &best->spec : NULL;
}

static int kind_ok(const struct entry *e, const char *kind)
{
	return !kind || strcmp(e->spec.kind, kind) == 0;
}

const cvc_hw_spec *cvc_hw_catalog_find(const cvc_hw_catalog *cat, const char *name,
				       const char *kind)
{
	char norm[160];
	const char *q;

	if (!cat || !name)
		return NULL;
	q = fold_name(name, norm, sizeof norm);
	if (!*q)
		return NULL;
	for (size_t i = 0; i < cat->n; i++) {
		char nn[CVC_HW_NAME_MAX];

		if (!kind_ok(&cat->v[i], kind))
			continue;
		cvc_name_fold(cat->v[i].spec.name, nn, sizeof nn);
		if (strcmp(nn, q) == 0 || cvc_str_in_list(cat->v[i].aliases, q) ||
		    strcmp(nn, norm) == 0 || cvc_str_in_list(cat->v[i].aliases, norm))
			return &cat->v[i].spec;
	}
	return NULL;
}

/* Levenshtein distance of a and b (each at most 159 bytes, as folded). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b), row[160], prev;

	if (na > 159 || nb > 159)
		return na > nb ? na : nb;
	for (size_t j = 0; j <= nb; j++)
		row[j] = j;
	for (size_t i = 1; i <= na; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t cur = row[j], best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[nb];
}

/* The next word of p (a run of letters and digits) lower-cased into w
 * (cap bytes, the rest of an over-long word dropped), its length in *n;
 * returns where reading goes on. */
static const char *next_word(const char *p, char *w, size_t cap, size_t *n)
{
	*n = 0;
	while (*p && !isalnum((unsigned char)*p))
		p++;
	for (; *p && isalnum((unsigned char)*p); p++)
		if (*n + 1 < cap)
			w[(*n)++] = (char)tolower((unsigned char)*p);
	w[*n] = '\0';
	return p;
}

/* Whether one of name's words ("A100-SXM-40GB": a100, sxm, 40gb) starts
 * with word or word with it. */
static int has_word(const char *name, const char *word, size_t wl)
{
	for (const char *p = name; *p;) {
		size_t n;
		char w[CVC_HW_NAME_MAX];

		p = next_word(p, w, sizeof w, &n);
		if (n && (strncmp(w, word, n < wl ? n : wl) == 0))
			return 1;
	}
	return 0;
}

/* How many of the words of name (as typed) the entry's canonical name has. */
static int words_shared(const struct entry *e, const char *name)
{
	int k = 0;

	for (const char *p = name; *p;) {
		char w[64];
		size_t n;

		p = next_word(p, w, sizeof w, &n);
		if (n && has_word(e->spec.name, w, n))
			k++;
	}
	return k;
}

/* The entry's edit distance to q: the least over its name and aliases. */
static size_t name_distance(const struct entry *e, const char *q)
{
	char nn[CVC_HW_NAME_MAX];
	size_t best;

	cvc_name_fold(e->spec.name, nn, sizeof nn);
	best = edit_distance(q, nn);
	for (const char *p = e->aliases; *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p), d;
		char a[160];

		snprintf(a, sizeof a, "%.*s", (int)(len < sizeof a ? len : sizeof a - 1), p);
		d = edit_distance(q, a);
		if (d < best)
			best = d;
		p += len + (bar ? 1 : 0);
	}
	return best;
}

size_t cvc_hw_catalog_nearest(const cvc_hw_catalog *cat, const char *name, const char *kind,
			      const char **out, size_t n)
{
	char norm[160];
	const char *q;
	size_t k = 0;
	struct near {
		const struct entry *e;
		int words;
		size_t dist;
	} best[8];

	if (!cat || !name || !n)
		return 0;
	if (n > 8)
		n = 8;
	q = fold_name(name, norm, sizeof norm);
	for (size_t i = 0; i < cat->n; i++) {
		struct near c = {&cat->v[i], words_shared(&cat->v[i], name),
				 name_distance(&cat->v[i], q)};
		size_t at;

		/* a name with no word of the query and far from it is no suggestion */
		if (!kind_ok(c.e, kind) || (!c.words && c.dist > strlen(q) / 3 + 1))
			continue;
		/* more shared words first, then the smaller edit distance */
		for (at = k; at > 0 && (c.words > best[at - 1].words ||
					(c.words == best[at - 1].words && c.dist < best[at - 1].dist));
		     at--)
			;
		if (at >= n)
			continue;
		memmove(&best[at + 1], &best[at], (k < n ? k - at : n - 1 - at) * sizeof *best);
		best[at] = c;
		if (k < n)
			k++;
	}
	for (size_t i = 0; i < k; i++)
		out[i] = best[i].e->spec.name;
	return k;
}

int cvc_hw_closest(const cvc_hw_catalog *cat, const cvc_hw_spec *target,
		   const char *const *candidates, size_t n)
{
	int best = -1;
	double best_d = INFINITY;
	const char *own;

	if (!target)
		return -1;
	own = target->base[0] ? target->base : target->name;
	/* a catalog GPU's own figures, not those a what-if scaled (a spec
	 * with twice the FLOP/s is that GPU, not the next one over) */
	if (target->name[0]) {
		const cvc_hw_spec *t0 = cvc_hw_catalog_lookup(cat, target->name);

		if (t0)
			target = t0;
	}
	for (size_t i = 0; i < n; i++) {
		const cvc_hw_spec *s = cvc_hw_catalog_lookup(cat, candidates[i]);
		double pa, pb, d;

		if (!s)
			continue;
		if (own[0] && !strcmp(own, s->base[0] ? s->base : s->name))
			return (int)i; /* target's own GPU, wherever it stands in the list */
		pa = target->peak_tflops[CVC_HW_BF16] > 0 ? target->peak_tflops[CVC_HW_BF16]
							  : target->peak_tflops[CVC_HW_FP16];
		pb = s->peak_tflops[CVC_HW_BF16] > 0 ? s->peak_tflops[CVC_HW_BF16]
						     : s->peak_tflops[CVC_HW_FP16];
		if (pa <= 0 || pb <= 0 || s->hbm_bw_gbps <= 0 || target->hbm_bw_gbps <= 0)
			continue;
		d = fabs(log(pa / pb)) + fabs(log(target->hbm_bw_gbps / s->hbm_bw_gbps)) +
		    fabs(log((double)(target->sm_count > 0 ? target->sm_count : 1) /
			     (s->sm_count > 0 ? s->sm_count : 1)));
		if (strcmp(target->vendor, s->vendor) != 0)
			d += 10.0; /* another vendor's kernels are another world */
		if (d < best_d) {
			best_d = d;
			best = (int)i;
		}
	}
	return best;
}
