/*
 * stream.c - inputs that can be read only once: a pipe (`<(zcat t.json.gz)`,
 * a FIFO), a terminal, or "-" for standard input.
 *
 * Format detection reads the first bytes of a file and the importer then
 * opens the file again; a pipe gives those bytes to the first reader only,
 * so the importer would see a trace with its head cut off.  Here the input
 * is opened once: the bytes detection read stay in memory and are handed to
 * the importer.  Kineto JSON, the one format worth streaming (traces of
 * gigabytes), continues from the same zlib handle; formats that seek (the
 * SQLite ones) or read twice (nccl-tests) get a private temporary copy.
 * Messages keep the name the user gave, never the copy's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_out.h"
#include "import_int.h"

/* Detection needs this much; a Kineto importer is then handed it whole. */
#define STREAM_PEEK ((size_t)64 << 10)

/*
 * The stream import_one() set up on this thread.  Thread-local because
 * `cvc import -j N` runs import_one() on N threads, each for its own file.
 */
static _Thread_local struct imp_stream *current;

int imp_is_stream(const char *path)
{
	struct stat sb;

	if (strcmp(path, "-") == 0)
		return 1;
	return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode);
}

cvc_status imp_stream_open(const char *path, struct imp_stream **out, char *err,
			   size_t errlen)
{
	struct imp_stream *s;
	int fd, got;

	*out = NULL;
	s = calloc(1, sizeof *s);
	if (!s || !(s->pre = malloc(STREAM_PEEK))) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return CVC_ERR_NOMEM;
	}
	s->path = path;
	/* Our own descriptor even for stdin: gzclose() closes what it was given. */
	fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "'%s': cannot open: %s", path, strerror(e));
		imp_stream_free(s);
		return cvc_open_status(e);
	}
	/* zlib passes bytes that are not gzip through unchanged. */
	s->gz = gzdopen(fd, "rb");
	if (!s->gz) {
		close(fd);
		snprintf(err, errlen, "'%s': cannot open: out of memory", path);
		imp_stream_free(s);
		return CVC_ERR_NOMEM;
	}
	gzbuffer(s->gz, 1 << 18);
	/* gzread() keeps reading a pipe until it has the bytes asked for or EOF. */
	got = gzread(s->gz, s->pre, (unsigned)STREAM_PEEK);
	if (got < 0) {
		cvc_status st = imp_gz_fail(s->gz, path, 0, err, errlen);

		imp_stream_free(s);
		return st;
	}
	s->npre = (size_t)got;
	*out = s;
	return CVC_OK;
}

cvc_status imp_stream_spill(struct imp_stream *s, char *err, size_t errlen)
{
	cvc_status st = imp_temp_copy(s->gz, s->pre, s->npre, s->path, &s->tmp, err, errlen);

	gzclose(s->gz);
	s->gz = NULL;
	return st;
}

void imp_stream_free(struct imp_stream *s)
{
	if (!s)
		return;
	if (current == s)
		current = NULL;
	if (s->gz)
		gzclose(s->gz);
	if (s->tmp) {
		/* A piped-in cvc database in WAL mode leaves -wal/-shm beside its copy. */
		cvc_db_remove_files(s->tmp);
		cvc_tmp_forget(s->tmp);
		free(s->tmp);
	}
	free(s->pre);
	free(s);
}

void imp_stream_set_current(struct imp_stream *s)
{
	current = s;
}

struct imp_stream *imp_stream_current(const char *path)
{
	return current && strcmp(current->path, path) == 0 ? current : NULL;
}

const char *imp_open_name(const char *path)
{
	struct imp_stream *s = imp_stream_current(path);

	return s && s->tmp ? s->tmp : path;
}
