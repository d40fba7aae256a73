/*
 * test_regress.c - every input that ever crashed, leaked or broke the error
 * contract under the fuzzers (tests/fuzz/regress/<target>/), replayed
 * through the same entry points the harnesses call (tests/fuzz/
 * fuzz_targets.h).  Under the asan build a regression is a sanitizer
 * report; in every build it is a failed contract: a bad input must end in
 * a status other than internal error with a message that is not empty.
 * The inputs found so far also have their expected outcome checked.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../fuzz/fuzz_targets.h"
#include "testutil.h"

#define REGRESS_DIR CVC_SOURCE_DIR "/tests/fuzz/regress"

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	cr_assert(f, "cannot open %s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	cr_assert(len >= 0);
	rewind(f);
	buf = malloc((size_t)len + 1);
	cr_assert(buf);
	*n = fread(buf, 1, (size_t)len, f);
	cr_assert_eq(*n, (size_t)len);
	fclose(f);
	return buf;
}

/* Replays one file; returns its status, the message is in fz_state()->msg. */
static cvc_status replay(enum fz_target t, const char *path)
{
	size_t n = 0;
	uint8_t *d = slurp(path, &n);
	cvc_status st = fz_run(t, d, n);

	free(d);
	return st;
}

/*
 * Replays the stored input at path through target: a clean format error
 * whose message names both want and also.
 */
static void expect_format_error(enum fz_target t, const char *path, const char *want,
				const char *also)
{
	cvc_status st = replay(t, path);
	const char *msg = fz_state()->msg;

	cr_expect_eq(st, CVC_ERR_FORMAT, "%s: status %d: %s", path, (int)st, msg);
	cr_expect(strstr(msg, want) && strstr(msg, also), "%s: message: %s", path, msg);
	fz_cleanup();
}

Test(regress, every_stored_input_keeps_the_error_contract)
{
	int total = 0;

	for (int t = 0; t < FZ_NTARGETS; t++) {
		char dir[1024];
		DIR *dh;
		struct dirent *e;

		snprintf(dir, sizeof dir, "%s/%s", REGRESS_DIR, fz_target_name((enum fz_target)t));
		dh = opendir(dir);
		if (!dh)
			continue;
		while ((e = readdir(dh)) != NULL) {
			char path[2048];
			cvc_status st;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			st = replay((enum fz_target)t, path);
			cr_expect(fz_check(st), "%s: status %d (%s), message '%s'", path, (int)st,
				  cvc_strerror(st), fz_state()->msg);
			total++;
		}
		closedir(dh);
	}
	fz_cleanup();
	/* The crashes found so far are stored: an empty replay is a broken path. */
	cr_expect_geq(total, 4, "only %d regression inputs found under %s", total, REGRESS_DIR);
}

/*
 * fuzz catalog, 2026-11: gpus_per_node 8888888888 was converted to int
 * (undefined behaviour, UBSan float-cast-overflow in models/catalog.c).
 */
Test(regress, catalog_count_past_int_is_a_format_error)
{
	expect_format_error(FZ_CATALOG, REGRESS_DIR "/catalog/gpus-per-node-overflow.csv",
			    "line 2", "gpus_per_node");
}

/*
 * fuzz hfconfig, 2026-11-30 (CI's 60 s round): a Gemma 3 config.json whose
 * sliding_window_pattern is 8.9e124 was converted to int (undefined
 * behaviour, UBSan float-cast-overflow in projector/hfconfig.c
 * local_attention); now the range put() checks, an error naming the key.
 */
Test(regress, hfconfig_window_period_past_int_is_a_format_error)
{
	expect_format_error(FZ_HFCONFIG, REGRESS_DIR "/hfconfig/sliding-window-pattern-huge.json",
			    "sliding_window_pattern", "whole number");
}

/*
 * fuzz scenario, 2026-11: a list with a bad value after good ones leaked the
 * values already pushed (projector/scenario.c section_map); LeakSanitizer
 * in the asan build, the clean error here.
 */
