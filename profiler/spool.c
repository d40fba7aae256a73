/*
 * spool.c - the profiler's spool file: the activity list, and buffered
 * append on the hot path (cvc_profile.h).  Reading a finished spool into a
 * cvc database is materialize.c.
 *
 * Needs no CUDA: the injection library (profiler/inject/) decodes CUPTI
 * records into these rows.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_profile.h"
#include "spool_int.h"

/* ---- activities list ----------------------------------------------------- */

cvc_status cvc_profile_parse_activities(const char *list, unsigned *mask, char *err,
					size_t errlen)
{
	static const struct { const char *w; unsigned m; } words[] = {
		{"kernel", CVC_PROF_KERNEL}, {"memcpy", CVC_PROF_MEMCPY},
		{"memset", CVC_PROF_MEMSET}, {"nvtx", CVC_PROF_NVTX},
		{"extcorr", CVC_PROF_EXTCORR}, {"runtime", CVC_PROF_RUNTIME},
		{"driver", CVC_PROF_DRIVER}, {"api", CVC_PROF_RUNTIME | CVC_PROF_DRIVER},
		{"default", CVC_PROF_DEFAULT},
		{"all", CVC_PROF_DEFAULT | CVC_PROF_RUNTIME | CVC_PROF_DRIVER},
	};
	unsigned m = 0;
	const char *p = list;

	if (!list || !*list) {
		if (err)
			snprintf(err, errlen, "empty activity list");
		return CVC_ERR_USAGE;
	}
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		size_t i;

		for (i = 0; i < sizeof words / sizeof words[0]; i++)
			if (strlen(words[i].w) == len && strncmp(words[i].w, p, len) == 0)
				break;
		if (i == sizeof words / sizeof words[0]) {
			if (err)
				snprintf(err, errlen,
					 "unknown activity '%.*s' (expected kernel, memcpy, memset, "
					 "nvtx, extcorr, runtime, driver, api, default or all)",
					 (int)(len > 64 ? 64 : len), p);
			return CVC_ERR_USAGE;
		}
		m |= words[i].m;
		p += len + (comma ? 1 : 0);
	}
	*mask = m;
	return CVC_OK;
}

/* ---- writing ------------------------------------------------------------------- */

struct cvc_spool {
	int fd;
	unsigned char *buf;
	size_t cap, used;
	int64_t nrecs;     /* records in buf */
	off_t good_off;    /* file size after the last whole write */
	int64_t lost;
};

cvc_status cvc_spool_open(const char *path, size_t buf_bytes, cvc_spool **out)
{
	cvc_spool *sp = NULL;
	struct spool_hdr h = {{0}, CVC_SPOOL_VERSION, 0};
	cvc_status st = CVC_OK;

	*out = NULL;
	if (buf_bytes < (64u << 10))
		buf_bytes = 64u << 10;
	sp = calloc(1, sizeof *sp);
	if (!sp)
		return CVC_ERR_NOMEM;
	sp->fd = -1;
	sp->cap = buf_bytes;
	sp->buf = malloc(buf_bytes);
	if (!sp->buf) {
		st = CVC_ERR_NOMEM;
		goto out;
	}
	/* lint-out: the profiler's spool, O_EXCL in its own folder, appended
	 * to by the recording thread as it goes (never a replaced file) */
	sp->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (sp->fd < 0) {
		st = CVC_ERR_IO;
		goto out;
	}
	memcpy(h.magic, CVC_SPOOL_MAGIC, 8);
	memcpy(sp->buf, &h, sizeof h);
	sp->used = sizeof h;
	if ((st = cvc_spool_flush(sp)))
		goto out;
	*out = sp;
	sp = NULL;
out:
	if (sp) {
		if (sp->fd >= 0) {
			close(sp->fd);
			unlink(path);
		}
		free(sp->buf);
		free(sp);
	}
	return st;
}

cvc_status cvc_spool_flush(cvc_spool *sp)
{
	size_t done = 0;

	while (done < sp->used) {
		ssize_t n = write(sp->fd, sp->buf + done, sp->used - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/*
			 * Disk full or similar: drop this buffer's records and cut the
			 * file back so it still ends on a whole record.
			 */
			if (ftruncate(sp->fd, sp->good_off) == 0)
				lseek(sp->fd, sp->good_off, SEEK_SET);
			sp->lost += sp->nrecs;
			sp->used = 0;
			sp->nrecs = 0;
			return CVC_ERR_IO;
		}
		done += (size_t)n;
	}
	sp->good_off += (off_t)sp->used;
	sp->used = 0;
	sp->nrecs = 0;
	return CVC_OK;
}

cvc_status cvc_spool_put(cvc_spool *sp, uint32_t type, const void *payload, uint32_t len)
{
	size_t need = 8 + spool_pad8(len);
	unsigned char *p;

	if (len > CVC_SPOOL_MAX_RECORD)
		return CVC_ERR_USAGE;
	if (sp->used + need > sp->cap) {
		cvc_spool_flush(sp); /* a failed flush is counted in lost */
		if (need > sp->cap) {
			sp->lost++;
			return CVC_OK;
		}
	}
	p = sp->buf + sp->used;
	memcpy(p, &type, 4);
	memcpy(p + 4, &len, 4);
	memcpy(p + 8, payload, len);
	memset(p + 8 + len, 0, spool_pad8(len) - len);
	sp->used += need;
	sp->nrecs++;
	return CVC_OK;
}

cvc_status cvc_spool_put_str(cvc_spool *sp, uint32_t id, const char *s, size_t len)
{
	unsigned char tmp[4 + 4096];
	unsigned char *buf = tmp;
	cvc_status st;

	if (len > CVC_SPOOL_MAX_RECORD - 4)
		len = CVC_SPOOL_MAX_RECORD - 4; /* a name this long is cut, not lost */
	if (len + 4 > sizeof tmp) {
		buf = malloc(len + 4);
		if (!buf) {
			sp->lost++;
			return CVC_ERR_NOMEM;
		}
	}
	memcpy(buf, &id, 4);
	memcpy(buf + 4, s, len);
	st = cvc_spool_put(sp, CVC_SPOOL_STR, buf, (uint32_t)(len + 4));
	if (buf != tmp)
		free(buf);
	return st;
}

int64_t cvc_spool_lost(const cvc_spool *sp)
{
	return sp->lost;
}

cvc_status cvc_spool_close(cvc_spool *sp)
{
	cvc_status st;

	if (!sp)
		return CVC_OK;
	st = cvc_spool_flush(sp);
	if (close(sp->fd) != 0 && !st)
		st = CVC_ERR_IO;
	free(sp->buf);
	free(sp);
	return st;
}

