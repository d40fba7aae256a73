/*
 * dbfile.c - the life of a cvc database file: opening, the schema and its
 * migrations, transactions, and removing a database this command created
 * when it ends holding nothing (the bulk writers are store.c's).
 *
 * Why the care (issue 36): a failed first import removed its database
 * after it had released the write lock, so a second import that had
 * written into it meanwhile lost its rows; parallel first imports both
 * saw an empty file and both created the schema.  Here every decision
 * about a file is taken while holding its write lock, and a writer that
 * finds, once it holds the lock, that its path no longer names the file it
 * opened starts again on the new one.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_out.h"
#include "db_int.h"

/* How long a connection waits for another's lock (issue 8: concurrency). */
#define BUSY_TIMEOUT_MS 30000

extern const char cvc_schema_sql[];
extern const char cvc_migrate_2_sql[];
extern const char cvc_migrate_3_sql[];
extern const char cvc_migrate_4_sql[];

/* migrations[v] takes version v to v + 1 (db/migrate_<v+1>.sql). */
static const char *const migrations[CVC_DB_SCHEMA_VERSION] = {
	[1] = cvc_migrate_2_sql,
	[2] = cvc_migrate_3_sql,
	[3] = cvc_migrate_4_sql,
};

const char *cvc_strerror(cvc_status st)
{
	switch (st) {
	case CVC_OK: return "ok";
	case CVC_ERR_NOMEM: return "out of memory";
	case CVC_ERR_IO: return "i/o error";
	case CVC_ERR_FORMAT: return "malformed input";
	case CVC_ERR_DB: return "database error";
	case CVC_ERR_USAGE: return "bad usage";
	case CVC_ERR_NOTFOUND: return "not found";
	case CVC_ERR_UNSUPPORTED: return "not supported by this build";
	case CVC_ERR_VERSION: return "incompatible database";
	case CVC_ERR_INTERNAL: return "internal error";
	}
	return "unknown status";
}

int cvc_exit_code(cvc_status st)
{
	switch (st) {
	case CVC_OK: return 0;
	case CVC_ERR_FORMAT:
	case CVC_ERR_USAGE:
	case CVC_ERR_VERSION:
	case CVC_ERR_NOTFOUND:
		return 2;
	default:
		return 1;
	}
}

cvc_status cvc_db_fail(cvc_db *db, cvc_status st, const char *fmt, ...)
{
	va_list ap;

	if (!db)
		return st;
	va_start(ap, fmt);
	vsnprintf(db->errmsg, sizeof db->errmsg, fmt, ap);
	va_end(ap);
	return st;
}

/* Records SQLite's own message for a failed call. */
cvc_status db_sq_fail(cvc_db *db, const char *what)
{
	return cvc_db_fail(db, CVC_ERR_DB, "'%s': %s: %s", db->path, what,
			   sqlite3_errmsg(db->sq));
}

const char *cvc_db_errmsg(const cvc_db *db)
{
	return db ? db->errmsg : "out of memory";
}

sqlite3 *cvc_db_sqlite(cvc_db *db)
{
	return db->sq;
}

const char *cvc_db_path(const cvc_db *db)
{
	return db->path;
}

int cvc_db_sqlite_has_table(sqlite3 *sq, const char *name)
{
	sqlite3_stmt *st = NULL;
	int found = -1;

	if (sqlite3_prepare_v2(sq,
			       "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name=?",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	switch (sqlite3_step(st)) {
	case SQLITE_ROW: found = 1; break;
	case SQLITE_DONE: found = 0; break;
	default: break;
	}
	sqlite3_finalize(st);
	return found;
}

cvc_status cvc_db_exec(cvc_db *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db->sq, sql, NULL, NULL, &msg) != SQLITE_OK) {
		cvc_db_fail(db, CVC_ERR_DB, "'%s': %s", db->path,
			    msg ? msg : sqlite3_errmsg(db->sq));
		sqlite3_free(msg);
		return CVC_ERR_DB;
	}
	return CVC_OK;
}

