/*
 * table.c - generic tables: building, printing as CSV and JSON, and reading
 * the projector's CSV or JSON output by column name.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "rep_int.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_csv.h"

cvc_status rep_nomem(char *err, size_t errlen)
{
	return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory");
}

/* ---- building ----------------------------------------------------------------- */

cvc_rep_table *cvc_rep_table_new(const char *name, const char *title, size_t ncols,
			     const char *const *cols)
{
	cvc_rep_table *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	snprintf(t->name, sizeof t->name, "%s", name ? name : "table");
	t->title = strdup(title ? title : "");
	t->comments = strdup("");
	t->cols = calloc(ncols ? ncols : 1, sizeof *t->cols);
	if (!t->title || !t->comments || !t->cols)
		goto fail;
	for (size_t i = 0; i < ncols; i++) {
		t->cols[i] = strdup(cols[i]);
		if (!t->cols[i])
			goto fail;
		t->ncols = i + 1;
	}
	t->ncols = ncols;
	return t;
fail:
	cvc_rep_table_free(t);
	return NULL;
}

void cvc_rep_table_free(cvc_rep_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i].s);
	free(t->cells);
	for (size_t i = 0; i < t->ncols; i++)
		free(t->cols[i]);
	free(t->cols);
	free(t->title);
	free(t->comments);
	free(t->provenance);
	free(t);
}

long cvc_rep_table_add_row(cvc_rep_table *t)
{
	if (t->nrows >= CVC_REP_MAX_ROWS)
		return -1;
	/* cap counts rows: an element is a row of ncols cells. */
	if (cvc_grow(&t->cells, &t->cap, t->nrows + 1,
		     (t->ncols ? t->ncols : 1) * sizeof *t->cells, 64) != CVC_OK)
		return -1;
	memset(t->cells + t->nrows * t->ncols, 0, t->ncols * sizeof *t->cells);
	return (long)t->nrows++;
}

void cvc_rep_table_set_num(cvc_rep_table *t, size_t r, size_t c, double v)
{
	rep_cell *x = &t->cells[r * t->ncols + c];

	free(x->s);
	x->s = NULL;
	x->v = v;
	x->kind = isfinite(v) ? CVC_REP_NUM : CVC_REP_NULL;
}


/*
 * Copies s with each invalid UTF-8 byte replaced by U+FFFD, so that the CSV
 * file and the JSON (which must be UTF-8) carry the same text, and with
 * controls and bidirectional overrides shown as escapes (cvc_text_safe):
 * a table's text is shown on a page and on a terminal.
 */
static char *utf8_dup(const char *s)
{
	return cvc_text_safe_dup(s, 1);
}

int cvc_rep_table_set_str(cvc_rep_table *t, size_t r, size_t c, const char *s)
{
	rep_cell *x = &t->cells[r * t->ncols + c];
	char *d = utf8_dup(s ? s : "");

	if (!d)
		return -1;
	free(x->s);
	x->s = d;
	x->kind = CVC_REP_STR;
	return 0;
}

const rep_cell *rep_cell_at(const cvc_rep_table *t, size_t r, size_t c)
{
	return &t->cells[r * t->ncols + c];
}

/* ---- accessors ------------------------------------------------------------------ */

size_t cvc_rep_table_ncols(const cvc_rep_table *t)
{
	return t ? t->ncols : 0;
}

size_t cvc_rep_table_nrows(const cvc_rep_table *t)
{
	return t ? t->nrows : 0;
}

const char *cvc_rep_table_col(const cvc_rep_table *t, size_t c)
{
	return t && c < t->ncols ? t->cols[c] : NULL;
}

long cvc_rep_table_find(const cvc_rep_table *t, const char *name)
{
	for (size_t i = 0; t && name && i < t->ncols; i++)
		if (strcasecmp(t->cols[i], name) == 0)
			return (long)i;
	return -1;
}

cvc_rep_cell_kind cvc_rep_table_kind(const cvc_rep_table *t, size_t r, size_t c)
{
	if (!t || r >= t->nrows || c >= t->ncols)
		return CVC_REP_NULL;
	return (cvc_rep_cell_kind)rep_cell_at(t, r, c)->kind;
}

double cvc_rep_table_num(const cvc_rep_table *t, size_t r, size_t c)
{
	if (cvc_rep_table_kind(t, r, c) != CVC_REP_NUM)
		return NAN;
	return rep_cell_at(t, r, c)->v;
}

