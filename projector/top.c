/*
 * top.c - rankings: the K best scenarios of each group (--top K --by METRIC
 * --per FIELDS).  A planner asks "which layout is best for this model on
 * this hardware at this GPU count", so one ranking over a whole study
 * answers the wrong question: the fastest model fills every row.  Each
 * group keeps a heap of its K best rows, so memory is groups x K rows
 * whatever the number of scenarios streamed through.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#include "proj_internal.h"
#include "cvc/cvc_base.h"

#define TOP_MAX_PER 32            /* fields in a group key (hardware is six) */
#define TOP_KEY_MAX ((size_t)1 << 16)

struct top_row {
	cvc_proj_scenario sc;
	cvc_proj_result r;
	double key;                   /* the metric, negated under asc: larger is better */
};

struct top_group {
	char *key;                    /* the group's field values, binary */
	size_t keylen;
	uint64_t hash;
	struct top_row *rows;         /* a heap: the worst kept row at [0] */
	size_t n, cap;
	double first;                 /* the --by value of its first row offered */
	int offered, varied;          /* rows offered; 1 once one differed from first */
};

struct cvc_proj_top {
	long long k;
	int asc, include_unfit;
	int metric, field;            /* the --by column: an output metric or a scenario field */
	int per[TOP_MAX_PER];
	int nper;
	struct top_group *groups;     /* in order of first appearance */
	size_t ngroups, gcap;
	uint32_t *slots;              /* open addressing: group index + 1, 0 = empty */
	size_t nslots;
	cvc_buf kb;                   /* the key of the row being offered */
	char by[64];                  /* the --by column as the output names it */
	size_t held, max_bytes;       /* bytes of kept rows; their cap */
};

const char *cvc_proj_group_names(void)
{
	static char names[2048];

	if (!names[0]) {
		size_t off = (size_t)snprintf(names, sizeof names, "model,hardware,none");

		for (size_t i = 0; i < proj_nfields && off < sizeof names; i++) {
			int n = snprintf(names + off, sizeof names - off, ",%s", proj_fields[i].key);

			if (n < 0 || (size_t)n >= sizeof names - off)
				break;
			off += (size_t)n;
		}
	}
	return names;
}

/* Adds the fields a --per word stands for to t->per. */
static cvc_status add_word(cvc_proj_top *t, const char *w, size_t len, char *err, size_t errlen)
{
	static const char *const hw[] = {"gpu", "scale_compute", "scale_hbm_bw", "scale_hbm_cap",
					 "scale_intra_bw", "scale_inter_bw"};
	char word[64];

	if (len == 0)
		return cvc_errf(err, errlen, CVC_ERR_USAGE,
				"--per: an empty field name (one of %s)", cvc_proj_group_names());
	snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), w);
	if (len == 8 && strncmp(w, "hardware", 8) == 0) {
		/* the GPU with its future-hardware factors: "B200 with 2x compute"
		 * is hardware of its own, as the report draws it */
		for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++)
			if (add_word(t, hw[i], strlen(hw[i]), err, errlen))
				return CVC_ERR_USAGE;
		return CVC_OK;
	}
	if (len == 4 && strncmp(w, "none", 4) == 0)
		return cvc_errf(err, errlen, CVC_ERR_USAGE,
				"--per: 'none' ranks all scenarios together and takes no other field");
	{
		int f = len < sizeof word ? proj_field_find(NULL, word) : -1;

		if (f < 0)
			return cvc_errf(err, errlen, CVC_ERR_USAGE,
					"--per: unknown field '%.*s' (one of %s)", (int)len, w,
					cvc_proj_group_names());
		if (t->nper >= TOP_MAX_PER)
			return cvc_errf(err, errlen, CVC_ERR_USAGE,
					"--per: more than %d fields", TOP_MAX_PER);
		t->per[t->nper++] = f;
	}
	return CVC_OK;
}

static cvc_status parse_per(cvc_proj_top *t, const char *per, char *err, size_t errlen)
{
	if (strcmp(per, "none") == 0)
		return CVC_OK;
	for (const char *p = per;;) {
		const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);

		while (p < end && *p == ' ')
			p++;
		while (end > p && end[-1] == ' ')
			end--;
		if (add_word(t, p, (size_t)(end - p), err, errlen))
			return CVC_ERR_USAGE;
		if (!comma)
			return CVC_OK;
		p = comma + 1;
	}
}

/* Half the machine's physical memory (sysconf), or 4 GiB where it does
 * not say: a ranking past it would be swapped or killed, not finished. */
static size_t half_of_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || size <= 0)
		return (size_t)4 << 30;
	if ((unsigned long)pages > SIZE_MAX / 2 / (unsigned long)size)
		return SIZE_MAX;
	return (size_t)pages * (size_t)size / 2;
}