static cvc_status pragma_i64(cvc_db *db, const char *sql, int64_t *v)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db->sq, sql, -1, &st, NULL) != SQLITE_OK)
		return db_sq_fail(db, "reading header");
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		/* the message is read before finalize resets it */
		cvc_status fail = db_sq_fail(db, "reading header");

		sqlite3_finalize(st);
		return fail;
	}
	*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return CVC_OK;
}

static cvc_status pragma_int(cvc_db *db, const char *sql, int *v)
{
	int64_t x = 0;
	cvc_status st = pragma_i64(db, sql, &x);

	if (st == CVC_OK)
		*v = (int)x;
	return st;
}

/* Runs the migrations from version `from` to the current one. */
static cvc_status migrate(cvc_db *db, int from)
{
	cvc_status st;

	char msg[512];

	for (int v = from; v < CVC_DB_SCHEMA_VERSION; v++) {
		if (v < 1 || !migrations[v] || !(st = cvc_db_exec(db, migrations[v])))
			continue;
		snprintf(msg, sizeof msg, "%s", cvc_db_errmsg(db));
		return cvc_db_fail(db, st, "'%s': upgrading schema %d to %d: %s", db->path, v,
				   v + 1, msg);
	}
	return CVC_OK;
}


/* A path SQLite opens as a file of that name (not ":memory:", "" or a URI). */
static int is_file_path(const char *path)
{
	return *path && strcmp(path, ":memory:") != 0 && strncmp(path, "file:", 5) != 0;
}

/* 1 when the path no longer names the file the connection has open
 * (removed, or replaced by another file). */
static int has_moved(cvc_db *db)
{
	int moved = 0;

	if (!is_file_path(db->path) ||
	    sqlite3_file_control(db->sq, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK)
		return 0;
	return moved != 0;
}

/*
 * Unlinks the database and its side files while this handle holds the
 * write lock.  The connection keeps its descriptors; its WAL is made
 * persistent first so that closing it later deletes no -wal or -shm by
 * name, which by then may belong to a database another process created.
 */
static void remove_locked(cvc_db *db)
{
	static const char *const side[] = {"-wal", "-shm"};
	char buf[4200];
	int one = 1;

	sqlite3_file_control(db->sq, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
	/* a database we made is in WAL mode from its first write (connect):
	 * there is no -journal of ours, and one by that name is not ours */
	unlink(db->path);
	for (size_t i = 0; i < sizeof side / sizeof side[0]; i++)
		if ((size_t)snprintf(buf, sizeof buf, "%s%s", db->path, side[i]) < sizeof buf)
			unlink(buf);
	db->discarded = 1;
	db->provisional = 0;
}

/* Stops listing the path for removal on a signal. */
static void unlist(cvc_db *db)
{
	if (db->tmp_listed)
		cvc_tmp_forget(db->path);
	db->tmp_listed = 0;
}

struct header {
	int ver, app, ntab;
};

/* The three in one statement, so in one snapshot: read one by one, a
 * schema committed in between looked like a foreign file (tables, no
 * application_id). */
static cvc_status read_header(cvc_db *db, struct header *h)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db->sq,
			       "SELECT (SELECT user_version FROM pragma_user_version), "
			       "(SELECT application_id FROM pragma_application_id), "
			       "(SELECT count(*) FROM sqlite_schema)",
			       -1, &st, NULL) != SQLITE_OK)
		return db_sq_fail(db, "reading header");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		h->ver = sqlite3_column_int(st, 0);
		h->app = sqlite3_column_int(st, 1);
		h->ntab = sqlite3_column_int(st, 2);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? CVC_OK : db_sq_fail(db, "reading header");
}

/* No tables, no version, and no other application's mark (issue 36 item
 * 17: an empty file another program marked as its own stays its own). */
static int is_empty(const struct header *h)
{
	return h->ntab == 0 && h->ver == 0 && (h->app == 0 || (uint32_t)h->app == CVC_DB_APP_ID);
}

/*
 * Creates the schema on a file found empty under the write lock (BEGIN
 * IMMEDIATE already taken).  A file this handle created is listed for
 * removal on a signal while the lock is held, and removed if the creation
 * fails: nobody else can have written an empty file we hold locked.
 */
