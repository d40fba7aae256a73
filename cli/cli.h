/*
 * cli.h - what the subcommands of the cvc tool share: the command table
 * signature, the option parser, and message helpers.
 *
 * cli/ only parses arguments and prints; all work is done by the library
 * behind include/cvc/.  Exit codes: 0 ok, 1 failure, 2 bad input or usage.
 */
#ifndef CVC_CLI_H
#define CVC_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "cvc/cvc.h"

struct cvc_db;

/*
 * What the dispatcher (cvc.c) does for a command, from its flags in the
 * command table (git's RUN_SETUP and friends).
 */
enum cvc_cmd_flags {
	/* Opens its database with cli_db_open(); the dispatcher closes it
	   after the command returns. */
	CMD_DB = 1 << 0,
	/* With CMD_DB: a file that is not a usable cvc database (foreign,
	   corrupt, newer) is bad input, exit 2, rather than a failure. */
	CMD_DB_BAD_IS_USAGE = 1 << 1,
	/* Draws progress on stderr: ctx->progress says whether it is a terminal. */
	CMD_PROGRESS = 1 << 2,
};

struct cvc_ctx {
	const char *cmd;     /* subcommand name, for messages */
	unsigned flags;      /* the command's enum cvc_cmd_flags */
	int progress;        /* CMD_PROGRESS: stderr is a terminal, show progress */
	struct cvc_db *db;   /* CMD_DB: opened by cli_db_open, closed by the dispatcher */
};

typedef int (*cvc_cmd_fn)(int argc, char **argv, struct cvc_ctx *ctx);

struct cvc_cmd {
	const char *name;
	cvc_cmd_fn fn;
	unsigned flags;      /* enum cvc_cmd_flags */
	const char *summary;
	const char *examples; /* command lines, one a line, for --help */
};

/* The examples of command cmd ("models" or "models show": its first word)
 * from the command table, or NULL for a name not in it. */
const char *cli_cmd_examples(const char *cmd);

/* ---- options are data -------------------------------------------------- */

enum cli_opt_type {
	CLI_FLAG,    /* int, set to 1 */
	CLI_STR,     /* const char *, points into argv */
	CLI_INT,     /* long long, checked with strtoll */
	CLI_DOUBLE,  /* double, checked with strtod */
	CLI_CHOICE,  /* const char *, must be one of choices ("a|b|c") */
	/* const char *, a file the command reads: recorded with
	 * cvc_out_input, so that no output of the command can replace it */
	CLI_PATH,
	/* const char *, a file or folder the command writes, through
	 * cvc_out_open / cvc_out_dir ('-' is stdout where a file is meant) */
	CLI_OUT
};

struct cli_opt {
	const char *lname;     /* "db" for --db */
	char sname;            /* 'j' for -j, 0 for none */
	enum cli_opt_type type;
	void *dest;
	const char *argname;   /* "PATH" in --help */
	const char *help;
	const char *choices;   /* CLI_CHOICE only */
};

/*
 * Parses argv[1..argc) against opts (terminated by {0}).  Options may appear
 * anywhere before "--"; positionals are moved to the front of argv+1 in
 * order and their count is stored in *npos.  With stop_at_dashdash, "--"
 * ends parsing and *rest receives the index after it (or argc).
 * Positionals (those before "--" when rest is given) and CLI_PATH values
 * that name existing files are recorded as the command's inputs
 * (cvc_out_input): an output that is one of them is refused.
 * "--help" prints usage to stdout and returns -1.  Errors print one line to
 * stderr and return 2.  Returns 0 on success.
 */
int cli_parse(const char *cmd, const char *synopsis, const struct cli_opt *opts,
	      int argc, char **argv, int *npos, int *rest);

/* cli_parse, which also sets bit i of *seen (when seen is not NULL) for
 * each opts[i], i < 64, given on the command line: a command refuses an
 * option that does not apply to what it was asked with it. */
int cli_parse_seen(const char *cmd, const char *synopsis, const struct cli_opt *opts,
		   int argc, char **argv, int *npos, int *rest, uint64_t *seen);

/* Prints generated usage for cmd: synopsis, options, then the command's
 * examples (cli_cmd_examples). */
void cli_usage(FILE *f, const char *cmd, const char *synopsis,
	       const struct cli_opt *opts);

/* The same usage on stderr, for a command line that misses what it needs;
 * returns 2 (usage). */
int cli_usage_error(const char *cmd, const char *synopsis, const struct cli_opt *opts);

/* Prints a comma-separated list (metric or field names) wrapped to 80
 * columns and indented, for the lists a --help ends with. */
void cli_print_list(FILE *f, const char *list);

/* fmt on stderr as fprintf would write it, but with the control characters
 * and bidirectional overrides of what it quotes (names, cells, flags from
 * outside) shown as escapes, not acted on; line breaks are kept.  Every
 * message that quotes outside text goes through it or cli_error. */
void cli_say(const char *fmt, ...) CVC_PRINTF(1, 2);

/* "error: <fmt>\n" on stderr, as cli_say writes it; returns 2 (bad input)
 * for convenience. */
