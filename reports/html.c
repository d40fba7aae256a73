/*
 * html.c - cvc_rep_write(): gathers the tables of both sections, writes the
 * self-contained page (style, Chart.js, the renderer and the data inlined)
 * and the CSV/JSON files of every table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cvc/cvc_csv.h"
#include "cvc/cvc_out.h"
#include "cvc/cvc_project.h"
#include "cvc/cvc_report.h"
#include "rep_proj.h"

/* Compiled in by cmake/embedded.cmake. */
extern const char cvc_chartjs[];
extern const size_t cvc_chartjs_len;
extern const char cvc_rep_js[];
extern const size_t cvc_rep_js_len;
extern const char cvc_rep_lib_js[];
extern const size_t cvc_rep_lib_js_len;
extern const char cvc_rep_answer_js[];
extern const size_t cvc_rep_answer_js_len;
extern const char cvc_rep_check_js[];
extern const size_t cvc_rep_check_js_len;

/* The page's scripts after Chart.js, in the order they run: the shared
   helpers and data (report_lib.js), the answer, the self-check, then
   report.js, which renders the page and starts the check. */
static const struct {
	const char *text;
	const size_t *len;
} page_js[] = {
	{cvc_rep_lib_js, &cvc_rep_lib_js_len},
	{cvc_rep_answer_js, &cvc_rep_answer_js_len},
	{cvc_rep_check_js, &cvc_rep_check_js_len},
	{cvc_rep_js, &cvc_rep_js_len},
};
extern const char cvc_rep_css[];
extern const size_t cvc_rep_css_len;

#define REP_MAX_NOTES 16
#define REP_MAX_SCENARIO_FILE ((size_t)4 << 20)

struct rep_doc {
	const cvc_rep_opts *o;
	const char *db_path;
	struct rep_tables tables;
	const char *unit;
	char *assumptions;            /* owned; NULL when none */
	char *notes[REP_MAX_NOTES];   /* owned */
	size_t nnotes;
};

static void add_note(struct rep_doc *d, const char *s)
{
	if (d->nnotes < REP_MAX_NOTES) {
		d->notes[d->nnotes] = strdup(s);
		if (d->notes[d->nnotes])
			d->nnotes++;
	}
}

/* The sensitivity chart left out, said where the notes are (docs/
 * REPORTS.md: a chart without data is left out with a note): the gain
 * columns absent, or empty (`cvc project --intervals off` prices no
 * doubled hardware). */
static void sensitivity_note(struct rep_doc *d, const cvc_rep_table *sc)
{
	for (size_t i = 0; i < d->tables.n; i++)
		if (!strcmp(d->tables.v[i]->name, "sensitivity"))
			return;
	if (cvc_rep_table_find(sc, "gain_compute") >= 0)
		add_note(d, "The projection's gain columns (gain_compute ... gain_inter_bw) are "
			 "empty in every best layout (`cvc project --intervals off` leaves them "
			 "unpriced): no sensitivity chart.");
	else
		add_note(d, "The projection has no gain columns (gain_compute ... gain_inter_bw): "
			 "no sensitivity chart.");
}

static void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: putc(*s, f); break;
		}
	}
}

/* A JSON string, or null for NULL. */
static void json_str_or_null(FILE *f, const char *s, int html)
{
	if (s)
		rep_json_str(f, s, html);
	else
		fputs("null", f);
}

/* The data of the page: the same object report.json holds. */
static void write_data(FILE *f, const struct rep_doc *d, int html)
{
	char when[32] = "";
	time_t now = time(NULL);
	struct tm tm;

	if (gmtime_r(&now, &tm))
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	fputs("{\"title\":", f);
	rep_json_str(f, d->o->title ? d->o->title : "cvc report", html);
	fputs(",\"version\":", f);
	rep_json_str(f, CVC_VERSION, html);
	fputs(",\"generated\":", f);
	rep_json_str(f, when, html);
	fputs(",\"db\":", f);
	json_str_or_null(f, d->db_path, html);
	fputs(",\"run\":", f);
	json_str_or_null(f, d->o->run, html);
	fputs(",\"projection\":", f);
	json_str_or_null(f, d->o->projection, html);
	fputs(",\"unit\":", f);
	rep_json_str(f, d->unit ? d->unit : "s", html);
	fputs(",\"assumptions\":", f);
	json_str_or_null(f, d->assumptions, html);
	fputs(",\"notes\":[", f);
	rep_json_strs(f, (const char *const *)d->notes, d->nnotes, html);
	fputs("],\n\"tables\":{", f);
	for (size_t i = 0; i < d->tables.n; i++) {
		if (i)
			fputs(",\n", f);
		rep_json_str(f, d->tables.v[i]->name, html);
		putc(':', f);
		if (html)
			rep_json_table_island(f, d->tables.v[i]);
		else
			rep_json_table(f, d->tables.v[i], 0);
	}
	fputs("}}\n", f);
}