static cvc_status create_schema(cvc_db *db, int created)
{
	char sql[128];
	cvc_status st;

	if (created && (db->flags & CVC_DB_DISCARD) && !has_moved(db)) {
		cvc_tmp_add(db->path);
		db->tmp_listed = 1;
	}
	snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=%d;",
		 (int)CVC_DB_APP_ID, CVC_DB_SCHEMA_VERSION);
	/* The data version the file starts from is read here, under the lock
	 * that writes the schema (our own COMMIT leaves it as it is): read
	 * after the COMMIT, it could already count a commit another process
	 * slipped in meanwhile, whose rows a failed import would then remove
	 * with the file. */
	if ((st = cvc_db_exec(db, cvc_schema_sql)) || (st = migrate(db, 1)) ||
	    (st = cvc_db_exec(db, sql)) ||
	    (st = pragma_i64(db, "PRAGMA data_version", &db->data_version))) {
		if (db->tmp_listed)
			remove_locked(db);
		unlist(db);
		cvc_db_exec(db, "ROLLBACK");
		return st;
	}
	unlist(db);
	return cvc_db_exec(db, "COMMIT");
}

/*
 * Creates the schema on an empty file, upgrades older versions, refuses
 * foreign or newer files.  An empty file is one with no tables at all, so
 * that a random SQLite database (an Nsight Systems export, say) is never
 * written into by mistake; it is read before any lock is taken, so that a
 * foreign file is refused without being touched, and read again under the
 * write lock before the schema is created.  *made: this call created it.
 */
static cvc_status check_or_create_schema(cvc_db *db, int create, int created, int *made)
{
	struct header h;
	cvc_status st;
	char sql[128];

	*made = 0;
	if ((st = read_header(db, &h)))
		return st;
	if (is_empty(&h) && create && !db->readonly) {
		if ((st = cvc_db_exec(db, "BEGIN IMMEDIATE")))
			return st;
		if ((st = read_header(db, &h))) {
			cvc_db_exec(db, "ROLLBACK");
			return st;
		}
		if (is_empty(&h)) {
			if ((st = create_schema(db, created)))
				return st;
			*made = 1;
			return CVC_OK;
		}
		/* another process made it meanwhile: check what it made */
		cvc_db_exec(db, "ROLLBACK");
	}
	if (h.ntab == 0 && h.ver == 0 && h.app == 0)
		return cvc_db_fail(db, CVC_ERR_VERSION, "'%s': empty database, not a cvc database",
				   db->path);
	if ((uint32_t)h.app != CVC_DB_APP_ID)
		return cvc_db_fail(db, CVC_ERR_VERSION,
				   "'%s': not a cvc database (application_id 0x%08x)",
				   db->path, (unsigned)h.app);
	if (h.ver > CVC_DB_SCHEMA_VERSION)
		return cvc_db_fail(db, CVC_ERR_VERSION,
				   "'%s': schema version %d is newer than this cvc (%d)",
				   db->path, h.ver, CVC_DB_SCHEMA_VERSION);
	if (h.ver >= CVC_DB_SCHEMA_VERSION)
		return CVC_OK;
	/* Read-only: the tables a reader needs are in every version; what a
	 * later version added (op_launches) is looked up before use. */
	if (db->readonly)
		return CVC_OK;
	if (h.ver < 1)
		return cvc_db_fail(db, CVC_ERR_VERSION,
				   "'%s': schema version %d is not a cvc version", db->path, h.ver);
	/* Older database opened for writing: upgraded in one transaction, so
	 * a failure leaves it at its old version. */
	if ((st = cvc_db_exec(db, "BEGIN IMMEDIATE")))
		return st;
	/* Another process may have upgraded it while we waited for the lock. */
	if ((st = pragma_int(db, "PRAGMA user_version", &h.ver))) {
		cvc_db_exec(db, "ROLLBACK");
		return st;
	}
	snprintf(sql, sizeof sql, "PRAGMA user_version=%d;", CVC_DB_SCHEMA_VERSION);
	if (h.ver < CVC_DB_SCHEMA_VERSION &&
	    ((st = migrate(db, h.ver)) || (st = cvc_db_exec(db, sql)))) {
		cvc_db_exec(db, "ROLLBACK");
		return st;
	}
	return cvc_db_exec(db, "COMMIT");
}

