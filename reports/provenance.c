/*
 * provenance.c - "Where these numbers come from": what priced the
 * projection, as `cvc project` recorded it (a JSON projection's
 * "provenance" member, or the side file beside a CSV one,
 * cvc_proj_provenance_path()), never derived again from the database the
 * report is given, which may hold other fits or none; and the warnings the
 * projector attached to its scenarios, gathered into one table.
 */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cvc/cvc_csv.h"
#include "cvc/cvc_project.h"
#include "rep_proj.h"

/* A provenance side file is a few KB; anything far larger is not one. */
#define REP_MAX_PROVENANCE ((size_t)16 << 20)
#define REP_MAX_WARN_KEYS 512
#define REP_MAX_WARN_HW 64

/* Sets cell (r, c) of t from a JSON value: string, number, bool as 0/1;
 * null or absent stays empty, anything else as its JSON text.  -1 on no
 * memory. */
static int set_json(cvc_rep_table *t, size_t r, size_t c, json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return 0;
	case json_type_boolean:
		cvc_rep_table_set_num(t, r, c, json_object_get_boolean(v));
		return 0;
	case json_type_int:
	case json_type_double:
		cvc_rep_table_set_num(t, r, c, json_object_get_double(v));
		return 0;
	case json_type_string:
		return cvc_rep_table_set_str(t, r, c, json_object_get_string(v));
	default:
		return cvc_rep_table_set_str(t, r, c,
					     json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	}
}

/*
 * The table name of the array member key of prov: one row per element,
 * cols taken from the element's members of those names.  A member that is
 * not an array of objects is the file's fault: CVC_ERR_FORMAT naming from.
 */
static cvc_status array_table(json_object *prov, const char *key, const char *name,
			      const char *title, const char *const *cols, size_t ncols,
			      const char *from, struct rep_tables *out, char *err, size_t errlen)
{
	json_object *arr = NULL;
	cvc_rep_table *t;
	cvc_status st = CVC_OK;

	if (!json_object_object_get_ex(prov, key, &arr) || json_object_is_type(arr, json_type_null))
		return CVC_OK;
	if (!json_object_is_type(arr, json_type_array))
		return cvc_errf(err, errlen, CVC_ERR_FORMAT,
				"'%s': provenance: expected \"%s\" to be an array", from, key);
	t = cvc_rep_table_new(name, title, ncols, cols);
	if (!t)
		return rep_nomem(err, errlen);
	for (size_t i = 0; !st && i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i), *v;
		long r;

		if (!json_object_is_type(o, json_type_object)) {
			st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
				      "'%s': provenance: expected element %zu of \"%s\" to be an object",
				      from, i, key);
			break;
		}
		if ((r = cvc_rep_table_add_row(t)) < 0) {
			st = rep_nomem(err, errlen);
			break;
		}
		for (size_t c = 0; c < ncols; c++)
			if (json_object_object_get_ex(o, cols[c], &v) && set_json(t, (size_t)r, c, v))
				st = rep_nomem(err, errlen);
	}
	return rep_tables_keep(out, t, st, err, errlen);
}

/* Appends an (item, value) row; -1 on no memory. */
static int item(cvc_rep_table *t, const char *k, const char *v)
{
	long r = cvc_rep_table_add_row(t);

	return r < 0 || cvc_rep_table_set_str(t, (size_t)r, 0, k) ||
			       cvc_rep_table_set_str(t, (size_t)r, 1, v)
		       ? -1 : 0;
}

