/*
 * test_report.c - reports: the generic table reader, the HTML page (data
 * island escaped, tables equal to the CSV files, size bound), the page
 * rendered in headless Chromium (self-check verdict, screenshot), and the
 * Perfetto export.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <json-c/json.h>

#include "cvc/cvc_classify.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_report.h"
#include "testutil.h"

#define EVIL "void evil<</script><script>alert(1)</script>&\"'\xff>(int)"

/* Our own copy: tu_tmpdir()'s buffer is reused by tu_run(). */
static char *mkdir_tmp(void)
{
	char *d = strdup(tu_tmpdir());

	cr_assert(d);
	return d;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	cr_assert(p);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* ---- fixtures ------------------------------------------------------------- */

static int64_t intern(cvc_db *db, const char *s)
{
	int64_t id;

	cr_assert_eq(cvc_db_intern(db, s, strlen(s), &id), CVC_OK, "%s", cvc_db_errmsg(db));
	return id;
}

static int64_t act(cvc_db *db, int64_t run, int rank, int kind, int64_t name, int64_t s,
		   int64_t e, int64_t stream)
{
	cvc_activity a = {0};
	int64_t id;

	a.run_id = run;
	a.rank = rank;
	a.device = rank;
	a.kind = (cvc_act_kind)kind;
	a.name_id = name;
	a.start_ns = s;
	a.end_ns = e;
	a.stream = stream;
	a.context = 1;
	a.correlation = s / 1000;
	a.external_id = -1;
	a.bytes = kind == CVC_ACT_MEMCPY ? 4096 : 0;
	cr_assert_eq(cvc_db_activity_add(db, &a, &id), CVC_OK, "%s", cvc_db_errmsg(db));
	return id;
}

/*
 * Four ranks, times in us: compute [0,1000) and [1000, 3000+100r) on
 * stream 7; an all-reduce [2500,4000) on stream 20 (hidden 500+100r us,
 * exposed 1000-100r us); a memcpy [4000,4200); a kernel with a hostile name
 * [4200,4300+10r); rank r starts 7r ms late.  One ProfilerStep span on the GPU.
 */
static void make_db(const char *path)
{
	cvc_db *db = NULL;
	cvc_run_info ri = {0};
	int64_t run, gemm, ar, cpy, evil, step;

	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	ri.name = "fixture";
	ri.format = "test";
	ri.gpu_model = "NVIDIA A100-SXM4-80GB";
	ri.world_size = 4;
	cr_assert_eq(cvc_db_run_new(db, &ri, &run), CVC_OK, "%s", cvc_db_errmsg(db));
	gemm = intern(db, "ampere_sgemm_128x64_tn");
	ar = intern(db, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
	cpy = intern(db, "Memcpy HtoD (Pinned -> Device)");
	evil = intern(db, EVIL);
	step = intern(db, "ProfilerStep#3");
	for (int r = 0; r < 4; r++) {
		const int64_t us = 1000, base = 1000000000 + r * 7000 * us;
		cvc_rank_info rk = {r, "host", 100 + r, 0};
		cvc_collective c = {0};
		cvc_range g = {0};

		cr_assert_eq(cvc_db_rank_put(db, run, &rk), CVC_OK);
		act(db, run, r, CVC_ACT_KERNEL, gemm, base, base + 1000 * us, 7);
		act(db, run, r, CVC_ACT_KERNEL, gemm, base + 1000 * us, base + (3000 + 100 * r) * us, 7);
		c.activity_id = act(db, run, r, CVC_ACT_KERNEL, ar, base + 2500 * us, base + 4000 * us, 20);
		c.coll = "allreduce";
		c.dtype = "Float";
		c.in_nelems = c.out_nelems = 1 << 20;
		c.bytes = 4 << 20;
		c.group_size = 4;
		c.root = -1;
		cr_assert_eq(cvc_db_collective_add(db, &c), CVC_OK, "%s", cvc_db_errmsg(db));
		act(db, run, r, CVC_ACT_MEMCPY, cpy, base + 4000 * us, base + 4200 * us, 7);
		act(db, run, r, CVC_ACT_KERNEL, evil, base + 4200 * us, base + (4300 + 10 * r) * us, 7);
		g.run_id = run;
		g.rank = r;
		g.device = r;
		g.kind = CVC_RANGE_GPU;
		g.name_id = step;
		g.start_ns = base;
		g.end_ns = base + 4300 * us;
		g.tid = -1;
		cr_assert_eq(cvc_db_range_add(db, &g), CVC_OK, "%s", cvc_db_errmsg(db));
	}
	cr_assert_eq(cvc_db_commit(db), CVC_OK, "%s", cvc_db_errmsg(db));
	cvc_db_close(db);
}

/*
 * A projection of 4 models x 2 GPUs x 5 GPU counts x 25 layouts = 1000
 * scenarios with the projector's column names; one model name needs CSV
 * quoting.  Figures follow a simple formula: what matters is that they are
 * different per scenario and consistent (shares from the times).
 */
static void make_projection(const char *path)
{
	static const char *const models[] = {"tiny-1b", "\"mid\", 8B", "big-70b", "huge-405b"};
	static const double layers[] = {16, 32, 80, 126}, hidden[] = {2048, 4096, 8192, 16384};
	static const char *const gpus[] = {"A100-SXM-80GB", "H100-SXM"};
	FILE *f = fopen(path, "w");
	int idx = 0;

	cr_assert(f);
	fputs("# study: synthetic (test_report.c) </script><b>not markup</b>\n", f);
	fputs("index,study,model,layers,hidden,heads,kv_heads,ffn,vocab,ffn_type,gpu,gpus,tp,pp,dp,"
	      "micro_batch,valid,fits,step_s,compute_s,bubble_s,comm_s,hidden_s,exposed_s,"
	      "comm_share,exposed_share,comm_to_compute,mem_gb,mfu,tokens_per_s,comm_tp_s,"
	      "exposed_tp_s,exposed_dp_s,"
	      "exposed_s_lo,exposed_s_hi,comm_share_lo,comm_share_hi,exposed_share_lo,"
	      "exposed_share_hi,hbm_gb,gain_compute,gain_inter_bw\n", f);
	for (int m = 0; m < 4; m++)
		for (int g = 0; g < 2; g++)
			for (int k = 0; k < 5; k++)
				for (int l = 0; l < 25; l++) {
					int n = 8 << (k * 2), tp = 1 << (l % 4), pp = 1 << (l / 5 % 4);
					double comp = layers[m] * hidden[m] / 1e5 / (n / 8.0) * (g ? 0.5 : 1) *
						      (1 + 0.01 * l);
					double comm = comp * (0.05 + 0.02 * k + 0.01 * (l % 5)) *
						      (1 + 0.2 * g) / (1 + 0.3 * m);
					double hid = comm * (0.3 + 0.02 * l);
					double exp, bub = comp * 0.01 * pp, step;
					int dp = n / (tp * pp) > 0 ? n / (tp * pp) : 1;

					hid = hid > comm ? comm : hid;
					exp = comm - hid;
					step = comp + exp + bub;
					fprintf(f, "%d,synthetic,", idx++);
					if (strchr(models[m], '"'))
						fputs("\"\"\"mid\"\", 8B\",", f);
					else
						fprintf(f, "%s,", models[m]);
					fprintf(f, "%g,%g,32,8,%g,128256,swiglu,%s,%d,%d,%d,%d,1,%d,%d,"
						"%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,"
						"%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,80,%.9g,%.9g\n",
						layers[m], hidden[m], hidden[m] * 3.5, gpus[g], n, tp, pp, dp,
						l != 24, l % 7 != 6, step, comp, bub, comm, hid, exp,
						comm / step, exp / step, comm / comp, 20 + 2.5 * l,
						0.3 + 0.001 * l,
						4e6 / step * (1 - 0.01 * l), comm * 0.6,
						/* TP leads the exposed time on the smaller models,
						   DP on the larger: the finding must say it moves. */
						exp * (m < 2 ? 0.7 : 0.3), exp * (m < 2 ? 0.3 : 0.7),
						exp * 0.8, exp * 1.3, comm / step * 0.8, comm / step * 1.2,
						exp / step * 0.8, exp / step * 1.3,
						1 + 0.1 * g, 1 + 0.02 * k);
				}
	cr_assert_eq(fclose(f), 0);
}

/* ---- helpers --------------------------------------------------------------- */

/* The JSON island of a page, parsed. */
/* Expands the island's packed columns as report.js does (reports/island.c):
 * a cell of a column named in a table's "dict" is an index into it. */
static void unpack(json_object *data)
{
	json_object *tables;

	if (!json_object_object_get_ex(data, "tables", &tables))
		return;
	json_object_object_foreach(tables, name, t) {
		json_object *dict, *cols, *rows;

		(void)name;
		if (!json_object_object_get_ex(t, "dict", &dict))
			continue;
		cr_assert(json_object_object_get_ex(t, "columns", &cols) &&
			  json_object_object_get_ex(t, "rows", &rows));
		json_object_object_foreach(dict, col, vals) {
			size_t c = 0, nc = json_object_array_length(cols);

			while (c < nc && strcmp(json_object_get_string(
						    json_object_array_get_idx(cols, c)), col) != 0)
				c++;
			cr_assert_lt(c, nc, "dict names no column: %s", col);
			for (size_t r = 0; r < json_object_array_length(rows); r++) {
				json_object *row = json_object_array_get_idx(rows, r);
				json_object *x = json_object_array_get_idx(row, c);

				if (!x)
					continue;
				cr_assert(json_object_is_type(x, json_type_int), "packed cell not an index");
				json_object_array_put_idx(row, c, json_object_get(json_object_array_get_idx(
									  vals, (size_t)json_object_get_int(x))));
			}
		}
		json_object_object_del(t, "dict");
	}
}

static json_object *island(const char *html)
{
	static const char open_tag[] = "<script type=\"application/json\" id=\"cvc-data\">";
	const char *s = strstr(html, open_tag), *e;
	json_object *o;
	char *text;

	cr_assert(s, "no data island");
	s += strlen(open_tag);
	e = strstr(s, "</script>");
	cr_assert(e);
	text = strndup(s, (size_t)(e - s));
	cr_assert(text);
	cr_assert_null(memchr(text, '<', strlen(text)), "raw '<' inside the data island");
	o = json_tokener_parse(text);
	cr_assert(o, "data island is not JSON");
	free(text);
	unpack(o);
	return o;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	cr_assert(json_object_object_get_ex(o, key, &v), "missing key '%s'", key);
	return v;
}

/* Every table of the page equals its CSV and JSON file, cell for cell. */
static size_t compare_tables(json_object *data, const char *csv_dir)
{
	json_object *tables = get(data, "tables");
	size_t n = 0;

	json_object_object_foreach(tables, name, tj) {
		json_object *cols = get(tj, "columns"), *rows = get(tj, "rows");
		char csvname[200], jsonname[200];
		cvc_rep_table *t = NULL;
		char err[512];
		char *path, *jtext;
		json_object *jfile;

		snprintf(csvname, sizeof csvname, "%s.csv", name);
		path = join(csv_dir, csvname);
		cr_assert_eq(cvc_rep_table_read(path, &t, err, sizeof err), CVC_OK, "%s", err);
		free(path);
		cr_assert_eq(cvc_rep_table_ncols(t), json_object_array_length(cols), "%s", name);
		cr_assert_eq(cvc_rep_table_nrows(t), json_object_array_length(rows), "%s", name);
		for (size_t c = 0; c < cvc_rep_table_ncols(t); c++)
			cr_assert_str_eq(cvc_rep_table_col(t, c),
					 json_object_get_string(json_object_array_get_idx(cols, c)));
		for (size_t r = 0; r < cvc_rep_table_nrows(t); r++) {
			json_object *row = json_object_array_get_idx(rows, r);

			for (size_t c = 0; c < cvc_rep_table_ncols(t); c++) {
				json_object *v = json_object_array_get_idx(row, c);

				switch (cvc_rep_table_kind(t, r, c)) {
				case CVC_REP_NULL:
					/* An empty CSV cell is null or "" on the page. */
					cr_assert(v == NULL || (json_object_is_type(v, json_type_string) &&
								!*json_object_get_string(v)),
						  "%s[%zu][%zu]", name, r, c);
					break;
				case CVC_REP_NUM:
					cr_assert(json_object_is_type(v, json_type_double) ||
						  json_object_is_type(v, json_type_int), "%s[%zu][%zu]", name, r, c);
					cr_assert_eq(json_object_get_double(v), cvc_rep_table_num(t, r, c),
						     "%s[%zu][%zu]: page %.17g, csv %.17g", name, r, c,
						     json_object_get_double(v), cvc_rep_table_num(t, r, c));
					break;
				default:
					cr_assert_str_eq(json_object_get_string(v), cvc_rep_table_str(t, r, c),
							 "%s[%zu][%zu]", name, r, c);
				}
			}
		}
		cvc_rep_table_free(t);
		/* The per-table JSON file holds the same object. */
		snprintf(jsonname, sizeof jsonname, "%s.json", name);
		path = join(csv_dir, jsonname);
		jtext = tu_read(path, NULL);
		cr_assert(jtext, "%s", path);
		jfile = json_tokener_parse(jtext);
		cr_assert(jfile, "%s is not JSON", path);
		cr_assert(json_object_equal(get(jfile, "rows"), rows), "%s differs", path);
		json_object_put(jfile);
		free(jtext);
		free(path);
		n++;
	}
	return n;
}

/* A column of table name in the island, by column name. */
static double cell(json_object *data, const char *table, size_t row, const char *colname)
{
	json_object *t = get(get(data, "tables"), table), *cols = get(t, "columns");

	for (size_t c = 0; c < json_object_array_length(cols); c++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(cols, c)), colname) == 0)
			return json_object_get_double(json_object_array_get_idx(
				json_object_array_get_idx(get(t, "rows"), row), c));
	cr_assert_fail("%s has no column %s", table, colname);
	return NAN;
}