const char *cvc_rep_table_str(const cvc_rep_table *t, size_t r, size_t c)
{
	if (cvc_rep_table_kind(t, r, c) != CVC_REP_STR)
		return NULL;
	return rep_cell_at(t, r, c)->s;
}

const char *cvc_rep_table_comments(const cvc_rep_table *t)
{
	return t && t->comments ? t->comments : "";
}

/* ---- printing --------------------------------------------------------------------- */

const char *rep_fmt_num(double v, char *buf, size_t len)
{
	if (!isfinite(v)) {
		snprintf(buf, len, "%s", "");
		return buf;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	/* Shortest text that reads back exactly: the page, CSV and JSON agree.
	 * Positional, never an exponent (0.000055, not 5.5e-05: a spreadsheet
	 * or a reader takes both, a person only one), where it fits buf. */
	for (int prec = 15; prec <= 17; prec++) {
		if (fabs(v) >= 1e-12 && fabs(v) < 1e21 && len >= 40)
			cvc_fmt_plain(v, prec, buf, len);
		else
			snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is invalid. */
void rep_json_str(FILE *f, const char *str, int html)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	putc('"', f);
	while (*s) {
		unsigned c = *s;
		int n;

		if (c == '"' || c == '\\') {
			putc('\\', f);
			putc((int)c, f);
			s++;
			continue;
		}
		if (c < 0x20 || (html && (c == '<' || c == '>' || c == '&'))) {
			switch (c) {
			case '\n': fputs("\\n", f); break;
			case '\t': fputs("\\t", f); break;
			case '\r': fputs("\\r", f); break;
			default: fprintf(f, "\\u%04x", c); break;
			}
			s++;
			continue;
		}
		n = cvc_utf8_len(s);
		if (n == 0) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		/* U+2028/2029 end a line in older JavaScript parsers. */
		if (html && n == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9)) {
			fprintf(f, "\\u%04x", s[2] == 0xa8 ? 0x2028u : 0x2029u);
			s += 3;
			continue;
		}
		fwrite(s, 1, (size_t)n, f);
		s += n;
	}
	putc('"', f);
}

void rep_json_strs(FILE *f, const char *const *v, size_t n, int html)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			putc(',', f);
		rep_json_str(f, v[i], html);
	}
}

void rep_json_cell(FILE *f, const rep_cell *x, int html)
{
	char buf[40];

	if (x->kind == CVC_REP_NUM)
		fputs(rep_fmt_num(x->v, buf, sizeof buf), f);
	else if (x->kind == CVC_REP_STR)
		rep_json_str(f, x->s, html);
	else
		fputs("null", f);
}

void rep_json_table_head(FILE *f, const cvc_rep_table *t, int html)
{
	fputs("{\"name\":", f);
	rep_json_str(f, t->name, html);
	fputs(",\"title\":", f);
	rep_json_str(f, t->title, html);
	fputs(",\"columns\":[", f);
	rep_json_strs(f, (const char *const *)t->cols, t->ncols, html);
	putc(']', f);
}

void rep_json_table_rows(FILE *f, const cvc_rep_table *t, int html, const long *const *idx)
{
	fputs(",\"rows\":[", f);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs(r ? ",\n[" : "\n[", f);
		for (size_t c = 0; c < t->ncols; c++) {
			if (c)
				putc(',', f);
			if (!idx || !idx[c])
				rep_json_cell(f, rep_cell_at(t, r, c), html);
			else if (idx[c][r] < 0)
				fputs("null", f);
			else
				fprintf(f, "%ld", idx[c][r]);
		}
		putc(']', f);
	}
	fputs("]}", f);
}

void rep_json_table(FILE *f, const cvc_rep_table *t, int html)
{
	rep_json_table_head(f, t, html);
	rep_json_table_rows(f, t, html, NULL);
}

void cvc_rep_table_write_csv(FILE *f, const cvc_rep_table *t)
{
	char buf[40];

	for (size_t c = 0; c < t->ncols; c++) {
		if (c)
			putc(',', f);
		cvc_csv_field(f, t->cols[c]);
	}
	putc('\n', f);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const rep_cell *x = rep_cell_at(t, r, c);

			if (c)
				putc(',', f);
			if (x->kind == CVC_REP_NUM)
				fputs(rep_fmt_num(x->v, buf, sizeof buf), f);
			else if (x->kind == CVC_REP_STR)
				cvc_csv_field(f, x->s);
		}
		putc('\n', f);
	}
}