/* prov's string member key, or dflt when absent or not a string. */
static const char *member(json_object *prov, const char *key, const char *dflt)
{
	json_object *v;

	if (prov && json_object_object_get_ex(prov, key, &v) &&
	    json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return dflt;
}

/* The summary table: what the projection says priced it, or that it does
 * not say. */
static cvc_status summary_table(json_object *prov, const char *projection, const char *from,
				struct rep_tables *out, char *err, size_t errlen)
{
	static const char *const cols[] = {"item", "value"};
	cvc_rep_table *t = cvc_rep_table_new("provenance", "What priced the projection", 2, cols);
	int bad;

	if (!t)
		return rep_nomem(err, errlen);
	bad = item(t, "projection", projection);
	if (!prov) {
		bad |= item(t, "provenance",
			    "none recorded: the projection carries no record of the database, models "
			    "and cvc version that priced it (written before cvc recorded them, or "
			    "to stdout); project again with --csv FILE or --json FILE to have one");
	} else {
		json_object *db = NULL;

		bad |= item(t, "read from", from);
		bad |= item(t, "cvc version", member(prov, "cvc_version", "not recorded"));
		json_object_object_get_ex(prov, "database", &db);
		bad |= item(t, "database", json_object_is_type(db, json_type_string)
						   ? json_object_get_string(db)
						   : "none: spec-sheet defaults");
		bad |= item(t, "models", member(prov, "models_from", "not recorded"));
		bad |= item(t, "hardware catalog", member(prov, "catalog_file", "not recorded"));
		if (member(prov, "fits_when", NULL))
			bad |= item(t, "what fits", member(prov, "fits_when", ""));
		if (member(prov, "catalog_user_file", NULL))
			bad |= item(t, "user catalog", member(prov, "catalog_user_file", ""));
		if (member(prov, "incomplete", NULL))
			bad |= item(t, "incomplete", member(prov, "incomplete", ""));
	}
	return rep_tables_keep(out, t, bad ? rep_nomem(err, errlen) : CVC_OK, err, errlen);
}

/* Parses text (from file) as the provenance object into *prov. */
static cvc_status parse(const char *text, size_t len, const char *from, json_object **prov,
			char *err, size_t errlen)
{
	json_tokener *tok = json_tokener_new_ex(32);
	enum json_tokener_error jerr;
	cvc_status st = CVC_OK;
	size_t end;

	if (!tok)
		return rep_nomem(err, errlen);
	*prov = len <= INT32_MAX ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	while (end < len && isspace((unsigned char)text[end]))
		end++;
	if (!*prov || jerr != json_tokener_success)
		st = cvc_errf(err, errlen, CVC_ERR_FORMAT, "'%s': byte %zu: expected valid JSON (%s)",
			      from, end, json_tokener_error_desc(jerr == json_tokener_success
								 ? json_tokener_continue : jerr));
	else if (end < len)
		st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
			      "'%s': byte %zu: expected the end of the file", from, end);
	else if (!json_object_is_type(*prov, json_type_object))
		st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
			      "'%s': byte 0: expected a provenance object", from);
	if (st) {
		json_object_put(*prov);
		*prov = NULL;
	}
	json_tokener_free(tok);
	return st;
}

/*
 * The projection's provenance: its own (a JSON projection), else the side
 * file beside it when there is one.  *prov NULL when there is none; from
 * names where it was read.
 */
static cvc_status find(const cvc_rep_table *sc, const char *projection, char *from,
		       size_t fromlen, json_object **prov, char *err, size_t errlen)
{
	struct stat sb;
	char *text = NULL;
	size_t len = 0;
	cvc_status st;

	*prov = NULL;
	if (sc->provenance) {
		snprintf(from, fromlen, "%s", projection);
		return parse(sc->provenance, strlen(sc->provenance), from, prov, err, errlen);
	}
	if (cvc_proj_provenance_path(projection, from, fromlen))
		return cvc_errf(err, errlen, CVC_ERR_USAGE, "'%s': path too long", projection);
	if (stat(from, &sb) != 0 && errno == ENOENT)
		return CVC_OK;
	st = cvc_file_read(from, REP_MAX_PROVENANCE, &text, &len, err, errlen);
	if (!st)
		st = parse(text, len, from, prov, err, errlen);
	free(text);
	return st;
}