/* ---- table reader ------------------------------------------------------------ */

Test(report, reads_csv_with_quotes_comments_and_empties)
{
	char *dir = mkdir_tmp(), *p = join(dir, "a.csv");
	static const char text[] = "# made by hand\n# second\n\nname,x,\"odd, col\"\r\n"
				   "\"a \"\"q\"\", b\",1.5,\n"
				   "plain,nan,\"multi\nline\"\n\n";
	cvc_rep_table *t = NULL;
	char err[256];

	cr_assert_eq(tu_write(p, text, sizeof text - 1), 0);
	cr_assert_eq(cvc_rep_table_read(p, &t, err, sizeof err), CVC_OK, "%s", err);
	cr_assert_eq(cvc_rep_table_ncols(t), 3);
	cr_assert_eq(cvc_rep_table_nrows(t), 2);
	cr_assert_str_eq(cvc_rep_table_col(t, 2), "odd, col");
	cr_assert_eq(cvc_rep_table_find(t, "ODD, COL"), 2);
	cr_assert_str_eq(cvc_rep_table_str(t, 0, 0), "a \"q\", b");
	cr_assert_eq(cvc_rep_table_num(t, 0, 1), 1.5);
	cr_assert_eq(cvc_rep_table_kind(t, 0, 2), CVC_REP_NULL);
	cr_assert_eq(cvc_rep_table_kind(t, 1, 1), CVC_REP_NULL, "nan is no value");
	cr_assert_str_eq(cvc_rep_table_str(t, 1, 2), "multi\nline");
	cr_assert_str_eq(cvc_rep_table_comments(t), "made by hand\nsecond\n");
	cvc_rep_table_free(t);
	free(p);
	free(dir);
}