cvc_status cvc_proj_top_new(const cvc_proj_top_opts *opts, cvc_proj_top **out, char *err,
			    size_t errlen)
{
	const char *by = opts->by ? opts->by : "tokens_per_s";
	cvc_proj_top *t = NULL;
	cvc_status rc;

	*out = NULL;
	if (opts->k < 1 || opts->k > CVC_PROJ_TOP_MAX_K)
		return cvc_errf(err, errlen, CVC_ERR_USAGE, "--top: expected 1..%lld, got %lld",
				CVC_PROJ_TOP_MAX_K, opts->k);
	if (!(t = calloc(1, sizeof *t)))
		return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory");
	t->k = opts->k;
	t->asc = opts->asc;
	t->max_bytes = opts->max_bytes ? opts->max_bytes : half_of_memory();
	t->include_unfit = opts->include_unfit;
	t->kb = (cvc_buf)CVC_BUF_INIT(TOP_KEY_MAX);
	t->metric = proj_metric_find(by);
	t->field = t->metric < 0 ? proj_field_find(NULL, by) : -1;
	/* an alias ranks by the column it stands for, and is said by that name */
	snprintf(t->by, sizeof t->by, "%s", t->field >= 0 ? proj_fields[t->field].key : by);
	if (t->metric < 0 && (t->field < 0 || proj_fields[t->field].type == PF_STR)) {
		rc = cvc_errf(err, errlen, CVC_ERR_USAGE,
			      "--by: unknown metric '%s' (one of %s; or a numeric scenario field)",
			      by, cvc_proj_metric_names());
		goto fail;
	}
	if ((rc = parse_per(t, opts->per ? opts->per : CVC_PROJ_TOP_PER_DEFAULT, err, errlen)))
		goto fail;
	*out = t;
	return CVC_OK;
fail:
	cvc_proj_top_free(t);
	return rc;
}

void cvc_proj_top_free(cvc_proj_top *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ngroups; i++) {
		free(t->groups[i].key);
		free(t->groups[i].rows);
	}
	free(t->groups);
	free(t->slots);
	cvc_buf_free(&t->kb);
	free(t);
}

/* The group key of sc: each field's value, strings with their NUL. */
static cvc_status make_key(cvc_proj_top *t, const cvc_proj_scenario *sc)
{
	cvc_buf_reset(&t->kb);
	for (int i = 0; i < t->nper; i++) {
		const struct proj_field *fd = &proj_fields[t->per[i]];
		cvc_status rc;

		if (fd->type == PF_STR) {
			const char *s = *(const char *const *)((const char *)sc + fd->offset);

			s = s ? s : "";
			rc = cvc_buf_add(&t->kb, s, strlen(s) + 1);
		} else {
			double v = proj_field_get(sc, t->per[i]);

			v = v == 0 ? 0 : v; /* -0 and 0 are one group */
			rc = cvc_buf_add(&t->kb, &v, sizeof v);
		}
		if (rc)
			return rc;
	}
	return CVC_OK;
}

static cvc_status rehash(cvc_proj_top *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 64;
	uint32_t *s = calloc(n, sizeof *s);

	if (!s)
		return CVC_ERR_NOMEM;
	for (size_t g = 0; g < t->ngroups; g++) {
		size_t i = (size_t)t->groups[g].hash & (n - 1);

		while (s[i])
			i = (i + 1) & (n - 1);
		s[i] = (uint32_t)(g + 1);
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return CVC_OK;
}

/* The group whose key is in t->kb, made when new: *g, or NULL with a status. */
static cvc_status find_group(cvc_proj_top *t, struct top_group **g, char *err, size_t errlen)
{
	const char *key = t->kb.p ? t->kb.p : "";
	size_t len = t->kb.len, i;
	uint64_t h = cvc_hash_fnv1a(key, len);
	struct top_group *ng;

	if (t->nslots) {
		for (i = (size_t)h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
			struct top_group *c = &t->groups[t->slots[i] - 1];

			if (c->hash == h && c->keylen == len && memcmp(c->key, key, len) == 0) {
				*g = c;
				return CVC_OK;
			}
		}
	}
	if (t->ngroups >= CVC_PROJ_TOP_MAX_GROUPS)
		return cvc_errf(err, errlen, CVC_ERR_USAGE,
				"--per: more than %zu groups; group by fewer fields",
				CVC_PROJ_TOP_MAX_GROUPS);
	if (cvc_grow(&t->groups, &t->gcap, t->ngroups + 1, sizeof *t->groups, 16) ||
	    (2 * (t->ngroups + 1) > t->nslots && rehash(t)))
		return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory for --per groups");
	ng = &t->groups[t->ngroups];
	memset(ng, 0, sizeof *ng);
	if (!(ng->key = malloc(len ? len : 1)))
		return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory for --per groups");
	memcpy(ng->key, key, len);
	ng->keylen = len;
	ng->hash = h;
	for (i = (size_t)h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1))
		;
	t->slots[i] = (uint32_t)(++t->ngroups);
	*g = ng;
	return CVC_OK;
}