cvc_status rep_provenance_tables(const char *projection, const cvc_rep_table *sc,
				 struct rep_tables *out, char *err, size_t errlen)
{
	static const char *const ocols[] = {"gpu", "kind", "op", "model_id", "priced", "origin"};
	static const char *const mcols[] = {"id", "kind", "gpu", "system", "op", "nranks",
					    "gpus_per_node", "n_points", "r2", "mape_pct",
					    "extrap_mape_pct", "domain_min", "domain_max",
					    "domain_unit", "source"};
	static const char *const ccols[] = {"name", "kind", "base", "source"};
	json_object *prov = NULL;
	char from[4200] = "";
	cvc_status st;

	st = find(sc, projection, from, sizeof from, &prov, err, errlen);
	if (!st)
		st = summary_table(prov, projection, from, out, err, errlen);
	if (!st && prov)
		st = array_table(prov, "origins", "model_origins",
				 "Where each GPU's figures come from", ocols, 6, from, out, err, errlen);
	if (!st && prov)
		st = array_table(prov, "models", "provenance_models",
				 "Fitted models that priced the projection", mcols, 15, from, out, err,
				 errlen);
	if (!st && prov)
		st = array_table(prov, "catalog", "provenance_catalog",
				 "Hardware catalog entries used", ccols, 4, from, out, err, errlen);
	json_object_put(prov);
	return st;
}

/* ---- warnings ----------------------------------------------------------------- */

struct wkey {
	char hw[64];
	char text[256];  /* the warning without its first figure */
	char worst[32];  /* its largest figure, with its unit ("32x", "100%") */
	double worst_v;
	double count;
	double of;       /* usable scenarios of the hardware */
};

/*
 * Splits one warning item ("fsdp comm: 32x past the measured range") into
 * its text without its figure ("fsdp comm: past the measured range") and
 * its figure with unit, so the same warning at other sizes groups
 * together.  The figure is the item's first: the later ones are the
 * warning's constants and stay in the text ("memory: 91.5% of HBM, over
 * the 88.1% ..., under their median 95.9%: may fit" kept the last one as
 * its figure, 95.9% on every row, and dropped the words of the others).
 */
static void split_item(const char *s, size_t n, char *text, size_t tlen, double *v,
		       char *unit)
{
	size_t o = 0;
	int taken = 0;

	*v = NAN;
	*unit = '\0';
	for (size_t i = 0; i < n;) {
		size_t j = i, k;
		int digit = 0;
		char *e;

		while (j < n && s[j] != ' ')
			digit |= isdigit((unsigned char)s[j++]);
		if (digit && !taken) {
			/* the figure: "(100%)" or "32x"; its first number and unit */
			for (k = i; k < j && !isdigit((unsigned char)s[k]); k++)
				;
			*v = strtod(s + k, &e);
			*unit = e < s + j && (*e == '%' || *e == 'x') ? *e : '\0';
			taken = 1;
		} else if (j > i && o + (j - i) + 2 < tlen) {
			if (o)
				text[o++] = ' ';
			memcpy(text + o, s + i, j - i);
			o += j - i;
		}
		i = j + (j < n);
	}
	text[o] = '\0';
}

/* Counts scenario row r's warnings under hw into keys. */
static void count_row(struct wkey *keys, size_t *nk, const char *hw, const char *w)
{
	while (w && *w) {
		const char *end = strstr(w, "; ");
		size_t n = end ? (size_t)(end - w) : strlen(w), k;
		char text[256], unit;
		double v;

		split_item(w, n, text, sizeof text, &v, &unit);
		for (k = 0; k < *nk && (strcmp(keys[k].hw, hw) || strcmp(keys[k].text, text)); k++)
			;
		if (k == *nk && *nk < REP_MAX_WARN_KEYS) {
			memset(&keys[k], 0, sizeof keys[k]);
			snprintf(keys[k].hw, sizeof keys[k].hw, "%s", hw);
			snprintf(keys[k].text, sizeof keys[k].text, "%s", text);
			keys[k].worst_v = -INFINITY;
			(*nk)++;
		}
		if (k < *nk) {
			keys[k].count++;
			if (isfinite(v) && v > keys[k].worst_v) {
				char nb[40];

				keys[k].worst_v = v;
				snprintf(keys[k].worst, sizeof keys[k].worst, "%s%.1s",
					 rep_fmt_num(v, nb, sizeof nb), &unit);
			}
		}
		w = end ? end + 2 : NULL;
	}
}

