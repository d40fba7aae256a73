/*
 * spool_int.h - the spool's framing, shared by its writer (spool.c) and
 * its reader (materialize.c): a 16-byte header, then records of an 8-byte
 * type and length followed by the payload padded to 8 bytes.
 */
#ifndef CVC_SPOOL_INT_H
#define CVC_SPOOL_INT_H

#include <stddef.h>
#include <stdint.h>

struct spool_hdr {
	char magic[8];
	uint32_t version;
	uint32_t reserved;
};

/* A payload of n bytes padded to the 8-byte record alignment. */
static inline size_t spool_pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

#endif