Test(report, reads_json_array_and_object_forms)
{
	char *dir = mkdir_tmp(), *a = join(dir, "a.json"), *b = join(dir, "b.json");
	static const char ta[] = " [{\"gpus\":8,\"gpu\":\"H100\"},{\"gpus\":16,\"extra\":true,\"gpu\":null}]";
	static const char tb[] = "{\"study\":\"s1\",\"scenarios\":[{\"step_s\":0.5}]}";
	cvc_rep_table *t = NULL;
	char err[256];

	cr_assert_eq(tu_write(a, ta, sizeof ta - 1), 0);
	cr_assert_eq(tu_write(b, tb, sizeof tb - 1), 0);
	cr_assert_eq(cvc_rep_table_read(a, &t, err, sizeof err), CVC_OK, "%s", err);
	cr_assert_eq(cvc_rep_table_ncols(t), 3, "a key first seen late becomes a column");
	cr_assert_eq(cvc_rep_table_num(t, 1, 0), 16);
	cr_assert_eq(cvc_rep_table_num(t, 1, 2), 1);
	cr_assert_eq(cvc_rep_table_kind(t, 0, 2), CVC_REP_NULL);
	cr_assert_eq(cvc_rep_table_kind(t, 1, 1), CVC_REP_NULL);
	cr_assert_str_eq(cvc_rep_table_str(t, 0, 1), "H100");
	cvc_rep_table_free(t);
	cr_assert_eq(cvc_rep_table_read(b, &t, err, sizeof err), CVC_OK, "%s", err);
	cr_assert_eq(cvc_rep_table_num(t, 0, 0), 0.5);
	cr_assert_str_eq(cvc_rep_table_comments(t), "study: s1\n");
	cvc_rep_table_free(t);
	free(a);
	free(b);
	free(dir);
}