/* ---- reading --------------------------------------------------------------------------- */

/* Sets a cell from text: empty, a finite number, or a string. */
static int set_text(cvc_rep_table *t, size_t r, size_t c, const char *s)
{
	char *end;
	double v;

	if (*s == '\0')
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (end != s && *end == '\0') {
		/* "nan" and "inf" are the writer's way of saying "no value". */
		cvc_rep_table_set_num(t, r, c, v);
		return 0;
	}
	return cvc_rep_table_set_str(t, r, c, s);
}

static int blank_line(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	return i >= len || s[i] == '\n';
}

static int append_comment(cvc_rep_table *t, const char *s, size_t n)
{
	size_t have = strlen(t->comments);
	char *nc;

	if (have + n + 2 > CVC_REP_MAX_FILE)
		return -1;
	nc = realloc(t->comments, have + n + 2);
	if (!nc)
		return -1;
	memcpy(nc + have, s, n);
	nc[have + n] = '\n';
	nc[have + n + 1] = '\0';
	t->comments = nc;
	return 0;
}

static cvc_status read_csv(const char *path, const char *s, size_t len, cvc_rep_table **out,
			   char *err, size_t errlen)
{
	cvc_csv_rec row = {0};
	cvc_rep_table *t = NULL;
	cvc_status st = CVC_OK;
	size_t pos = 0;
	long line = 1;
	cvc_buf comments = CVC_BUF_INIT(CVC_REP_MAX_CELL);

	/* Leading '#' lines: the projector's echo of its inputs. */
	while (pos < len && (s[pos] == '#' || blank_line(s, len, pos))) {
		size_t e = pos;

		while (e < len && s[e] != '\n')
			e++;
		if (s[pos] == '#') {
			size_t b = pos + 1;

			if (b < e && s[b] == ' ')
				b++;
			/* Past CVC_REP_MAX_CELL bytes the echo is cut: it is informational. */
			for (size_t k = b; k < e; k++)
				if (s[k] != '\r')
					(void)cvc_buf_addc(&comments, s[k]);
			(void)cvc_buf_addc(&comments, '\n');
		}
		pos = e < len ? e + 1 : e;
		line++;
	}
	if (pos >= len) {
		st = cvc_errf(err, errlen, CVC_ERR_FORMAT, "'%s': line %ld: expected a header row",
			     path, line);
		goto out;
	}
	if ((st = cvc_csv_record(path, s, len, &pos, &line, &row, CVC_REP_MAX_COLS,
				 CVC_REP_MAX_CELL, err, errlen)))
		goto out;
	for (size_t c = 0; c < row.n; c++) {
		if (row.f[c][0] == '\0') {
			st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
				     "'%s': line 1: expected a name for column %zu", path, c + 1);
			goto out;
		}
	}
	{
		size_t a, b;
		const char *dup = cvc_csv_dup_name(row.f, row.n, &a, &b);

		if (dup) {
			st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
				     "'%s': line %ld: column '%.64s' given twice (columns %zu and "
				     "%zu)", path, line - 1, dup, a + 1, b + 1);
			goto out;
		}
	}
	t = cvc_rep_table_new("scenarios", "Scenarios", row.n, (const char *const *)row.f);
	if (!t) {
		st = rep_nomem(err, errlen);
		goto out;
	}
	if (comments.p) {
		free(t->comments);
		t->comments = comments.p;
		comments.p = NULL;
	}
	while (pos < len) {
		long hdr_line = line, r;

		if (blank_line(s, len, pos)) {
			while (pos < len && s[pos] != '\n')
				pos++;
			pos += pos < len;
			line++;
			continue;
		}
		if ((st = cvc_csv_record(path, s, len, &pos, &line, &row, CVC_REP_MAX_COLS,
					 CVC_REP_MAX_CELL, err, errlen)))
			goto out;
		if (row.n != t->ncols) {
			st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
				     "'%s': line %ld: expected %zu fields, got %zu", path, hdr_line,
				     t->ncols, row.n);
			goto out;
		}
		r = cvc_rep_table_add_row(t);
		if (r < 0) {
			st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
				     "'%s': line %ld: expected at most %d rows", path, hdr_line,
				     CVC_REP_MAX_ROWS);
			goto out;
		}
		for (size_t c = 0; c < row.n; c++)
			if (set_text(t, (size_t)r, c, row.f[c])) {
				st = rep_nomem(err, errlen);
				goto out;
			}
	}
	*out = t;
	t = NULL;