/* a is worse than b: it leaves the heap first (ties: the later scenario,
 * so that which of equal rows is kept does not depend on the order) */
static int worse_than(double ka, uint64_t ia, double kb, uint64_t ib)
{
	return ka < kb || (ka == kb && ia > ib);
}

static int worse(const struct top_row *a, const struct top_row *b)
{
	return worse_than(a->key, a->sc.index, b->key, b->sc.index);
}

static void swap_rows(struct top_row *a, struct top_row *b)
{
	struct top_row tmp = *a;

	*a = *b;
	*b = tmp;
}

static void sift_down(struct top_group *g, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;

		if (l < g->n && worse(&g->rows[l], &g->rows[w]))
			w = l;
		if (r < g->n && worse(&g->rows[r], &g->rows[w]))
			w = r;
		if (w == i)
			return;
		swap_rows(&g->rows[i], &g->rows[w]);
		i = w;
	}
}

static void sift_up(struct top_group *g, size_t i)
{
	while (i > 0 && worse(&g->rows[i], &g->rows[(i - 1) / 2])) {
		swap_rows(&g->rows[i], &g->rows[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

cvc_status cvc_proj_top_add(cvc_proj_top *t, const cvc_proj_scenario *sc,
			    const cvc_proj_result *r, char *err, size_t errlen)
{
	struct top_group *g = NULL;
	cvc_status rc;
	double v;

	/* a ranking offers only what can run */
	if (!r->valid || (!r->fits && !t->include_unfit))
		return CVC_OK;
	v = t->metric >= 0 ? proj_metric_get(r, t->metric) : proj_field_get(sc, t->field);
	if (isnan(v))
		return CVC_OK;
	if ((rc = make_key(t, sc)))
		return cvc_errf(err, errlen, rc, "--per: a group key longer than %zu bytes",
				TOP_KEY_MAX);
	if ((rc = find_group(t, &g, err, errlen)))
		return rc;
	if (!g->offered++)
		g->first = v;
	else if (v != g->first)
		g->varied = 1;
	v = t->asc ? -v : v;
	if (g->n < (size_t)t->k) {
		size_t cap0 = g->cap;

		if (cvc_grow(&g->rows, &g->cap, g->n + 1, sizeof *g->rows,
			     t->k < 16 ? (size_t)t->k : 16))
			return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory for --top %lld",
					t->k);
		t->held += (g->cap - cap0) * sizeof *g->rows;
		if (t->held > t->max_bytes)
			return cvc_errf(err, errlen, CVC_ERR_USAGE,
					"--top %lld: the %zu groups kept so far hold %.1f GB, past the "
					"%.1f GB allowed (half this machine's memory): keep fewer rows "
					"(--top) or group by fewer fields (--per)",
					t->k, t->ngroups, (double)t->held / 1e9,
					(double)t->max_bytes / 1e9);
		g->rows[g->n].sc = *sc;
		g->rows[g->n].r = *r;
		g->rows[g->n].key = v;
		sift_up(g, g->n++);
	} else if (worse_than(g->rows[0].key, g->rows[0].sc.index, v, sc->index)) {
		g->rows[0].sc = *sc;
		g->rows[0].r = *r;
		g->rows[0].key = v;
		sift_down(g, 0);
	}
	return CVC_OK;
}

/* Worst first: an array sorted so is still a heap, and more rows may come. */
static int cmp_worst_first(const void *pa, const void *pb)
{
	const struct top_row *a = pa, *b = pb;

	return worse(a, b) ? -1 : worse(b, a) ? 1 : 0;
}

cvc_status cvc_proj_top_each(cvc_proj_top *t, cvc_proj_cb cb, void *user, size_t *groups)
{
	if (groups)
		*groups = t->ngroups;
	for (size_t i = 0; i < t->ngroups; i++) {
		struct top_group *g = &t->groups[i];

		qsort(g->rows, g->n, sizeof *g->rows, cmp_worst_first);
		for (size_t j = g->n; j-- > 0;)
			if (cb(user, &g->rows[j].sc, &g->rows[j].r))
				return CVC_ERR_USAGE;
	}
	return CVC_OK;
}

const char *cvc_proj_top_by(const cvc_proj_top *t)
{
	return t->by;
}

int cvc_proj_top_ranked(const cvc_proj_top *t)
{
	int compared = 0;

	for (size_t i = 0; i < t->ngroups; i++) {
		if (t->groups[i].varied)
			return 1;
		compared |= t->groups[i].offered > 1;
	}
	return !compared;
}
