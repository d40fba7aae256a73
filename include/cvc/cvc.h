/*
 * cvc.h - what every cvc module shares: the status enum, visibility, version.
 *
 * One status enum with stable values; the detailed message of a failure lives
 * in the handle that failed (cvc_db_errmsg() and friends).  The library never
 * calls exit(); only cli/ turns a status into an exit code.
 */
#ifndef CVC_H
#define CVC_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define CVC_API __attribute__((visibility("default")))
#else
#define CVC_API
#endif

#if defined(__GNUC__)
#define CVC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CVC_PRINTF(a, b)
#endif

#define CVC_VERSION "0.1.0"

/* Stable values: they appear in scripts and tests.  Append only. */
typedef enum cvc_status {
	CVC_OK = 0,
	CVC_ERR_NOMEM = 1,   /* allocation failed or a bounded buffer hit its cap */
	CVC_ERR_IO = 2,      /* open/read/write of a file failed */
	CVC_ERR_FORMAT = 3,  /* input is malformed: position is in the message */
	CVC_ERR_DB = 4,      /* SQLite reported an error */
	CVC_ERR_USAGE = 5,   /* bad arguments from the caller */
	CVC_ERR_NOTFOUND = 6,/* asked-for object does not exist */
	CVC_ERR_UNSUPPORTED = 7, /* feature not built in (e.g. no CUDA toolkit) */
	CVC_ERR_VERSION = 8, /* database from a newer cvc, or not a cvc database */
	CVC_ERR_INTERNAL = 9 /* broken invariant that is not the input's fault */
} cvc_status;

/* Returns a static, lowercase description of st.  Never NULL. */
CVC_API const char *cvc_strerror(cvc_status st);

/*
 * Maps a status to the CLI exit code: 0 ok, 2 bad input or usage, 1 anything
 * else.  Kept in the library so every front end agrees.
 */
CVC_API int cvc_exit_code(cvc_status st);

/*
 * The status of a failed open(2) of a file the user named, from its errno:
 * a path that is missing, unreadable to this user or not a file is the
 * input's fault (CVC_ERR_NOTFOUND, CVC_ERR_USAGE: exit 2, like a malformed
 * file), anything else (EIO, EMFILE, ...) the system's (CVC_ERR_IO), and
 * ENOMEM CVC_ERR_NOMEM.  Every reader of user files maps it so; a missing
 * trace and an unreadable one once gave different exit codes (issue 14).
 */
CVC_API cvc_status cvc_open_status(int errnum);

/*
 * The status and message of the error zlib last reported on a gzFile
 * (passed as void * so that this header does not need zlib.h): out of
 * memory while inflating is CVC_ERR_NOMEM, a read error CVC_ERR_IO (errno
 * in the message), a cut stream or corrupt data CVC_ERR_FORMAT; CVC_OK when
 * zlib reports none.  msg receives the words, without file or position.
 */
CVC_API cvc_status cvc_gz_status(void *gz, char *msg, size_t len);

/*
 * How far a gzip input may expand: at most cvc_gz_max_inflate() times the
 * compressed bytes read so far, plus CVC_GZ_INFLATE_SLACK (issue 36 item
 * 18: a 1.2 MB trace of distinct 60 KB names became a 988 MB database; the
 * traces under ../shared expand 5 to 20 times).  Like zstd's window limit,
 * a tool lifts it on request (cvc import/fit --max-inflate 0).
 */
#define CVC_GZ_MAX_INFLATE 100.0
#define CVC_GZ_INFLATE_SLACK ((int64_t)16 << 20)

/* Sets the ratio for the whole process; <= 0 lifts the limit.  Not
 * thread safe: a tool sets it once, before any work. */
CVC_API void cvc_gz_set_max_inflate(double ratio);
CVC_API double cvc_gz_max_inflate(void);

/*
 * Checks a gzip stream (a gzFile as void *) that has given out_bytes of
 * uncompressed data (gztell) against the limit: CVC_OK, or CVC_ERR_FORMAT
 * with the words in msg (no file or position).  A plain file read through
 * zlib (gzdirect) is never refused.  Costs an lseek: call it per chunk or
 * per MiB, not per line.
 */
CVC_API cvc_status cvc_gz_inflate_check(void *gz, int64_t out_bytes, char *msg, size_t len);

#endif
