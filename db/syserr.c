/*
 * syserr.c - what the system's and zlib's errors mean for cvc: which status
 * (and so which exit code) a failure to open or inflate a user's file gets.
 * One mapping for every reader, so that the same fault never gives two exit
 * codes (issue 14: a missing trace was exit 2, an unreadable one exit 1, and
 * zlib running out of memory was reported as corrupt data).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <zlib.h>

#include "cvc/cvc.h"

cvc_status cvc_open_status(int errnum)
{
	switch (errnum) {
	case ENOENT:
	case ENOTDIR:
		return CVC_ERR_NOTFOUND;
	case EACCES:
	case EPERM:
	case EISDIR:
	case ELOOP:
	case ENAMETOOLONG:
	case ENXIO:
		return CVC_ERR_USAGE;
	case ENOMEM:
		return CVC_ERR_NOMEM;
	default:
		return CVC_ERR_IO;
	}
}

cvc_status cvc_gz_status(void *gzv, char *msg, size_t len)
{
	gzFile gz = gzv;
	int zerr = Z_OK;
	const char *zmsg = gz ? gzerror(gz, &zerr) : "no stream";

	switch (zerr) {
	case Z_OK:
	case Z_STREAM_END:
		snprintf(msg, len, "no error");
		return CVC_OK;
	case Z_MEM_ERROR:
		snprintf(msg, len, "out of memory while inflating");
		return CVC_ERR_NOMEM;
	case Z_ERRNO:
		snprintf(msg, len, "read error: %s", strerror(errno));
		return CVC_ERR_IO;
	case Z_BUF_ERROR:
		/* zlib's word for a stream cut before its end */
		snprintf(msg, len, "truncated gzip data, expected more compressed input");
		return CVC_ERR_FORMAT;
	default:
		snprintf(msg, len, "corrupt gzip data: %s", zmsg ? zmsg : "unknown error");
		return CVC_ERR_FORMAT;
	}
}

static double max_inflate = CVC_GZ_MAX_INFLATE;

void cvc_gz_set_max_inflate(double ratio)
{
	max_inflate = ratio;
}

double cvc_gz_max_inflate(void)
{
	return max_inflate;
}

cvc_status cvc_gz_inflate_check(void *gzv, int64_t out_bytes, char *msg, size_t len)
{
	gzFile gz = gzv;
	z_off_t in;

	if (max_inflate <= 0 || out_bytes <= CVC_GZ_INFLATE_SLACK || !gz || gzdirect(gz))
		return CVC_OK;
	in = gzoffset(gz);
	if (in < 0 || (double)out_bytes <= max_inflate * (double)in + (double)CVC_GZ_INFLATE_SLACK)
		return CVC_OK;
	snprintf(msg, len,
		 "expands more than %g times its compressed size (%lld MiB from %lld KiB read): "
		 "refused as a decompression bomb (--max-inflate 0 reads it all)",
		 max_inflate, (long long)(out_bytes >> 20), (long long)in >> 10);
	return CVC_ERR_FORMAT;
}
