/*
 * zlib_nomem.c - an LD_PRELOAD module for tests: zlib's inflate set-up
 * fails as it does when malloc returns NULL (Z_MEM_ERROR), so a test can
 * check that running out of memory while inflating is reported as that,
 * not as corrupt input (issue 14 item 11).  gzread() sets up its inflate
 * stream through the exported inflateInit2_, which this one replaces.
 */
#include <zlib.h>

__attribute__((visibility("default"))) int inflateInit2_(z_streamp strm, int window_bits,
							 const char *version, int stream_size)
{
	(void)window_bits;
	(void)version;
	(void)stream_size;
	if (strm)
		strm->msg = NULL;
	return Z_MEM_ERROR;
}
