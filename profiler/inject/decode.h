/*
 * decode.h - CUPTI activity buffers -> spool records (cvc_profile.h).
 *
 * The decoder walks a byte buffer laid out exactly as CUPTI hands it to
 * the buffer-completed callback with libcupti's own walker,
 * cuptiActivityGetNextRecord (it knows the size of every kind it writes,
 * including kinds cvc does not decode; it needs no driver), and casts each
 * record it decodes to the struct of the CUPTI headers this was compiled
 * against (cvci_cupti_layout_ok says which libcupti may be walked so).  The
 * live callback and the unit tests both go through cvci_decode(), so the
 * tests exercise the code the profiler runs.  Not thread safe: one writer
 * thread owns a decoder.
 */
#ifndef CVC_INJECT_DECODE_H
#define CVC_INJECT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "cvc/cvc_profile.h"

/* Name of a runtime (domain 2) or driver (domain 1) callback id, or NULL. */
typedef const char *(*cvci_cbname_fn)(uint32_t domain, uint32_t cbid);

struct cvci_name_slot;
struct cvci_str_slot;

struct cvci_decoder {
	cvc_spool *sp;              /* borrowed */
	int64_t win_start_ns;       /* records starting before are dropped; 0 = none */
	int64_t win_end_ns;         /* records starting after are dropped; 0 = none */
	cvci_cbname_fn cbname;      /* may be NULL: API names become "cbid N" */
	unsigned api_drop;          /* API records not stored (counted in
				       skipped): bit 0 driver, bit 1 runtime.
				       They are enabled only so that CUPTI
				       writes external-correlation records */
	/* counters */
	int64_t records;            /* records decoded and spooled */
	int64_t filtered;           /* outside the --delay/--duration window */
	int64_t skipped;            /* kinds decoded but not stored (context, name) */
	int64_t undecodable;        /* buffers cut at an unknown record kind */
	int64_t untimed;            /* kernels/copies/sets CUPTI could not time
				       (start or end 0, end before start): not
				       stored at t = 0, counted */
	/* interning: pointer cache in front of a content table */
	struct cvci_name_slot *pcache;  /* direct mapped, CVCI_PCACHE slots */
	struct cvci_str_slot *strs;
	size_t str_mask, str_used;
	uint32_t next_sid;
};

/* Initialises d over sp (borrowed).  Returns CVC_ERR_NOMEM on failure. */
cvc_status cvci_decoder_init(struct cvci_decoder *d, cvc_spool *sp);

/* Frees what d holds; accepts a zeroed or released decoder. */
void cvci_decoder_release(struct cvci_decoder *d);

/*
 * Decodes the valid bytes of buf (8-byte aligned, CUPTI layout) into spool
 * records.  Returns the number of records read.  A record of a kind this
 * build does not know ends the walk (its size is unknown): counted in
 * d->undecodable, never a crash.
 */
size_t cvci_decode(struct cvci_decoder *d, const uint8_t *buf, size_t valid);

/*
 * Spool string id of s[0..len), spooling a STR record the first time.
 * Returns 0 only when the spool could not take it.
 */
uint32_t cvci_intern(struct cvci_decoder *d, const char *s, size_t len);

/* Spools the process record (first record of every spool). */
void cvci_put_proc(struct cvci_decoder *d, int rank, int world_size, int64_t pid,
		   const char *host, const char *run, const char *tool);

/* Spools run_meta key += n (integer counters, clock pairs). */
void cvci_put_meta(struct cvci_decoder *d, const char *key, int64_t n);

/* Spools run_meta key = text (a name CUPTI gave, such as its error's). */
void cvci_put_meta_str(struct cvci_decoder *d, const char *key, const char *text);

/*
 * Whether a libcupti reporting version `runtime` (cuptiGetVersion) writes
 * the record layouts of the headers of version `built` (CUPTI_API_VERSION):
 * both in CUDA 13's xxyyzz numbering and of one major.minor (the patch
 * level zz keeps layouts; minors change them: 13.2 brought
 * CUpti_ActivityKernel11).  A libcupti of CUDA 12 or older numbers its API
 * vN (19 for 12.0 ... 28 for 12.9 Update 1, cupti_version.h) and writes
 * older structs (CUpti_ActivityKernel9).  When not, why[0..cap) says which
 * versions these are, for one line to the user.
 */
int cvci_cupti_layout_ok(uint32_t runtime, uint32_t built, char *why, size_t cap);

/* Size in bytes of a CUPTI record of kind in this build; 0 if unknown. */
size_t cvci_record_size(uint32_t kind);

#endif
