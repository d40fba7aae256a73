/*
 * out.c - every file cvc writes for a user goes through here
 * (include/cvc/cvc_out.h): the target is checked, the bytes go to a
 * temporary file created beside it with O_EXCL|O_NOFOLLOW under a random
 * name, and the temporary file is renamed over the target once synced.
 *
 * Why each step (issue 36): writing `<path>.tmp` with fopen("w") followed a
 * planted symbolic link, and renaming it over whatever the path named
 * replaced /dev/null when run as root; the outputs of one command could be
 * one of its inputs (`export --db a.db --perfetto a.db`) or each other.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_out.h"

struct file_id {
	dev_t dev;
	ino_t ino;
};

struct cvc_out {
	FILE *f;
	int is_stdout;
	char *path;        /* the target, as given */
	char *tmp;         /* the temporary file beside it */
	struct file_id dir;/* the target's folder and name: what names it */
	char *base;        /* points into path */
	cvc_out *next;     /* open outputs of this process */
};

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static struct file_id *inputs;
static size_t ninputs, cap_inputs;
static cvc_out *open_outs;

cvc_status cvc_out_input(const char *path)
{
	struct stat sb;
	cvc_status st = CVC_OK;

	if (!path || strcmp(path, "-") == 0 || stat(path, &sb) != 0)
		return CVC_OK;
	pthread_mutex_lock(&out_mu);
	for (size_t i = 0; i < ninputs; i++)
		if (inputs[i].dev == sb.st_dev && inputs[i].ino == sb.st_ino)
			goto out;
	if ((st = cvc_grow(&inputs, &cap_inputs, ninputs + 1, sizeof *inputs, 16)))
		goto out;
	inputs[ninputs++] = (struct file_id){sb.st_dev, sb.st_ino};
out:
	pthread_mutex_unlock(&out_mu);
	return st;
}

void cvc_out_inputs_clear(void)
{
	pthread_mutex_lock(&out_mu);
	free(inputs);
	inputs = NULL;
	ninputs = cap_inputs = 0;
	pthread_mutex_unlock(&out_mu);
}

static int is_input(const struct stat *sb)
{
	int hit = 0;

	pthread_mutex_lock(&out_mu);
	for (size_t i = 0; i < ninputs && !hit; i++)
		hit = inputs[i].dev == sb->st_dev && inputs[i].ino == sb->st_ino;
	pthread_mutex_unlock(&out_mu);
	return hit;
}

/* The folder part of path ("." when it has none) into buf. */
static int dir_of(const char *path, char *buf, size_t cap)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash)
		return snprintf(buf, cap, ".") >= (int)cap ? -1 : 0;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= cap)
		return -1;
	memcpy(buf, path, n);
	buf[n] = '\0';
	return 0;
}

/* What a refused or failed target is told: the status of errno e. */
static cvc_status open_fail(const char *path, int e, char *err, size_t errlen)
{
	cvc_status st = e == EROFS ? CVC_ERR_USAGE : cvc_open_status(e);

	return cvc_errf(err, errlen, st, "'%s': cannot write: %s", path, strerror(e));
}

/* Refuses a target that is not a regular file or absent, or that an input
 * or another open output of this process names. */
static cvc_status check_target(cvc_out *o, int *exists, struct stat *tsb, char *err,
			       size_t errlen)
{
	char dir[PATH_MAX];
	struct stat dsb;
	cvc_status st = CVC_OK;

	*exists = 0;
	if (!*o->base || strcmp(o->base, ".") == 0 || strcmp(o->base, "..") == 0)
		return cvc_errf(err, errlen, CVC_ERR_USAGE,
				"'%s': names a folder, expected a file name", o->path);
	if (dir_of(o->path, dir, sizeof dir))
		return cvc_errf(err, errlen, CVC_ERR_USAGE, "'%s': path too long", o->path);
	if (stat(dir, &dsb) != 0)
		return open_fail(o->path, errno, err, errlen);
	if (!S_ISDIR(dsb.st_mode))
		return cvc_errf(err, errlen, CVC_ERR_USAGE, "'%s': '%s' is not a folder", o->path,
				dir);
	o->dir = (struct file_id){dsb.st_dev, dsb.st_ino};
	if (lstat(o->path, tsb) == 0) {
		if (S_ISLNK(tsb->st_mode))
			return cvc_errf(err, errlen, CVC_ERR_USAGE,
					"'%s': is a symbolic link; cvc replaces only regular files "
					"(name the file it points to)", o->path);
		if (!S_ISREG(tsb->st_mode))
			return cvc_errf(err, errlen, CVC_ERR_USAGE,
					"'%s': is not a regular file (a device, FIFO, socket or "
					"folder); cvc writes only regular files ('-' is stdout)",
					o->path);
		if (is_input(tsb))
			return cvc_errf(err, errlen, CVC_ERR_USAGE,
					"'%s': is one of this command's inputs; write the output "
					"to another file", o->path);
		*exists = 1;
	} else if (errno != ENOENT) {
		return open_fail(o->path, errno, err, errlen);
	}
	pthread_mutex_lock(&out_mu);
	for (cvc_out *p = open_outs; p; p = p->next)
		if (p->dir.dev == o->dir.dev && p->dir.ino == o->dir.ino &&
		    strcmp(p->base, o->base) == 0) {
			st = cvc_errf(err, errlen, CVC_ERR_USAGE,
				      "'%s': is also another output of this command ('%s')", o->path,
				      p->path);
			break;
		}
	pthread_mutex_unlock(&out_mu);
	return st;
}