Test(report, malformed_tables_name_file_and_position)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"a,b\n1,2\n3\n", "line 3: expected 2 fields, got 1"},
		{"a,b\n1,\"open\n", "line 2: expected a closing '\"'"},
		{"a,b\n1,x\"y\n", "line 2: expected '\"' only inside a quoted field"},
		{"a,,c\n", "line 1: expected a name for column 2"},
		{"[{\"a\":1},", "byte 9: expected valid JSON"},
		{"{\"a\":1} x", "byte 8: expected the end of the file"},
		{"[1,2]", "expected scenario 0 to be an object"},
		{"# only a comment\n", "expected a header row"},
	};
	char *dir = mkdir_tmp();

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char name[32], err[512];
		char *p;
		cvc_rep_table *t = (cvc_rep_table *)1;

		snprintf(name, sizeof name, "bad%zu.csv", i);
		p = join(dir, name);
		cr_assert_eq(tu_write(p, cases[i].text, strlen(cases[i].text)), 0);
		cr_assert_eq(cvc_rep_table_read(p, &t, err, sizeof err), CVC_ERR_FORMAT, "case %zu", i);
		cr_assert_null(t);
		cr_assert(strstr(err, cases[i].want), "case %zu: %s", i, err);
		cr_assert(strstr(err, p), "case %zu names the file: %s", i, err);
		free(p);
	}
	free(dir);
}

Test(report, truncated_and_corrupted_inputs_never_crash)
{
	static const char csv[] = "# c\nmodel,gpus,step_s\n\"a,\"\"b\"\"\",8,1.5\nc,16,2\n";
	static const char json[] = "{\"study\":\"s\",\"scenarios\":[{\"model\":\"a\",\"gpus\":8},"
				   "{\"model\":[1,{\"x\":2}],\"gpus\":16.5}]}";
	const char *const texts[] = {csv, json};
	char *dir = mkdir_tmp(), *p = join(dir, "t.txt");

	for (int k = 0; k < 2; k++) {
		size_t n = strlen(texts[k]);

		for (size_t cut = 0; cut <= n; cut++) {
			for (int flip = 0; flip < 2; flip++) {
				char buf[512], err[512];
				cvc_rep_table *t = NULL;
				cvc_status st;

				memcpy(buf, texts[k], cut);
				if (flip && cut > 0)
					buf[cut / 2] ^= (char)0x5a; /* one corrupted byte */
				cr_assert_eq(tu_write(p, buf, cut), 0);
				st = cvc_rep_table_read(p, &t, err, sizeof err);
				cr_assert(st == CVC_OK || st == CVC_ERR_FORMAT, "text %d cut %zu: %d", k, cut, st);
				cr_assert((st == CVC_OK) == (t != NULL));
				if (st)
					cr_assert(strstr(err, p), "%s", err);
				cvc_rep_table_free(t);
			}
		}
	}
	free(p);
	free(dir);
}

/* ---- the page ------------------------------------------------------------------- */

struct page {
	char *dir, *db, *proj, *html, *csv;
};

static void make_page(struct page *pg, int with_db, int with_proj)
{
	cvc_rep_opts o = {0};
	cvc_db *db = NULL;
	char err[1024];

	pg->dir = mkdir_tmp();
	pg->db = join(pg->dir, "t.db");
	pg->proj = join(pg->dir, "proj.csv");
	pg->html = join(pg->dir, "report.html");
	pg->csv = join(pg->dir, "csv");
	if (with_db) {
		make_db(pg->db);
		cr_assert_eq(cvc_db_open(pg->db, 0, &db), CVC_OK);
	}
	if (with_proj) {
		make_projection(pg->proj);
		o.projection = pg->proj;
		o.scenario = pg->proj; /* any text file: echoed under the assumptions */
	}
	/* markup to escape, and a control character to show rather than pass on */
	o.title = "fixture <report> & \"co\"\x1b";
	o.csv_dir = pg->csv;
	cr_assert_eq(cvc_rep_write(db, &o, pg->html, err, sizeof err), CVC_OK, "%s", err);
	cvc_db_close(db);
}

static void free_page(struct page *pg)
{
	free(pg->dir);
	free(pg->db);
	free(pg->proj);
	free(pg->html);
	free(pg->csv);
}

