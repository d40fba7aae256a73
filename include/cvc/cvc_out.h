/*
 * cvc_out.h - the one way cvc writes a file a user named (a report, an
 * export, a projection, a plan, the tables of --csv-dir), and the files an
 * interrupted command must not leave behind.
 *
 * A file is replaced, never rewritten in place (git's lockfile.c and
 * tempfile.c; SQLite's atomic commit):
 *   - the target must be a regular file or not exist yet.  A device, FIFO,
 *     socket, directory or symbolic link is refused with CVC_ERR_USAGE (exit
 *     2): run as root, `-o /dev/null` once replaced the system's /dev/null
 *     with a regular file (issue 36 item 2);
 *   - a target that is the same file (device and inode) as one of the
 *     command's inputs (cvc_out_input) is refused, and so is a target that
 *     another output of this process still open names (`--csv X --json X`);
 *   - the bytes go to a temporary file beside the target, created with
 *     O_CREAT|O_EXCL|O_NOFOLLOW under a random name, so that a planted
 *     link or file is never followed or reused (item 5); on commit it is
 *     flushed, fsync()ed, renamed over the target, and the directory synced;
 *   - the temporary file is removed on every error path (cvc_out_abort) and,
 *     once cvc_tmp_on_signals() is installed, on SIGINT, SIGTERM, SIGHUP and
 *     SIGPIPE (item 6).
 * "-" is standard output: written through, never renamed or closed, its
 * write errors reported by cvc_out_commit.
 *
 * The input list and the temporary-file list are process-wide; the
 * functions that change them are safe to call from several threads, but a
 * cvc_out handle belongs to one thread.
 */
#ifndef CVC_OUT_H
#define CVC_OUT_H

#include <stdio.h>

#include "cvc.h"

typedef struct cvc_out cvc_out;

/*
 * Records path as an input of this process's command: a later
 * cvc_out_open whose target is the same file (st_dev and st_ino, links
 * followed) is refused.  A path that does not exist (yet) is not recorded
 * and not an error; "-" is ignored.  Returns CVC_ERR_NOMEM only.
 */
CVC_API cvc_status cvc_out_input(const char *path);

/* Forgets every recorded input (a test, or a long-lived caller between
 * commands). */
CVC_API void cvc_out_inputs_clear(void);

/*
 * Opens an output for path: "-" is stdout, anything else a temporary file
 * beside path as above.  On success *out owns the handle: finish it with
 * cvc_out_commit or cvc_out_abort.  Errors, with a message naming path in
 * err: CVC_ERR_USAGE for a target refused (not a regular file, an input,
 * another open output, a directory name) or a folder that cannot be written
 * (EACCES, EROFS), CVC_ERR_NOTFOUND for a missing folder, CVC_ERR_IO,
 * CVC_ERR_NOMEM.  *out is NULL on failure.
 */
CVC_API cvc_status cvc_out_open(const char *path, cvc_out **out, char *err, size_t errlen);

/* The stream to write to.  Borrowed; valid until commit or abort. */
CVC_API FILE *cvc_out_file(cvc_out *o);

/* The target path as given to cvc_out_open.  Borrowed. */
CVC_API const char *cvc_out_path(const cvc_out *o);

/*
 * Finishes o and frees it: checks the stream for write errors, flushes and
 * fsync()s the temporary file, re-checks that the target is still a regular
 * file or absent, renames the temporary file over it and syncs the folder.
 * For stdout: flushes and checks it.  On failure the temporary file is
 * removed, the target is left as it was, and err names the target
 * (CVC_ERR_IO, or CVC_ERR_USAGE when the target was replaced meanwhile by
 * something that is not a regular file).  Accepts NULL (CVC_OK).
 */
CVC_API cvc_status cvc_out_commit(cvc_out *o, char *err, size_t errlen);

/* Removes o's temporary file and frees o; the target is untouched.  NULL ok. */
CVC_API void cvc_out_abort(cvc_out *o);

/*
 * Checks that path may be a folder cvc writes into (`--csv-dir`, `cvc
 * profile -o`): an existing directory (links followed), or absent, in
 * which case it is created (mode 0777 & ~umask, one level).  A regular
 * file, device or FIFO there is CVC_ERR_USAGE.  Returns CVC_OK, with
 * *created set when this call made it.
 */
CVC_API cvc_status cvc_out_dir(const char *path, int *created, char *err, size_t errlen);

/*
 * A reader that needs to read its input twice (cvc fit: the header, then
 * the table or log from its start) and was given something that can be
 * read once (a pipe, a FIFO, /dev/fd/N from <(cmd), "-" for stdin): copies
 * what path holds, as it is (compressed or not), into a private file
 * under $TMPDIR (mode 0600, registered with cvc_tmp_add) and sets *tmp to
 * its path, which the caller reads instead and ends with cvc_tmp_unspill.
 * For a regular file (or a path that cannot be opened, which the reader
 * then reports) *tmp is NULL and nothing is copied.  Errors name path:
 * CVC_ERR_IO, CVC_ERR_NOMEM, or cvc_open_status's for an unopenable one;
 * CVC_ERR_FORMAT past CVC_SPILL_MAX bytes (a device or an endless pipe).
 */
#define CVC_SPILL_MAX (256 << 20)
CVC_API cvc_status cvc_tmp_spill(const char *path, char **tmp, char *err, size_t errlen);

/* Removes and frees a copy made by cvc_tmp_spill.  NULL ok. */
CVC_API void cvc_tmp_unspill(char *tmp);

/* ---- files an interrupted command removes ---------------------------------- */

/*
 * Registers path (and its SQLite side files path-wal, path-shm,
 * path-journal) for removal by cvc_tmp_remove_all: temporary copies,
 * shards, output temporaries, a database this command created while it
 * holds its write lock.  At most 256 at a time; a path over 4000 bytes is
 * not tracked (removed on the normal path only).  Thread safe.
 */
CVC_API void cvc_tmp_add(const char *path);

/* Unregisters path (the first entry equal to it).  Thread safe. */
CVC_API void cvc_tmp_forget(const char *path);

/* Unlinks every registered path and its side files.  Async-signal-safe. */
CVC_API void cvc_tmp_remove_all(void);

/*
 * Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGPIPE (each one not
 * ignored already) that call cvc_tmp_remove_all and then die of the signal
 * as the default action would.  For tools (the cvc CLI installs them before
 * every command); the library never installs them itself.
 */
CVC_API void cvc_tmp_on_signals(void);

#endif