/* A script body must not close its element early; ours are checked here. */
static int script_safe(const char *s, size_t n)
{
	for (size_t i = 0; i + 2 <= n; i++)
		if (s[i] == '<' && (s[i + 1] == '/' || s[i + 1] == '!'))
			return 0;
	return 1;
}

static const char head_script[] =
	/* First in <head>: collects every error and console.error for the
	   self-check in report.js; harmless when nobody reads it. */
	"window.__cvcErrors=[];"
	"window.addEventListener('error',function(e){window.__cvcErrors.push('error: '+"
	"(e.message||(e.target&&e.target.tagName)||e.type)+(e.filename?' at '+e.filename+':'+e.lineno:''));},true);"
	"window.addEventListener('unhandledrejection',function(e){window.__cvcErrors.push('unhandled rejection: '+e.reason);});"
	"(function(){var o=console.error;console.error=function(){"
	"window.__cvcErrors.push('console.error: '+Array.prototype.join.call(arguments,' '));"
	"return o.apply(console,arguments);};})();";

static cvc_status write_page(FILE *f, const struct rep_doc *d)
{
	const char *title = d->o->title ? d->o->title : "cvc report";
	/* a title from outside (a study's name, --title) is shown, its control
	   characters and bidirectional overrides as escapes, never acted on */
	char *safe = cvc_text_safe_dup(title, 0);
	cvc_status rc;

	if (!safe)
		return CVC_ERR_NOMEM;
	title = safe;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"cvc " CVC_VERSION "\">\n<title>", f);
	html_text(f, title);
	fputs("</title>\n<script>", f);
	fputs(head_script, f);
	fputs("</script>\n<style>\n", f);
	fwrite(cvc_rep_css, 1, cvc_rep_css_len, f);
	fputs("</style>\n</head>\n<body>\n<header><h1>", f);
	html_text(f, title);
	fputs("</h1><p class=\"meta\" id=\"meta\"></p></header>\n<nav id=\"toc\"></nav>\n"
	      "<main id=\"main\"></main>\n<pre id=\"cvc-selfcheck\" data-verdict=\"pending\">"
	      "CVC-SELFCHECK PENDING</pre>\n"
	      "<script type=\"application/json\" id=\"cvc-data\">", f);
	write_data(f, d, 1);
	fputs("</script>\n<script>\n", f);
	fwrite(cvc_chartjs, 1, cvc_chartjs_len, f);
	fputs("\n</script>\n", f);
	for (size_t i = 0; i < sizeof page_js / sizeof page_js[0]; i++) {
		fputs("<script>\n", f);
		fwrite(page_js[i].text, 1, *page_js[i].len, f);
		fputs("</script>\n", f);
	}
	fputs("</body>\n</html>\n", f);
	rc = ferror(f) ? CVC_ERR_IO : CVC_OK;
	free(safe);
	return rc;
}

/*
 * The files of one report, all written aside (cvc_out) and renamed only
 * once every one of them is complete: a failure or an interrupt leaves the
 * page and the --csv-dir tables as they were, never half of them replaced
 * (issue 36 item 6).
 */
struct rep_outs {
	cvc_out *v[2 * REP_MAX_TABLES + 2];
	size_t n;
};

static void outs_abort(struct rep_outs *o)
{
	for (size_t i = 0; i < o->n; i++)
		cvc_out_abort(o->v[i]);
	o->n = 0;
}

static cvc_status outs_commit(struct rep_outs *o, char *err, size_t errlen)
{
	cvc_status st = CVC_OK;
	size_t i;

	for (i = 0; i < o->n && !st; i++)
		st = cvc_out_commit(o->v[i], err, errlen);
	for (; i < o->n; i++)
		cvc_out_abort(o->v[i]);
	o->n = 0;
	return st;
}