int cli_error(const char *fmt, ...) CVC_PRINTF(1, 2);
/* How many error lines cli_error and cli_fail have said (cvc.c: the exit
 * check does not repeat a failure a command already explained). */
int cli_errors_said(void);

/* ---- set-up shared by the commands (setup.c) ------------------------------- */

/*
 * Opens path with cvc_db_open's flags as the command's database (CMD_DB
 * commands; at most once): *db and ctx->db receive the handle, which the
 * dispatcher closes after the command returns.  The database is recorded
 * as an input (cvc_out_input): no output of the command may replace it.  Failure prints the
 * database's message and returns the exit code (2 for a file that is no
 * usable cvc database under CMD_DB_BAD_IS_USAGE); success returns 0.
 */
int cli_db_open(struct cvc_ctx *ctx, const char *path, int flags, struct cvc_db **db);

/*
 * The flags a command that reads a database, and would write only to
 * classify names it finds unclassified, opens path with: 0 when this user
 * may write the file and its folder (SQLite's -wal and -shm live there),
 * else CVC_DB_READONLY (issue 36 item 15: a database in a read-only folder
 * could not be read).
 */
int cli_db_read_flags(const char *path);

/*
 * The projector's context for project and validate: priced with the fitted
 * models of db_path (opened read-only with cli_db_open) or, when NULL, the
 * spec sheets alone; force as cvc_proj_ctx_set_force.  *out is owned by
 * the caller (cvc_proj_ctx_free, before the dispatcher closes the
 * database).  Returns 0, or the exit code after printing why.
 */
struct cvc_proj_ctx;
int cli_proj_open(struct cvc_ctx *ctx, const char *db_path, int force,
		  struct cvc_proj_ctx **out);

/* Warns on stderr when more than 1% of run_id's kernel time (< 0: all runs)
 * is in kernels no rule classes as communication but whose names look like
 * it (cvc_classify_suspects), pointing at `cvc classify --unknown`. */
void cli_warn_suspects(struct cvc_db *db, int64_t run_id);
/* Same text, but returns the exit code for st. */
int cli_fail(cvc_status st, const char *fmt, ...) CVC_PRINTF(2, 3);

/*
 * The classifier's rules for --rules FILE (tried before the shipped rules:
 * cvc_rules_load_over_default) or --rules-only FILE (alone); neither: the
 * shipped rules when shipped, else *out NULL (the library's default).  Both
 * is a usage error.  Returns 0, or the exit code after printing why.
 */
struct cvc_rules;
int cli_rules_load(const char *cmd, const char *over, const char *only, int shipped,
		   struct cvc_rules **out);

/*
 * The catalog entry a person named with option opt ("--gpu"): exactly or
 * by an alias (cvc_hw_catalog_find), of kind ("gpu", "system"; NULL:
 * either).  Anything else is an error naming the nearest entries, exit 2:
 * "error: predict: --gpu 'A100-40': no GPU of that name or alias in the
 * hardware catalog; nearest: A100-SXM-40GB, ...".  Returns 0 with *out set.
 */
struct cvc_hw_catalog;
struct cvc_hw_spec;
int cli_hw_find(const char *cmd, const struct cvc_hw_catalog *cat, const char *opt,
		const char *name, const char *kind, const struct cvc_hw_spec **out);

/* ---- tables (format.c) ------------------------------------------------------ */

/* The choices of every --format option that prints a table. */
#define CLI_FORMATS "table|csv|json"

/* given when the user chose one, else "table" on a terminal and piped
 * (a command's own default for scripts) when stdout is not one. */
const char *cli_format_default(const char *given, const char *piped);

/* Prints t on stdout as format ("table", "csv" or "json"). */
struct cvc_rep_table;
void cli_table_print(const struct cvc_rep_table *t, const char *format);

/* ---- cvc project's table (projtable.c) and dictionary (coldoc.c) ------------ */

/* The table a person reads: model, hardware, GPUs, layout, fits, tokens/s
 * per GPU, step, MFU, shares with their intervals, memory, index; NULL on
 * no memory.  Rows added with cli_proj_table_add (-1 on no memory). */
struct cvc_proj_scenario;
struct cvc_proj_result;
struct cvc_rep_table *cli_proj_table_new(void);
int cli_proj_table_add(struct cvc_rep_table *t, const struct cvc_proj_scenario *sc,
		       const struct cvc_proj_result *r);

/* `cvc project --columns`: every column of its CSV and JSON with its unit
 * and definition, as format (table, csv, json or md).  Returns an exit code. */
int cli_proj_columns(const char *format);

/* `cvc help columns [--format table|csv|json|md]`: the whole dictionary,
 * argv[0] being "columns".  Returns an exit code. */
int cli_help_columns(int argc, char **argv);

/* Parses a size like 64MiB, 1G, 4096: returns 0 or 2 after printing. */
int cli_parse_bytes(const char *opt, const char *s, long long *out);

/*
 * Directory of the running cvc binary (from /proc/self/exe) into buf, for
 * the helpers installed beside it (injection library, calibration runner).
 * Returns 0, or -1 when it cannot be known or does not fit.
 */
int cli_self_dir(char *buf, size_t cap);

#define CVC_DEFAULT_DB "cvc.db"

#endif