Test(report, page_tables_equal_csv_and_figures_follow_the_trace)
{
	struct page pg;
	struct stat sb;
	json_object *data;
	char *html;
	size_t n;

	make_page(&pg, 1, 1);
	cr_assert_eq(stat(pg.html, &sb), 0);
	cr_assert_lt(sb.st_size, 3 << 20, "1000 scenarios: %lld bytes", (long long)sb.st_size);
	html = tu_read(pg.html, NULL);
	cr_assert(html);
	cr_assert(strstr(html, "<title>fixture &lt;report&gt; &amp; &quot;co&quot;\\x1b</title>"));
	cr_assert_null(strstr(html, "<script>alert(1)"), "kernel name reached the page raw");
	cr_assert_null(strstr(html, "http://") ? strstr(html, "src=\"http") : NULL);
	cr_assert_null(strstr(html, "<script src"), "no external script");
	data = island(html);
	n = compare_tables(data, pg.csv);
	cr_assert_geq(n, 10, "tables on the page: %zu", n);
	/* Figures of the trace section, from the fixture's construction. */
	for (int r = 0; r < 4; r++) {
		cr_assert_float_eq(cell(data, "ranks", (size_t)r, "hidden_ms"), 0.5 + 0.1 * r, 1e-9);
		cr_assert_float_eq(cell(data, "ranks", (size_t)r, "exposed_ms"), 1.0 - 0.1 * r, 1e-9);
		cr_assert_float_eq(cell(data, "ranks", (size_t)r, "compute_only_ms"), 2.6 + 0.01 * r, 1e-9);
		/* the memcpy [4000,4200) runs while no kernel does: busy, not idle */
		cr_assert_float_eq(cell(data, "ranks", (size_t)r, "copy_ms"), 0.2, 1e-9);
		cr_assert_float_eq(cell(data, "ranks", (size_t)r, "idle_ms"), 0.0, 1e-9);
		cr_assert_float_eq(cell(data, "ranks", (size_t)r, "span_ms"), 4.3 + 0.01 * r, 1e-9);
		cr_assert_float_eq(cell(data, "ranks", (size_t)r, "busy_ms"), 4.3 + 0.01 * r, 1e-9);
		cr_assert_float_eq(cell(data, "skew", (size_t)r, "start_offset_ms"), 7.0 * r, 1e-9);
	}
	/* 4 MiB in 1.5 ms: algbw 2.796 GB/s, busbw x 2(n-1)/n = 1.5. */
	cr_assert_float_eq(cell(data, "collectives", 0, "busbw_gbps"),
			   4194304.0 / 1.5e6 * 1.5, 1e-9);
	cr_assert_float_eq(cell(data, "skew_summary", 0, "busiest_rank"), 3, 0);
	/* Projection: 1000 scenarios, best layouts found, the ideal line. */
	cr_assert_eq(json_object_array_length(get(get(get(data, "tables"), "scenarios"), "rows")), 1000);
	cr_assert_eq(json_object_array_length(get(get(get(data, "tables"), "best_layout"), "rows")),
		     4 * 2 * 5);
	cr_assert_float_eq(cell(data, "scaling", 0, "scaling_efficiency"), 1.0, 1e-12);
	/* Headline: A100 before H100 (catalog peak), shares and intervals from
	   the scenario; the findings name the type that leads the exposed time. */
	cr_assert_eq(json_object_array_length(get(get(get(data, "tables"), "headline"), "rows")),
		     4 * 2 * 5);
	cr_assert_float_eq(cell(data, "headline", 0, "generation"), 1, 0);
	cr_assert_float_eq(cell(data, "headline", 1, "generation"), 2, 0);
	cr_assert_float_eq(cell(data, "headline", 0, "comm_share_lo"),
			   cell(data, "headline", 0, "comm_share") * 0.8, 1e-6);
	{
		json_object *f = get(get(get(data, "tables"), "findings"), "rows");
		/* one sentence per model and GPU count: 4 x 5, in headline order */
		const char *tiny = json_object_get_string(
			json_object_array_get_idx(json_object_array_get_idx(f, 4), 5));
		const char *huge = json_object_get_string(
			json_object_array_get_idx(json_object_array_get_idx(f, 19), 5));

		cr_assert_eq(json_object_array_length(f), 4 * 5);
		cr_assert(strstr(tiny, "tiny-1b at 2,048 GPUs") &&
			  strstr(tiny, "TP leads the exposed time on every generation"), "%s", tiny);
		cr_assert(strstr(huge, "DP leads the exposed time"), "%s", huge);
		cr_assert(strstr(huge, "of the step on A100-SXM-80GB,") && strstr(huge, "on H100-SXM;"),
			  "%s", huge);
	}
	/* The echo survives intact, and only escaped in the page. */
	cr_assert(strstr(json_object_get_string(get(data, "assumptions")),
			 "study: synthetic (test_report.c) </script><b>not markup</b>"));
	cr_assert_null(strstr(html, "<b>not markup"));
	json_object_put(data);
	free(html);
	free_page(&pg);
}

Test(report, projection_only_and_trace_only_pages)
{
	struct page a, b;
	char *ha, *hb;
	json_object *da, *db;

	make_page(&a, 0, 1);
	make_page(&b, 1, 0);
	ha = tu_read(a.html, NULL);
	hb = tu_read(b.html, NULL);
	da = island(ha);
	db = island(hb);
	cr_assert_not(json_object_object_get_ex(get(da, "tables"), "ranks", NULL));
	cr_assert(json_object_object_get_ex(get(da, "tables"), "exposed_heatmap", NULL));
	cr_assert(json_object_object_get_ex(get(db, "tables"), "ranks", NULL));
	cr_assert_not(json_object_object_get_ex(get(db, "tables"), "scenarios", NULL));
	compare_tables(da, a.csv);
	compare_tables(db, b.csv);
	json_object_put(da);
	json_object_put(db);
	free(ha);
	free(hb);
	free_page(&a);
	free_page(&b);
}

/* ---- the page in a real browser ------------------------------------------------------ */

/* Runs headless Chromium on file://html with extra args; returns stdout.
 * A browser that hangs (GPU process, D-Bus, a page that never settles) is
 * killed with its children after 180 s and the test fails on the missing
 * verdict, instead of waiting for ctest's limit on the whole binary. */