/* 16 random hex digits: getrandom(2), else the clock and the pid. */
static void random_hex(char out[17])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[8];

	if (getrandom(b, sizeof b, GRND_NONBLOCK) != (ssize_t)sizeof b) {
		struct timespec ts;
		uint64_t v;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = cvc_hash_fnv1a((const char *)&ts, sizeof ts) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)b;
		memcpy(b, &v, sizeof b);
	}
	for (int i = 0; i < 8; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[16] = '\0';
}

/*
 * Creates the temporary file: "<dir>/.<name>.cvc-<random>", never an
 * existing name and never through a link.  Signals are held while it is
 * made and registered, so that an interrupt cannot leave it unregistered.
 */
static cvc_status make_temp(cvc_out *o, const struct stat *tsb, int exists, char *err,
			    size_t errlen)
{
	size_t dlen = (size_t)(o->base - o->path), blen = strlen(o->base);
	sigset_t block, old;
	int fd = -1, e = 0;

	/* a name of at most NAME_MAX: the file's name is cut, the folder not */
	if (blen > 200)
		blen = 200;
	o->tmp = malloc(dlen + blen + 32);
	if (!o->tmp)
		return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory");
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (int tries = 0; tries < 16 && fd < 0; tries++) {
		char rnd[17];

		random_hex(rnd);
		snprintf(o->tmp, dlen + blen + 32, "%.*s.%.*s.cvc-%s", (int)dlen, o->path, (int)blen,
			 o->base, rnd);
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		e = errno;
		if (fd < 0 && e != EEXIST)
			break;
	}
	if (fd >= 0)
		cvc_tmp_add(o->tmp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0)
		return open_fail(o->path, e, err, errlen);
	/* a replaced file keeps its permissions (not its set-id bits) */
	if (exists)
		(void)fchmod(fd, tsb->st_mode & 0777);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory");
	}
	return CVC_OK;
}