/*
 * Runs a journal-mode pragma, waiting while others hold the file: SQLite
 * needs the exclusive lock to switch a file to WAL and answers "database is
 * locked" at once, without the busy handler, while another connection reads
 * it (seen with 32 importers starting on one new file, one in four rounds
 * under load: tests/unit/test_hardening.c parallel_first_imports_all_succeed).
 * Retried for as long as the busy timeout waits for any other lock.
 */
static cvc_status journal_pragma(cvc_db *db, const char *sql)
{
	struct timespec nap = {0, 1000000}; /* 1 ms, doubling to 64 ms */
	double waited = 0;

	for (;;) {
		int rc = sqlite3_exec(db->sq, sql, NULL, NULL, NULL);

		if (rc == SQLITE_OK)
			return CVC_OK;
		if ((rc & 0xff) != SQLITE_BUSY || waited >= BUSY_TIMEOUT_MS / 1e3)
			return cvc_db_exec(db, sql); /* once more, with its message */
		nanosleep(&nap, NULL);
		waited += nap.tv_nsec / 1e9;
		if (nap.tv_nsec < 64000000)
			nap.tv_nsec *= 2;
	}
}

/*
 * "file:PATH?immutable=1" for a read-only reader of a database in a folder
 * it cannot write and with no write-ahead log beside it: SQLite needs to
 * create PATH-shm to read a WAL database, and cannot there (issue 36 item
 * 15, "attempt to write a readonly database").  NULL when the plain path
 * serves (or on no memory, when the plain open reports what it can).
 */
static char *immutable_uri(const char *path)
{
	char dir[4096], *uri, *w;
	const char *slash = strrchr(path, '/');
	size_t n = strlen(path);

	if ((size_t)snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path + 1) : 1,
			     slash ? path : ".") >= sizeof dir ||
	    access(dir, W_OK) == 0)
		return NULL;
	if (snprintf(dir, sizeof dir, "%s-wal", path) >= (int)sizeof dir || access(dir, F_OK) == 0)
		return NULL;
	/* "//" would start an authority; %, ? and # are URI syntax */
	while (path[0] == '/' && path[1] == '/')
		path++;
	uri = malloc(3 * n + 32);
	if (!uri)
		return NULL;
	memcpy(uri, "file:", 5);
	w = uri + 5;
	for (const char *p = path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#') {
			*w++ = '%';
			*w++ = "0123456789ABCDEF"[(unsigned char)*p >> 4];
			*w++ = "0123456789ABCDEF"[*p & 15];
		} else {
			*w++ = *p;
		}
	}
	memcpy(w, "?immutable=1", sizeof "?immutable=1");
	return uri;
}