static char *browse(const char *html, const char *extra)
{
	char *prof = mkdir_tmp(), cmd[8192], *out = NULL;
	int rc;

	snprintf(cmd, sizeof cmd,
		 "timeout -k 10 180 '%s' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
		 "--disable-background-networking --disable-component-update --disable-sync "
		 "--user-data-dir='%s' --virtual-time-budget=5000 %s 'file://%s'",
		 tu_chromium(), prof, extra, html);
	rc = tu_run(cmd, &out, NULL);
	cr_assert(rc != 124 && rc != 128 + SIGKILL, "chromium did not finish within 180 s on %s",
		  html);
	free(prof);
	return out ? out : strdup("");
}

/*
 * The verdict's headline facts: a table of rows rows (the models x GPUs at
 * the largest GPU count), every row with both intervals; the answer charts
 * every GPU count of the study and ends within the first screen.
 */
static void first_screen_headline(const char *v, int rows)
{
	const char *h = strstr(v, "headline=rows:");
	int n = 0, iv = 0, shown = 0, counts = 0, end = 0, screen = 0;

	cr_assert(h, "%s", v);
	cr_assert_eq(sscanf(h, "headline=rows:%d,intervals:%d,counts:%d/%d,end:%d,screen:%d", &n,
			    &iv, &shown, &counts, &end, &screen), 6, "%s", v);
	cr_assert_eq(n, rows, "%s", v);
	cr_assert_eq(iv, 2 * rows, "%s", v);
	cr_assert_eq(shown, counts, "%s", v);
	cr_assert_gt(end, 0, "%s", v);
	cr_assert_leq(end, screen, "%s", v);
	cr_assert_gt(screen, 600, "%s", v);
}

static char *verdict(const char *dom)
{
	const char *s = strstr(dom, "CVC-SELFCHECK");
	const char *e = s ? strstr(s, "</pre>") : NULL;

	return s && e ? strndup(s, (size_t)(e - s)) : strdup("(no verdict in the DOM)");
}

/* The browser as a planner opens the page: 1400 px wide, no network at all. */
#define FIRST_SCREEN "--window-size=1400,900 --proxy-server=127.0.0.1:9 " \
		     "--host-resolver-rules='MAP * ~NOTFOUND' "
#define DOM FIRST_SCREEN "--dump-dom"

/* Two bars charted over canvas id, each coloured c1 and c2, n labels. */
#define TAMPER_CHART(id, w, n, c1, c2) \
	"<div style=\"width:" w "px;height:200px\"><canvas id=\"" id "\"></canvas></div><script>" \
	"new Chart(document.getElementById('" id "'),{type:'bar',data:{labels:" \
	"Array.from({length:" n "},function(_,i){return 'label number '+i;}),datasets:[" \
	"{label:'exposed comm',data:Array(" n ").fill(1),backgroundColor:'" c1 "'}," \
	"{label:'compute',data:Array(" n ").fill(2),backgroundColor:'" c2 "'}]}});</script>"

/* Pages spoiled on purpose: the file, what goes in, what the verdict must name. */
static const struct tampered {
	const char *file, *snippet, *why;
} tampered[] = {
	{"blank.html", "<canvas id=\"tamper\" width=\"200\" height=\"100\"></canvas>",
	 "tamper: blank"},
	{"throw.html", "<script>null.boom();</script>", "errors=1"},
	{"console.html", "<script>console.error('x');</script>", "console.error: x"},
	{"red.html", TAMPER_CHART("tamper-red", "400", "3", "#d62728", "#d62728"),
	 "tamper-red: 2 series share the communication colour"},
	{"redcompute.html", TAMPER_CHART("tamper-rc", "400", "3", "#1f77b4", "#D62728"),
	 "tamper-rc: series \"compute\" has the communication colour"},
	{"crowded.html", TAMPER_CHART("tamper-many", "300", "300", "#1f77b4", "#2ca02c"),
	 "tamper-many x:"},
	{"nohead.html", "<script>document.getElementById('headline-table').remove();</script>",
	 "headline: no table"},
};

/* Writes a copy of page with extra inserted before "</body>". */
static char *tamper(const char *dir, const char *page, const char *name, const char *extra)
{
	char *html = tu_read(page, NULL), *p = join(dir, name), *at;
	FILE *f;

	cr_assert(html);
	at = strstr(html, "</body>");
	cr_assert(at);
	f = fopen(p, "w");
	cr_assert(f);
	fwrite(html, 1, (size_t)(at - html), f);
	fputs(extra, f);
	fputs(at, f);
	cr_assert_eq(fclose(f), 0);
	free(html);
	return p;
}