Test(regress, scenario_bad_list_value_is_a_format_error)
{
	expect_format_error(FZ_SCENARIO, REGRESS_DIR "/scenario/leak-bad-list-value.yaml",
			    "fuzz.yaml", "line ");
}

/*
 * fuzz scenario, 2026-11: a study whose `where:` matches no scenario of a
 * 10^8-scenario expansion ran for minutes (the harness stopped only after 64
 * scenarios called back).  The harness now runs only studies of at most
 * FZ_SCENARIO_WALK scenarios; this one parses and is not run.
 */
Test(regress, scenario_huge_filtered_study_is_not_walked)
{
	cr_expect_eq(replay(FZ_SCENARIO, REGRESS_DIR "/scenario/timeout-where-matches-nothing.yaml"),
		     CVC_OK, "%s", fz_state()->msg);
}

/*
 * fuzz nccltests, 2026-11: a #wrong column of 1e+21 was cast to int64
 * (undefined behaviour, UBSan float-cast-overflow in
 * profiler/import/nccltests.c parse_row).
 */
Test(regress, nccltests_wrong_count_past_int64_is_a_format_error)
{
	expect_format_error(FZ_NCCLTESTS, REGRESS_DIR "/nccltests/wrong-count-past-int64.txt",
			    "line 7", "wrong");
}

/*
 * fuzz nsys, 2026-12-03 (a fresh clone's 60 s round): one kernel row whose
 * globalPid is a blob (then also text) left the process list out of integer
 * order (SQLite sorts blobs and text after numbers), so a real process was
 * not found and the import ended with an internal error ("process ... has
 * no rank", profiler/import/nsys.c).  Replayed as SQL on the Nsight base.
 */
Test(regress, nsys_non_integer_global_pid_is_a_format_error)
{
	expect_format_error(FZ_SQLCRAFT, REGRESS_DIR "/sqlcraft/nsys-blob-global-pid.sql",
			    "CUPTI_ACTIVITY_KIND_KERNEL", "integer globalPid, found blob");
	expect_format_error(FZ_SQLCRAFT, REGRESS_DIR "/sqlcraft/nsys-text-global-pid.sql",
			    "CUPTI_ACTIVITY_KIND_KERNEL", "integer globalPid, found text");
}

/*
 * fuzz spool, 2026-11: an EXTCORR record of the NCCL-launch kind in a spool
 * with no COLL record was written into the launch table, which is only
 * allocated when COLL records exist: a NULL dereference in
 * profiler/spool.c mat_prefill (a profile whose NCCL records were lost).
 */
Test(regress, spool_nccl_launch_without_calls_materializes)
{
	cvc_status st = replay(FZ_SPOOL, REGRESS_DIR "/spool/nccl-launch-without-coll.spool");

	cr_expect(st == CVC_OK || st == CVC_ERR_FORMAT, "status %d: %s", (int)st, fz_state()->msg);
	cr_expect(fz_check(st), "status %d: %s", (int)st, fz_state()->msg);
	fz_cleanup();
}

/*
 * nccl-tests' -J JSON goes through the harnesses that read nccl-tests logs
 * (cvc_nt_read takes both) and through detection from a pipe: the authored
 * seed (tests/fuzz/seeds/nccltests/min.json) is read by each, so fuzzing
 * starts from a file the reader accepts, not one it refuses at byte 0.
 */
Test(regress, nccltests_json_seed_is_read_by_every_harness_that_takes_it)
{
	static const enum fz_target ts[] = {FZ_NCCLTESTS, FZ_CSVTAB, FZ_STREAM};

	for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
		cvc_status st = replay(ts[i], CVC_SOURCE_DIR "/tests/fuzz/seeds/nccltests/min.json");

		cr_expect_eq(st, CVC_OK, "%s: status %d: %s", fz_target_name(ts[i]), (int)st,
			     fz_state()->msg);
	}
	fz_cleanup();
}
