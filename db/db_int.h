/*
 * db_int.h - what the two halves of the cvc_db handle share: the file's
 * life (dbfile.c: open, schema, transactions, removal of a database this
 * command created) and the bulk writers (store.c).
 */
#ifndef CVC_DB_INT_H
#define CVC_DB_INT_H

#include <stdint.h>

#include <sqlite3.h>

#include "cvc/cvc_db.h"

enum stmt_id {
	S_RUN_NEW, S_RUN_MERGE, S_RUN_FIND, S_META_SET, S_META_ADD, S_RANK_PUT,
	S_DEV_PUT, S_SRC_ADD, S_STR_FIND, S_STR_ADD, S_ACT_ADD, S_COLL_ADD,
	S_RANGE_ADD, S_NT_ADD, S_SHAPE_ADD, S_LAUNCH_ADD, S_COUNT
};

/* Open-addressing hash of interned strings: text -> id. */
struct str_slot {
	char *s;
	size_t len;
	uint64_t hash;
	int64_t id;
};

struct cvc_db {
	sqlite3 *sq;
	char *path;
	int flags;                /* cvc_db_open's flags */
	int in_txn;
	int readonly;
	/* A database this handle created with CVC_DB_DISCARD: removed again
	 * when it ends without a committed transaction, provided nobody else
	 * wrote it (data_version unchanged since our schema commit, the path
	 * still naming our file), which is decided under the write lock. */
	int provisional;
	int64_t data_version;     /* PRAGMA data_version after our schema */
	int tmp_listed;           /* path is in the signal-time removal list */
	int discarded;            /* removed: the handle reads an unlinked file */
	sqlite3_stmt *st[S_COUNT];
	struct str_slot *slots;
	size_t nslots, nused;
	size_t cached_bytes;      /* bytes of the names in slots */
	char errmsg[1024];
};

/* Records SQLite's own message for a failed call (dbfile.c). */
cvc_status db_sq_fail(cvc_db *db, const char *what);

/* Finalizes the prepared writers and empties the intern cache (store.c). */
void db_stmts_finalize(cvc_db *db);
void db_str_cache_free(cvc_db *db);

#endif