static cvc_status write_file(struct rep_outs *outs, const char *dir, const char *name,
			     const char *ext, const cvc_rep_table *t, const struct rep_doc *d,
			     char *err, size_t errlen)
{
	char path[4096];
	cvc_out *o = NULL;
	cvc_status st;
	FILE *f;

	if ((size_t)snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext) >= sizeof path)
		return cvc_errf(err, errlen, CVC_ERR_USAGE, "'%s': path too long", dir);
	if (outs->n >= sizeof outs->v / sizeof outs->v[0])
		return cvc_errf(err, errlen, CVC_ERR_INTERNAL, "report: too many files");
	if ((st = cvc_out_open(path, &o, err, errlen)))
		return st;
	outs->v[outs->n++] = o;
	f = cvc_out_file(o);
	if (!t)
		write_data(f, d, 0);
	else if (ext[0] == 'c')
		cvc_rep_table_write_csv(f, t);
	else {
		rep_json_table(f, t, 0);
		putc('\n', f);
	}
	return ferror(f) ? cvc_errf(err, errlen, CVC_ERR_IO, "'%s': write error", path) : CVC_OK;
}

static cvc_status write_csv_dir(struct rep_outs *outs, const char *dir,
				const struct rep_doc *d, char *err, size_t errlen)
{
	cvc_status st;
	int created = 0;

	if ((st = cvc_out_dir(dir, &created, err, errlen)))
		return st;
	for (size_t i = 0; i < d->tables.n; i++) {
		st = write_file(outs, dir, d->tables.v[i]->name, "csv", d->tables.v[i], d, err,
				errlen);
		if (!st)
			st = write_file(outs, dir, d->tables.v[i]->name, "json", d->tables.v[i], d,
					err, errlen);
		if (st)
			return st;
	}
	return write_file(outs, dir, "report", "json", NULL, d, err, errlen);
}

/* Reads the scenario file to echo, bounded. */
static cvc_status read_text(const char *path, char **out, char *err, size_t errlen)
{
	size_t n;
	cvc_status st = cvc_file_read(path, REP_MAX_SCENARIO_FILE, out, &n, err, errlen);
	const char *nul = st == CVC_OK ? memchr(*out, '\0', n) : NULL;

	if (nul) {
		size_t at = (size_t)(nul - *out);

		free(*out);
		*out = NULL;
		return cvc_errf(err, errlen, CVC_ERR_FORMAT,
				"'%s': byte %zu: expected text, found a NUL byte", path, at);
	}
	return st;
}

static int append(char **dst, const char *a, const char *b)
{
	size_t have = *dst ? strlen(*dst) : 0, na = strlen(a), nb = strlen(b);
	char *p = realloc(*dst, have + na + nb + 1);

	if (!p)
		return -1;
	memcpy(p + have, a, na);
	memcpy(p + have + na, b, nb + 1);
	*dst = p;
	return 0;
}

static const char *const role_title[REP_ROLE_N] = {
	[REP_ROLE_STEP] = "step time", [REP_ROLE_COMPUTE] = "compute time",
	[REP_ROLE_EXPOSED] = "exposed communication", [REP_ROLE_TOKENS] = "tokens/s",
	[REP_ROLE_GPUS] = "GPU count", [REP_ROLE_COMM_SHARE] = "communication share",
	[REP_ROLE_EXPOSED_SHARE] = "exposed share",
};

/* Records the files a report reads as its inputs (cvc_out_input). */
static cvc_status report_inputs(cvc_db *db, const cvc_rep_opts *opts, char *err,
				size_t errlen)
{
	char prov[4096];
	int bad = 0;

	if (db)
		bad |= cvc_out_input(cvc_db_path(db)) != CVC_OK;
	if (opts->projection) {
		bad |= cvc_out_input(opts->projection) != CVC_OK;
		if (cvc_proj_provenance_path(opts->projection, prov, sizeof prov) == CVC_OK)
			bad |= cvc_out_input(prov) != CVC_OK;
	}
	if (opts->scenario)
		bad |= cvc_out_input(opts->scenario) != CVC_OK;
	return bad ? rep_nomem(err, errlen) : CVC_OK;
}