out:
	cvc_csv_rec_release(&row);
	cvc_buf_free(&comments);
	cvc_rep_table_free(t);
	return st;
}

/* Column index of key in t, adding the column (and widening rows) when new. */
static long json_col(cvc_rep_table *t, const char *key)
{
	long c = -1;
	char **ncols;

	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i], key) == 0)
			return (long)i;
	if (t->ncols >= CVC_REP_MAX_COLS)
		return -2;
	ncols = realloc(t->cols, (t->ncols + 1) * sizeof *ncols);
	if (!ncols)
		return -1;
	t->cols = ncols;
	t->cols[t->ncols] = strdup(key);
	if (!t->cols[t->ncols])
		return -1;
	if (t->nrows || t->cap) {
		/* Re-lay rows with one more column; only happens for late keys. */
		rep_cell *nc = calloc((t->cap ? t->cap : 1) * (t->ncols + 1), sizeof *nc);

		if (!nc) {
			free(t->cols[t->ncols]);
			return -1;
		}
		for (size_t r = 0; r < t->nrows; r++)
			memcpy(nc + r * (t->ncols + 1), t->cells + r * t->ncols,
			       t->ncols * sizeof *nc);
		free(t->cells);
		t->cells = nc;
	}
	c = (long)t->ncols++;
	return c;
}

/* s is the file from byte base on (after a BOM and blanks): offsets add base. */
static cvc_status read_json(const char *path, const char *s, size_t len, size_t base,
			    cvc_rep_table **out, char *err, size_t errlen)
{
	json_tokener *tok = json_tokener_new_ex(64);
	json_object *root = NULL, *arr = NULL;
	cvc_rep_table *t = NULL;
	cvc_status st = CVC_OK;
	enum json_tokener_error jerr;

	if (!tok)
		return rep_nomem(err, errlen);
	if (len > INT32_MAX) {
		st = cvc_errf(err, errlen, CVC_ERR_FORMAT, "'%s': byte 0: expected a smaller file", path);
		goto out;
	}
	root = json_tokener_parse_ex(tok, s, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!root || jerr != json_tokener_success) {
		st = cvc_errf(err, errlen, CVC_ERR_FORMAT, "'%s': byte %zu: expected valid JSON (%s)",
			     path, base + json_tokener_get_parse_end(tok),
			     json_tokener_error_desc(jerr == json_tokener_success
						     ? json_tokener_continue : jerr));
		goto out;
	}
	if (json_tokener_get_parse_end(tok) < len) {
		size_t e = json_tokener_get_parse_end(tok);

		while (e < len && isspace((unsigned char)s[e]))
			e++;
		if (e < len) {
			st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
				     "'%s': byte %zu: expected the end of the file", path, base + e);
			goto out;
		}
	}
	t = cvc_rep_table_new("scenarios", "Scenarios", 0, NULL);
	if (!t) {
		st = rep_nomem(err, errlen);
		goto out;
	}
	if (json_object_is_type(root, json_type_array)) {
		arr = root;
	} else if (json_object_is_type(root, json_type_object)) {
		if (!json_object_object_get_ex(root, "scenarios", &arr))
			json_object_object_get_ex(root, "rows", &arr);
		json_object_object_foreach(root, key, val) {
			/* What priced the projection: kept whole for the report's
			   provenance tables, never echoed as an assumption. */
			if (strcmp(key, "provenance") == 0 &&
			    json_object_is_type(val, json_type_object)) {
				free(t->provenance);
				t->provenance = strdup(json_object_to_json_string_ext(
					val, JSON_C_TO_STRING_PLAIN));
				if (!t->provenance) {
					st = rep_nomem(err, errlen);
					goto out;
				}
			}
			/* The other string members describe the inputs: echo them. */
			if (json_object_is_type(val, json_type_string)) {
				const char *v = json_object_get_string(val);
				size_t kl = strlen(key), vl = strlen(v);
				char *line = malloc(kl + vl + 4);

				if (!line || (snprintf(line, kl + vl + 4, "%s: %s", key, v),
					      append_comment(t, line, strlen(line)))) {
					free(line);
					st = rep_nomem(err, errlen);
					goto out;
				}
				free(line);
			}
		}
	}
	if (!arr || !json_object_is_type(arr, json_type_array)) {
		st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
			     "'%s': byte 0: expected an array of scenario objects, or an object "
			     "with a \"scenarios\" array", path);
		goto out;
	}
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		long r;

		if (!json_object_is_type(o, json_type_object)) {
			st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
				     "'%s': byte 0: expected scenario %zu to be an object", path, i);
			goto out;
		}
		r = cvc_rep_table_add_row(t);
		if (r < 0) {
			st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
				     "'%s': byte 0: expected at most %d scenarios", path,
				     CVC_REP_MAX_ROWS);
			goto out;
		}
		json_object_object_foreach(o, key, val) {
			long c = json_col(t, key);
			int bad = 0;

			if (c == -2) {
				st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
					     "'%s': byte 0: expected at most %d columns", path,
					     CVC_REP_MAX_COLS);
				goto out;
			}
			if (c < 0) {
				st = rep_nomem(err, errlen);
				goto out;
			}
			switch (json_object_get_type(val)) {
			case json_type_null:
				break;
			case json_type_boolean:
				cvc_rep_table_set_num(t, (size_t)r, (size_t)c, json_object_get_boolean(val));
				break;
			case json_type_int:
			case json_type_double:
				cvc_rep_table_set_num(t, (size_t)r, (size_t)c, json_object_get_double(val));
				break;
			case json_type_string:
				bad = set_text(t, (size_t)r, (size_t)c, json_object_get_string(val));
				break;
			default:
				bad = cvc_rep_table_set_str(t, (size_t)r, (size_t)c,
						  json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN));
				break;
			}
			if (bad) {
				st = rep_nomem(err, errlen);
				goto out;
			}
		}
	}
	*out = t;
	t = NULL;