Test(report, renders_in_headless_chromium)
{
	struct page pg;
	char *dom, *v, *shot, *bad, arg[4200];
	struct stat sb;
	FILE *png;
	unsigned char sig[8];

	if (!tu_chromium())
		cr_skip_test("chromium is not installed (apt-get install chromium; `make` installs it)");
	make_page(&pg, 1, 1);
	dom = browse(pg.html, DOM);
	v = verdict(dom);
	cr_assert(strstr(v, "CVC-SELFCHECK PASS"), "%s", v);
	/* Fourteen charts: one per model on the first screen; exposed by type,
	   memory, sensitivity; ranks, classes, collectives, skew; time, share,
	   scaling. */
	cr_assert(strstr(v, "canvases=14 "), "%s", v);
	/* Communication's colour on one communication series per chart at most,
	   every chart's labels readable at 1400 px. */
	cr_assert(strstr(v, " colour=0 labels=0 "), "%s", v);
	first_screen_headline(v, 4 * 2);
	cr_assert(strstr(dom, "<table class=\"data heat\">"), "heat map table rendered");
	free(v);
	free(dom);

	/* The check must be able to fail: a blank canvas, a thrown error, a console error. */
	for (size_t i = 0; i < sizeof tampered / sizeof tampered[0]; i++) {
		const struct tampered *t = &tampered[i];

		bad = tamper(pg.dir, pg.html, t->file, t->snippet);
		dom = browse(bad, DOM);
		v = verdict(dom);
		cr_assert(strstr(v, "CVC-SELFCHECK FAIL") && strstr(v, t->why), "%s: %s", t->file,
			  v);
		free(v);
		free(dom);
		free(bad);
	}

	/* A screenshot, kept beside the page for a person to look at. */
	shot = join(pg.dir, "report.png");
	snprintf(arg, sizeof arg, "--screenshot='%s' --window-size=1400,3000 --hide-scrollbars", shot);
	free(browse(pg.html, arg));
	cr_assert_eq(stat(shot, &sb), 0, "no screenshot at %s", shot);
	cr_assert_gt(sb.st_size, 20000, "screenshot is %lld bytes", (long long)sb.st_size);
	png = fopen(shot, "rb");
	cr_assert(png);
	cr_assert_eq(fread(sig, 1, 8, png), 8);
	fclose(png);
	cr_assert_eq(memcmp(sig, "\x89PNG\r\n\x1a\n", 8), 0);
	cr_log_info("screenshot: %s", shot);
	free(shot);
	/* The first screen as a planner sees it: the headline table and findings. */
	shot = join(pg.dir, "first-screen.png");
	snprintf(arg, sizeof arg, FIRST_SCREEN "--screenshot='%s' --hide-scrollbars", shot);
	free(browse(pg.html, arg));
	cr_assert_eq(stat(shot, &sb), 0, "no screenshot at %s", shot);
	cr_assert_gt(sb.st_size, 20000, "first screen is %lld bytes", (long long)sb.st_size);
	cr_log_info("first screen: %s", shot);
	free(shot);
	free_page(&pg);
}

/* ---- Perfetto ------------------------------------------------------------------------ */

Test(report, perfetto_export_is_chrome_trace_json)
{
	char *dir = mkdir_tmp(), *dbp = join(dir, "t.db"), *out = join(dir, "t.json"), *text;
	static const char *const reserved[] = {
		"thread_state_running", "rail_animation", "rail_load", "rail_idle",
		"thread_state_runnable", "startup", "olive", "grey", "bad", "terrible",
		"generic_work"};
	cvc_rep_perfetto_stats st;
	cvc_db *db = NULL;
	json_object *root, *ev;
	FILE *f;
	size_t nx = 0, nm = 0, nannot = 0, ncomm = 0;
	int saw_evil = 0;

	make_db(dbp);
	/* Classes as an import leaves them: the export colours by class. */
	cr_assert_eq(cvc_db_open(dbp, 0, &db), CVC_OK);
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	cr_assert_eq(cvc_classify_db(db, NULL, 0), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	f = fopen(out, "w");
	cr_assert(f);
	cr_assert_eq(cvc_rep_perfetto(db, "fixture", f, &st), CVC_OK, "%s", cvc_db_errmsg(db));
	fclose(f);
	cr_assert_eq(cvc_rep_perfetto(db, "nope", stdout, NULL), CVC_ERR_NOTFOUND);
	cvc_db_close(db);
	cr_assert_eq(st.events, 4 * 5 + 4, "%lld", (long long)st.events);
	cr_assert_eq(st.processes, 4);
	cr_assert_eq(st.threads, 4 * 3, "streams 7, 20 and the annotation track");
	text = tu_read(out, NULL);
	root = json_tokener_parse(text);
	cr_assert(root, "not JSON");
	ev = get(root, "traceEvents");
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		json_object *e = json_object_array_get_idx(ev, i), *args = NULL;
		const char *ph = json_object_get_string(get(e, "ph"));

		if (strcmp(ph, "M") == 0) {
			nm++;
			continue;
		}
		cr_assert_str_eq(ph, "X");
		nx++;
		get(e, "pid");
		get(e, "tid");
		cr_assert_geq(json_object_get_double(get(e, "ts")), 0);
		cr_assert_gt(json_object_get_double(get(e, "dur")), 0);
		{
			const char *cn = json_object_get_string(get(e, "cname"));
			size_t k;

			for (k = 0; k < sizeof reserved / sizeof reserved[0]; k++)
				if (strcmp(cn, reserved[k]) == 0)
					break;
			cr_assert_lt(k, sizeof reserved / sizeof reserved[0], "cname %s", cn);
		}
		if (json_object_object_get_ex(e, "args", &args) &&
		    json_object_object_get_ex(args, "collective", NULL)) {
			ncomm++;
			cr_assert_eq(json_object_get_int64(get(args, "msg bytes")), 4 << 20);
			cr_assert_str_eq(json_object_get_string(get(e, "cname")), "terrible");
		}
		if (strcmp(json_object_get_string(get(e, "name")), EVIL) != 0 &&
		    strstr(json_object_get_string(get(e, "name")), "evil<"))
			saw_evil = 1; /* the invalid byte became U+FFFD, the rest is intact */
		if (strcmp(json_object_get_string(get(e, "cat")), "gpu_user_annotation") == 0)
			nannot++;
	}
	cr_assert_eq(nx, (size_t)st.events);
	cr_assert_eq(nm, 2 * 4 + 2 * 12);
	cr_assert_eq(ncomm, 4);
	cr_assert_eq(nannot, 4);
	cr_assert(saw_evil);
	/* ts of rank 1's first kernel: 7 ms after rank 0's, in us with 3 decimals. */
	cr_assert(strstr(text, "\"ts\":7000.000,"), "ts format");
	json_object_put(root);
	free(text);
	free(dbp);
	free(out);
	free(dir);
}