static void unlist(cvc_out *o)
{
	pthread_mutex_lock(&out_mu);
	for (cvc_out **pp = &open_outs; *pp; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	pthread_mutex_unlock(&out_mu);
}

static void out_free(cvc_out *o)
{
	unlist(o);
	if (o->f && !o->is_stdout)
		fclose(o->f);
	if (o->tmp) {
		unlink(o->tmp);
		cvc_tmp_forget(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	free(o);
}

cvc_status cvc_out_open(const char *path, cvc_out **out, char *err, size_t errlen)
{
	cvc_out *o = NULL;
	struct stat tsb;
	int exists = 0;
	cvc_status st;
	const char *slash;

	*out = NULL;
	o = calloc(1, sizeof *o);
	if (!o || !(o->path = strdup(path))) {
		free(o);
		return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory");
	}
	if (strcmp(path, "-") == 0) {
		o->is_stdout = 1;
		o->f = stdout;
		*out = o;
		return CVC_OK;
	}
	slash = strrchr(o->path, '/');
	o->base = slash ? (char *)slash + 1 : o->path;
	if ((st = check_target(o, &exists, &tsb, err, errlen)) ||
	    (st = make_temp(o, &tsb, exists, err, errlen))) {
		out_free(o);
		return st;
	}
	pthread_mutex_lock(&out_mu);
	o->next = open_outs;
	open_outs = o;
	pthread_mutex_unlock(&out_mu);
	*out = o;
	return CVC_OK;
}

FILE *cvc_out_file(cvc_out *o)
{
	return o->f;
}

const char *cvc_out_path(const cvc_out *o)
{
	return o->path;
}

/* fsync of the folder that now names the file; a file system that cannot
 * sync a folder (EINVAL) has nothing to lose. */
static int sync_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd, rc;

	if (dir_of(path, dir, sizeof dir))
		return 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	rc = fsync(fd) != 0 && errno != EINVAL && errno != EROFS;
	close(fd);
	return rc;
}

cvc_status cvc_out_commit(cvc_out *o, char *err, size_t errlen)
{
	struct stat tsb;
	cvc_status st = CVC_OK;
	int bad, e = 0;

	if (!o)
		return CVC_OK;
	if (o->is_stdout) {
		bad = fflush(stdout) != 0 || ferror(stdout);
		e = errno;
		out_free(o);
		return bad ? cvc_errf(err, errlen, CVC_ERR_IO, "stdout: write error: %s",
				      strerror(e))
			   : CVC_OK;
	}
	bad = fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0;
	e = errno;
	bad |= fclose(o->f) != 0;
	o->f = NULL;
	if (bad) {
		st = cvc_errf(err, errlen, CVC_ERR_IO, "'%s': write error: %s", o->path,
			      strerror(e ? e : EIO));
		goto out;
	}
	/* the target may have changed since it was checked: never rename over
	 * a link, a device or a folder */
	if (lstat(o->path, &tsb) == 0 && !S_ISREG(tsb.st_mode)) {
		st = cvc_errf(err, errlen, CVC_ERR_USAGE,
			      "'%s': became something other than a regular file while cvc wrote "
			      "it; left as it is", o->path);
		goto out;
	}
	if (rename(o->tmp, o->path) != 0) {
		st = cvc_errf(err, errlen, CVC_ERR_IO, "'%s': cannot replace: %s", o->path,
			      strerror(errno));
		goto out;
	}
	cvc_tmp_forget(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	if (sync_dir(o->path))
		st = cvc_errf(err, errlen, CVC_ERR_IO, "'%s': cannot sync its folder: %s", o->path,
			      strerror(errno));
out:
	out_free(o);
	return st;
}

void cvc_out_abort(cvc_out *o)
{
	if (o)
		out_free(o);
}

cvc_status cvc_out_dir(const char *path, int *created, char *err, size_t errlen)
{
	struct stat sb;

	*created = 0;
	if (stat(path, &sb) == 0) {
		if (S_ISDIR(sb.st_mode))
			return CVC_OK;
		return cvc_errf(err, errlen, CVC_ERR_USAGE,
				"'%s': is not a folder (expected a folder to write into, or a "
				"new name)", path);
	}
	if (errno != ENOENT)
		return open_fail(path, errno, err, errlen);
	if (mkdir(path, 0777) != 0) {
		int e = errno;

		/* made by someone else meanwhile: a folder is what we wanted */
		if (e == EEXIST && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
			return CVC_OK;
		return cvc_errf(err, errlen, e == ENOENT ? CVC_ERR_NOTFOUND : cvc_open_status(e),
				"'%s': cannot create folder: %s", path, strerror(e));
	}
	*created = 1;
	return CVC_OK;
}

/* Copies fd's bytes to tmpfd; CVC_ERR_IO with err naming path on failure. */
static cvc_status copy_fd(int fd, int tmpfd, const char *path, char *err, size_t errlen)
{
	char buf[1 << 16];
	long long total = 0;

	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf), w = 0;

		/* a device or a pipe without end (/dev/zero, `yes |`) is
		 * refused at the cap, not copied until the disk fills */
		if (n > 0 && (total += n) > CVC_SPILL_MAX)
			return cvc_errf(err, errlen, CVC_ERR_FORMAT, "'%s': byte %lld: expected at "
					"most %d MiB from a pipe or device", path, total,
					CVC_SPILL_MAX >> 20);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cvc_errf(err, errlen, CVC_ERR_IO, "'%s': read error: %s", path,
					strerror(errno));
		if (n == 0)
			return CVC_OK;
		while (w < n) {
			ssize_t k = write(tmpfd, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return cvc_errf(err, errlen, CVC_ERR_IO,
						"'%s': writing its temporary copy: %s", path,
						k < 0 ? strerror(errno) : "disk full");
			w += k;
		}
	}
}

cvc_status cvc_tmp_spill(const char *path, char **tmp, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	int is_stdin = strcmp(path, "-") == 0, fd, tmpfd = -1;
	struct stat sb;
	cvc_status st;
	char *name;

	*tmp = NULL;
	if (!is_stdin && (stat(path, &sb) != 0 || S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode)))
		return CVC_OK;
	if (!dir || !*dir)
		dir = "/tmp";
	name = malloc(strlen(dir) + 32);
	if (!name)
		return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory");
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(name);
		return cvc_errf(err, errlen, cvc_open_status(errno), "'%s': cannot open: %s", path,
				strerror(errno));
	}
	snprintf(name, strlen(dir) + 32, "%s/cvc-spill-XXXXXX", dir);
	/* lint-out: a private copy in $TMPDIR under a name mkstemp makes */
	tmpfd = mkstemp(name);
	if (tmpfd < 0) {
		st = cvc_errf(err, errlen, CVC_ERR_IO, "'%s': cannot make a temporary copy in %s: %s",
			      path, dir, strerror(errno));
		goto out;
	}
	cvc_tmp_add(name);
	st = copy_fd(fd, tmpfd, path, err, errlen);
	if (close(tmpfd) != 0 && !st)
		st = cvc_errf(err, errlen, CVC_ERR_IO, "'%s': writing its temporary copy: %s", path,
			      strerror(errno));
	tmpfd = -1;
out:
	if (!is_stdin)
		close(fd);
	if (st) {
		cvc_tmp_unspill(name);
		return st;
	}
	*tmp = name;
	return CVC_OK;
}

void cvc_tmp_unspill(char *tmp)
{
	if (!tmp)
		return;
	unlink(tmp);
	cvc_tmp_forget(tmp);
	free(tmp);
}