cvc_status cvc_rep_write(cvc_db *db, const cvc_rep_opts *opts, const char *html_path,
			 char *err, size_t errlen)
{
	struct rep_doc d = {0};
	cvc_rep_table *sc = NULL;
	struct rep_roles ro;
	struct rep_outs outs = {0};
	cvc_status st = CVC_OK;
	int bad;

	if (err && errlen)
		err[0] = '\0';
	if (!opts || !html_path || (!db && !opts->projection))
		return cvc_errf(err, errlen, CVC_ERR_USAGE,
			       "report: a database or a projection file is needed");
	bad = !script_safe(cvc_chartjs, cvc_chartjs_len);
	for (size_t i = 0; i < sizeof page_js / sizeof page_js[0]; i++)
		bad |= !script_safe(page_js[i].text, *page_js[i].len);
	if (bad)
		return cvc_errf(err, errlen, CVC_ERR_INTERNAL,
			       "report: an embedded script contains '</' or '<!'");
	d.o = opts;
	d.db_path = db ? cvc_db_path(db) : NULL;
	/* what the report reads, its outputs may not replace (issue 36 item 4);
	 * the page is refused before any work when it would */
	if ((st = report_inputs(db, opts, err, errlen)) ||
	    (st = cvc_out_open(html_path, &outs.v[0], err, errlen)))
		goto out;
	outs.n = 1;
	if (db) {
		st = rep_trace_tables(db, opts->run, &d.tables, err, errlen);
		if (st)
			goto out;
		if (d.tables.n == 0)
			add_note(&d, "The database holds no device activities: no trace section.");
	}
	if (opts->projection) {
		st = cvc_rep_table_read(opts->projection, &sc, err, errlen);
		if (st)
			goto out;
		rep_roles_find(sc, &ro);
		if ((st = rep_roles_check(sc, &ro, opts->projection, err, errlen)))
			goto out;
		d.unit = ro.unit;
		for (int r = 0; r < REP_ROLE_N; r++) {
			char note[200];

			if (role_title[r] && ro.col[r] < 0) {
				snprintf(note, sizeof note,
					 "The projection has no %s column: the charts that need it are left out.",
					 role_title[r]);
				add_note(&d, note);
			}
		}
		if (!ro.share_iv && ro.col[REP_ROLE_COMM] >= 0 && ro.col[REP_ROLE_STEP] >= 0 &&
		    ro.col[REP_ROLE_COMM_SHARE] >= 0)
			add_note(&d, "The projection has no comm_to_compute column: it comes from a "
				 "cvc whose comm_share was comm / (compute + comm). The communication "
				 "share shown is comm / step, computed from its columns, without an "
				 "interval.");
		st = rep_projection_tables(sc, &ro, &d.tables, err, errlen);
		if (!st)
			st = rep_warnings_table(sc, &ro, &d.tables, err, errlen);
		if (!st)
			st = rep_provenance_tables(opts->projection, sc, &d.tables, err, errlen);
		if (st)
			goto out;
		sensitivity_note(&d, sc);
		if (d.tables.n >= REP_MAX_TABLES) {
			st = cvc_errf(err, errlen, CVC_ERR_INTERNAL, "report: too many tables");
			goto out;
		}
		if (rep_scenarios_view(sc, &d.tables.v[d.tables.n]))
			goto nomem;
		d.tables.n++;
	}
	if (db) {
		st = rep_models_table(db, &d.tables, err, errlen);
		if (st)
			goto out;
	}
	if (opts->scenario) {
		char *text = NULL;

		st = read_text(opts->scenario, &text, err, errlen);
		if (st)
			goto out;
		bad = append(&d.assumptions, "# scenario file: ", opts->scenario) ||
		      append(&d.assumptions, "\n", text);
		free(text);
		if (bad)
			goto nomem;
	}
	for (size_t i = 0; i < d.tables.n; i++) {
		const char *c = cvc_rep_table_comments(d.tables.v[i]);

		if (*c && (append(&d.assumptions, d.assumptions ? "\n" : "", "# from the projection file:\n") ||
			   append(&d.assumptions, c, "")))
			goto nomem;
	}
	st = write_page(cvc_out_file(outs.v[0]), &d);
	if (st) {
		cvc_errf(err, errlen, st, "'%s': write error", html_path);
		goto out;
	}
	if (opts->csv_dir && (st = write_csv_dir(&outs, opts->csv_dir, &d, err, errlen)))
		goto out;
	st = outs_commit(&outs, err, errlen);
	goto out;
nomem:
	st = rep_nomem(err, errlen);
out:
	outs_abort(&outs);
	cvc_rep_table_free(sc);
	rep_tables_release(&d.tables);
	free(d.assumptions);
	for (size_t i = 0; i < d.nnotes; i++)
		free(d.notes[i]);
	return st;
}