/* Priced scenarios per hardware (the first REP_MAX_WARN_HW named). */
struct hwtot {
	char hw[64];
	double n;
};

static void count_hw(struct hwtot *tot, size_t *n, const char *hw)
{
	size_t h;

	for (h = 0; h < *n && strcmp(tot[h].hw, hw) != 0; h++)
		;
	if (h == *n) {
		if (*n == REP_MAX_WARN_HW)
			return;
		snprintf(tot[h].hw, sizeof tot[h].hw, "%s", hw);
		tot[h].n = 0;
		(*n)++;
	}
	tot[h].n++;
}

static int cmp_wkey(const void *pa, const void *pb)
{
	const struct wkey *a = pa, *b = pb;
	int c = strcmp(a->hw, b->hw);

	if (c)
		return c;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->text, b->text);
}

cvc_status rep_warnings_table(const cvc_rep_table *sc, const struct rep_roles *ro,
			      struct rep_tables *out, char *err, size_t errlen)
{
	static const char *const cols[] = {"hw", "warning", "scenarios", "share_pct", "worst"};
	long wc = ro->col[REP_ROLE_WARNINGS], hc = ro->col[REP_ROLE_HW], vc = ro->col[REP_ROLE_VALID];
	struct wkey *keys;
	struct hwtot tot[REP_MAX_WARN_HW];
	size_t nk = 0, ntot = 0;
	cvc_rep_table *t = NULL;
	cvc_status st = CVC_OK;

	if (wc < 0)
		return CVC_OK;
	keys = calloc(REP_MAX_WARN_KEYS, sizeof *keys);
	if (!keys)
		return rep_nomem(err, errlen);
	for (size_t r = 0; r < cvc_rep_table_nrows(sc); r++) {
		const char *hw = hc >= 0 ? cvc_rep_table_str(sc, r, (size_t)hc) : NULL;

		if (vc >= 0 && cvc_rep_table_num(sc, r, (size_t)vc) == 0)
			continue; /* an impossible layout was not priced */
		hw = hw ? hw : "";
		count_row(keys, &nk, hw, cvc_rep_table_str(sc, r, (size_t)wc));
		count_hw(tot, &ntot, hw);
	}
	/* the share is of the priced scenarios of the same hardware */
	for (size_t k = 0; k < nk; k++)
		for (size_t h = 0; h < ntot; h++)
			if (strcmp(tot[h].hw, keys[k].hw) == 0)
				keys[k].of = tot[h].n;
	qsort(keys, nk, sizeof *keys, cmp_wkey);
	t = cvc_rep_table_new("proj_warnings",
			      "Warnings: what the projection priced past or without measurements", 5,
			      cols);
	if (!t)
		st = rep_nomem(err, errlen);
	for (size_t k = 0; !st && k < nk; k++) {
		long r = cvc_rep_table_add_row(t);

		if (r < 0 || cvc_rep_table_set_str(t, (size_t)r, 0, keys[k].hw) ||
		    cvc_rep_table_set_str(t, (size_t)r, 1, keys[k].text) ||
		    cvc_rep_table_set_str(t, (size_t)r, 4, keys[k].worst)) {
			st = rep_nomem(err, errlen);
			break;
		}
		cvc_rep_table_set_num(t, (size_t)r, 2, keys[k].count);
		cvc_rep_table_set_num(t, (size_t)r, 3, round(1000 * keys[k].count / keys[k].of) / 10);
	}
	free(keys);
	return rep_tables_keep(out, t, st, err, errlen);
}