/* Whether the folder path would be created in exists ("x.db": "."). */
static int parent_exists(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	struct stat sb;

	if (!slash)
		return 1;
	if ((size_t)(slash - path) >= sizeof dir)
		return 1; /* not ours to judge: SQLite's message stands */
	snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
	return stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/*
 * Opens the connection of db (db->path, db->flags): creates the file with
 * O_EXCL when asked to, so that the handle knows whether it made it,
 * checks or creates the schema, switches a writer to WAL, and notes the
 * data version a database it made starts from.
 */
static cvc_status connect(cvc_db *db)
{
	char *uri = NULL;
	int oflags, created = 0, made = 0, there;
	struct stat sb;
	cvc_status st;

	oflags = db->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	if ((db->flags & CVC_DB_CREATE) && !db->readonly) {
		oflags |= SQLITE_OPEN_CREATE;
		if (is_file_path(db->path)) {
			/* lint-out: a database is written in place by SQLite; made
			 * here, O_EXCL|O_NOFOLLOW, only to know that we made it */
			int fd = open(db->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				      0666);

			if (fd >= 0) {
				created = 1;
				close(fd);
			}
		}
	}
	/* a directory or a device named as the database is bad input
	 * (exit 2): SQLite would fail on it later, or open /dev/null and fail
	 * on its first write (exit 1) */
	there = is_file_path(db->path) && stat(db->path, &sb) == 0;
	if (there && !S_ISREG(sb.st_mode))
		return cvc_db_fail(db, CVC_ERR_USAGE, "'%s': cannot open database: expected a file, "
				   "got a %s", db->path,
				   S_ISDIR(sb.st_mode) ? "directory" : "device or pipe");
	if (db->readonly && is_file_path(db->path) && (uri = immutable_uri(db->path)))
		oflags |= SQLITE_OPEN_URI;
	if (sqlite3_open_v2(uri ? uri : db->path, &db->sq, oflags, NULL) != SQLITE_OK) {
		free(uri);
		/* A database the user named but that is not there is bad input (exit 2). */
		if (!(oflags & SQLITE_OPEN_CREATE) && access(db->path, F_OK) != 0)
			return cvc_db_fail(db, CVC_ERR_NOTFOUND,
					   "'%s': cannot open database: no such file", db->path);
		/* nor is a file in a folder that is not there (exit 2, as for
		 * every command; it was 1 where the command creates its database) */
		if (!there && is_file_path(db->path) && !parent_exists(db->path))
			return cvc_db_fail(db, CVC_ERR_NOTFOUND, "'%s': cannot open database: no such "
					   "folder", db->path);
		return cvc_db_fail(db, db->sq ? CVC_ERR_DB : CVC_ERR_NOMEM,
				   "'%s': cannot open database: %s", db->path,
				   db->sq ? sqlite3_errmsg(db->sq) : "out of memory");
	}
	free(uri);
	/* A second importer waits instead of failing (issue 8: concurrency). */
	sqlite3_busy_timeout(db->sq, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(db->sq, 1);
	/* A file we made is in WAL mode before its schema is written: its
	 * transactions then never delete a -journal by name, which after a
	 * removal (remove_locked) may be another process's */
	if (created && (st = journal_pragma(db, "PRAGMA journal_mode=WAL;")))
		return st;
	/* The file is checked before anything is written to it: switching a
	 * user's foreign SQLite file to WAL would change its header (issue 14). */
	if ((st = cvc_db_exec(db, "PRAGMA foreign_keys=ON;")) ||
	    (st = check_or_create_schema(db, !!(db->flags & CVC_DB_CREATE), created, &made)))
		return st;
	if (db->readonly)
		return CVC_OK;
	if ((st = journal_pragma(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")))
		return st;
	/* db->data_version: read by create_schema under its lock */
	if (made && created && (db->flags & CVC_DB_DISCARD) && !db->discarded)
		db->provisional = 1;
	return CVC_OK;
}

/* Drops the connection (statements, cache) so that connect() can run again. */
static void disconnect(cvc_db *db)
{
	db_stmts_finalize(db);
	db_str_cache_free(db);
	sqlite3_close(db->sq);
	db->sq = NULL;
	db->provisional = db->discarded = 0;
	db->in_txn = 0;
}

cvc_status cvc_db_open(const char *path, int flags, cvc_db **out)
{
	cvc_db *db = NULL;
	cvc_status st = CVC_OK;

	*out = NULL;
	db = calloc(1, sizeof *db);
	if (!db)
		return CVC_ERR_NOMEM;
	*out = db;
	db->path = strdup(path);
	if (!db->path)
		return cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory");
	db->flags = flags;
	db->readonly = !!(flags & CVC_DB_READONLY);
	/* SQLite opens "" as a private temporary database: what a command
	 * wrote there would be gone at exit, reported as stored */
	if (!path[0])
		return cvc_db_fail(db, CVC_ERR_USAGE, "--db: expected a file name, got ''");
	st = connect(db);
	/* A damaged or foreign file is bad input (exit 2, issue 8), not an i/o failure. */
	if (st == CVC_ERR_DB && db->sq) {
		int ec = sqlite3_errcode(db->sq) & 0xff;

		if (ec == SQLITE_NOTADB)
			st = CVC_ERR_VERSION;
		else if (ec == SQLITE_CORRUPT)
			st = CVC_ERR_FORMAT;
	}
	return st;
}

void cvc_db_remove_files(const char *path)
{
	static const char *const side[] = {"-wal", "-shm", "-journal"};
	size_t n = strlen(path);
	char *buf = malloc(n + 16);

	unlink(path);
	if (!buf)
		return;
	for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
		snprintf(buf, n + 16, "%s%s", path, side[i]);
		unlink(buf);
	}
	free(buf);
}

/*
 * A database this handle created and that no transaction of it filled is
 * removed at close, if the write lock can be had at once and shows that
 * nobody else has written it since our schema.  A lock held by another
 * process means that process is writing into it: the file is kept.
 */
static void discard_at_close(cvc_db *db)
{
	int64_t dv = -1;

	sqlite3_busy_timeout(db->sq, 0);
	if (sqlite3_exec(db->sq, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return;
	if (!has_moved(db) && pragma_i64(db, "PRAGMA data_version", &dv) == CVC_OK &&
	    dv == db->data_version)
		remove_locked(db);
	sqlite3_exec(db->sq, "ROLLBACK", NULL, NULL, NULL);
}

void cvc_db_close(cvc_db *db)
{
	if (!db)
		return;
	if (db->in_txn)
		cvc_db_rollback(db);
	else if (db->provisional && db->sq)
		discard_at_close(db);
	db_stmts_finalize(db);
	db_str_cache_free(db);
	sqlite3_close(db->sq);
	free(db->path);
	free(db);
}

cvc_status cvc_db_begin(cvc_db *db)
{
	cvc_status st;
	int64_t dv = -1;

	assert(!db->in_txn);
	for (int tries = 0;; tries++) {
		if ((st = cvc_db_exec(db, "BEGIN IMMEDIATE")))
			return st;
		if (db->readonly || !has_moved(db))
			break;
		/* The path names another file now, or none: another cvc removed
		 * the database it had created while we waited for its lock
		 * (issue 36 item 1).  Writing on would write into a removed file
		 * and report success: open what the path names now instead. */
		sqlite3_exec(db->sq, "ROLLBACK", NULL, NULL, NULL);
		if (tries == 3)
			return cvc_db_fail(db, CVC_ERR_DB,
					   "'%s': the database was removed or replaced while cvc "
					   "waited for it, %d times", db->path, tries + 1);
		disconnect(db);
		if ((st = connect(db)))
			return st;
	}
	db->in_txn = 1;
	if (!db->provisional)
		return CVC_OK;
	/* A database we made stays removable only while nobody else has
	 * committed to it; from here on we hold the lock, so it stays so
	 * until our commit. */
	if (pragma_i64(db, "PRAGMA data_version", &dv) || dv != db->data_version) {
		db->provisional = 0;
		return CVC_OK;
	}
	cvc_tmp_add(db->path);
	db->tmp_listed = 1;
	return CVC_OK;
}

cvc_status cvc_db_commit(cvc_db *db)
{
	cvc_status st;

	assert(db->in_txn);
	/* unlisted before the lock is released: a signal after this point
	 * must not remove what may then be another process's data too */
	unlist(db);
	if ((st = cvc_db_exec(db, "COMMIT")))
		return st;
	db->in_txn = 0;
	db->provisional = 0;
	return CVC_OK;
}

/*
 * The interned-string cache may hold ids that the rollback just removed;
 * drop it so the next import re-reads the table.  A database this handle
 * created and nobody else wrote is removed first, while the lock is held.
 */
void cvc_db_rollback(cvc_db *db)
{
	if (!db->in_txn)
		return;
	if (db->provisional && db->tmp_listed)
		remove_locked(db);
	unlist(db);
	sqlite3_exec(db->sq, "ROLLBACK", NULL, NULL, NULL);
	db->in_txn = 0;
	db_str_cache_free(db);
}