out:
	json_object_put(root);
	json_tokener_free(tok);
	cvc_rep_table_free(t);
	return st;
}

cvc_status cvc_rep_table_read(const char *path, cvc_rep_table **out, char *err, size_t errlen)
{
	size_t len = 0;
	cvc_status st;
	struct stat sb;
	char *s;

	*out = NULL;
	/* a projection of every scenario of a big sweep passes the cap long
	 * before the page's own limits: say what to do, not only the byte */
	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size > CVC_REP_MAX_FILE)
		return cvc_errf(err, errlen, CVC_ERR_FORMAT,
				"'%s': %.0f MiB: the report reads a table of at most %zu MiB (a "
				"projection of about 150,000 scenarios with intervals); keep the rows "
				"a page needs (cvc project --top K, or a where: filter)",
				path, (double)sb.st_size / 1048576.0, CVC_REP_MAX_FILE >> 20);
	if ((st = cvc_file_read(path, CVC_REP_MAX_FILE, &s, &len, err, errlen)))
		return st;
	st = cvc_rep_table_parse(path, s, len, out, err, errlen);
	free(s);
	return st;
}

cvc_status cvc_rep_table_parse(const char *path, const char *s, size_t len,
			       cvc_rep_table **out, char *err, size_t errlen)
{
	size_t i = 0;
	cvc_status st;

	*out = NULL;
	if (len > CVC_REP_MAX_FILE)
		return cvc_errf(err, errlen, CVC_ERR_FORMAT, "'%s': larger than %zu bytes", path,
				CVC_REP_MAX_FILE);
	if (memchr(s, '\0', len)) {
		st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
			     "'%s': byte %zu: expected text, found a NUL byte", path,
			     (size_t)((char *)memchr(s, '\0', len) - s));
		goto out;
	}
	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3; /* a UTF-8 byte order mark from a spreadsheet */
	while (i < len && isspace((unsigned char)s[i]))
		i++;
	if (i < len && (s[i] == '[' || s[i] == '{')) {
		st = read_json(path, s + i, len - i, i, out, err, errlen);
	} else {
		size_t bom = len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;

		st = read_csv(path, s + bom, len - bom, out, err, errlen);
	}
out:
	return st;
}