Test(report, cli_report_and_export)
{
	char *dir = mkdir_tmp(), *dbp = join(dir, "t.db"), *proj = join(dir, "p.csv");
	char args[8192], *out = NULL, *err = NULL;

	make_db(dbp);
	make_projection(proj);
	snprintf(args, sizeof args, "report --db '%s' -p '%s' -o '%s/r.html' --csv-dir '%s/csv'",
		 dbp, proj, dir, dir);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_assert(strstr(out, "r.html"));
	free(out);
	free(err);
	snprintf(args, sizeof args, "export --perfetto '%s/t.json' --db '%s' --run fixture", dir, dbp);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_assert(strstr(out, "24 events (4 processes"), "%s", out);
	free(out);
	free(err);
	/* Bad projection: exit 2, one line naming the file and the line. */
	cr_assert_eq(tu_write(proj, "a,b\n1\n", 6), 0);
	snprintf(args, sizeof args, "report --no-db -p '%s' -o '%s/x.html'", proj, dir);
	cr_assert_eq(tu_cvc(args, &out, &err), 2);
	cr_assert(strstr(err, "line 2: expected 2 fields"), "%s", err);
	cr_assert_eq(tu_count_lines(err), 1, "%s", err);
	snprintf(args, sizeof args, "%s/x.html", dir);
	cr_assert_neq(access(args, F_OK), 0, "no page after a failure");
	free(out);
	free(err);
	snprintf(args, sizeof args, "export --perfetto '%s/y.json' --db '%s' --run nope", dir, dbp);
	cr_assert_eq(tu_cvc(args, &out, &err), 2, "%s", err);
	cr_assert(strstr(err, "no run named 'nope'"), "%s", err);
	snprintf(args, sizeof args, "%s/y.json", dir);
	cr_assert_neq(access(args, F_OK), 0, "no half file after a failure");
	free(out);
	free(err);
	free(dbp);
	free(proj);
	free(dir);
}

/* ---- real inputs: a shared trace, fitted models, the projector's own output ---------- */

Test(report, real_trace_and_projector_output)
{
	const char *trace = tu_shared("traces/hta-nccl-args-a100-w2/nccl_data.json.gz");
	char *dir = mkdir_tmp(), *html = join(dir, "real.html"), *csv = join(dir, "csv");
	char args[8192], *out = NULL, *err = NULL, *text, *v, *dom;
	json_object *data, *cm;
	struct stat sb;

	snprintf(args, sizeof args, "import --db '%s/r.db' '%s'", dir, trace);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(args, sizeof args, "fit --db '%s/r.db'", dir);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
	/* The projector's own CSV: the best 1000 scenarios of its default study, one ranking. */
	snprintf(args, sizeof args, "project --top 1000 --per none --csv '%s/p.csv'", dir);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(args, sizeof args, "report --db '%s/r.db' -p '%s/p.csv' -o '%s' --csv-dir '%s'",
		 dir, dir, html, csv);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	free(out);
	free(err);
	cr_assert_eq(stat(html, &sb), 0);
	cr_assert_lt(sb.st_size, 3 << 20, "1000 real scenarios: %lld bytes", (long long)sb.st_size);
	text = tu_read(html, NULL);
	data = island(text);
	compare_tables(data, csv);
	cr_assert_eq(json_object_array_length(get(get(get(data, "tables"), "scenarios"), "rows")), 1000);
	/* The trace's all-reduces have sizes, and the fit drew curves for them. */
	cr_assert(json_object_object_get_ex(get(data, "tables"), "collective_model", &cm));
	cr_assert_gt(json_object_array_length(get(cm, "rows")), 0);
	cr_assert(json_object_object_get_ex(get(data, "tables"), "model_origins", NULL));
	json_object_put(data);
	free(text);
	if (tu_chromium()) {
		dom = browse(html, DOM);
		v = verdict(dom);
		cr_assert(strstr(v, "CVC-SELFCHECK PASS"), "%s", v);
		free(v);
		free(dom);
	}
	free(html);
	free(csv);
	free(dir);
}

/* The shipped study as `make demo` reports it: under 5 MB (its repeated warnings stored
 * once, reports/island.c), and whole with no network. */
Test(report, shipped_study_page_is_small_and_offline)
{
	char *dir = mkdir_tmp(), *html = join(dir, "study.html");
	char args[8192], *err = NULL, *text, *v, *dom;
	struct stat sb;

	snprintf(args, sizeof args, "project --csv '%s/study.csv'", dir);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(args, sizeof args, "report --no-db -p '%s/study.csv' -o '%s'", dir, html);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
	cr_assert_eq(stat(html, &sb), 0);
	cr_assert_lt(sb.st_size, 5 << 20, "shipped study: %lld bytes", (long long)sb.st_size);
	text = tu_read(html, NULL);
	cr_assert(text);
	cr_assert_null(strstr(text, "src=\"http"), "nothing loaded from the network");
	cr_assert_null(strstr(text, "href=\"http"), "no stylesheet from the network");
	free(text);
	if (tu_chromium()) {
		dom = browse(html, DOM);
		v = verdict(dom);
		cr_assert(strstr(v, "CVC-SELFCHECK PASS"), "%s", v);
		/* 4 models x 5 hardware at the largest GPU count, less the
		 * hybrid's 5: its 2048 sequences leave no valid layout on
		 * 65,536 GPUs */
		first_screen_headline(v, 15);
		free(v);
		free(dom);
	}
	free(html);
	free(dir);
}
