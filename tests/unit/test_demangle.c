/*
 * test_demangle.c - `cvc profile` stores a kernel under the name Kineto and
 * Nsight Systems give it (profiler/demangle.c).  The names are from one
 * PyTorch step recorded twice on an H200 (docs/GPU-VALIDATION.md): CUPTI's
 * symbol as cvc's spool held it, and the text torch.profiler's trace held.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_profile.h"
#include "profiler/demangle.h"
#include "testutil.h"

static const struct {
	const char *cupti, *kineto;
} seen[] = {
	{"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIfffNS0_15binary_"
	 "internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_",
	 "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, "
	 "float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, "
	 "at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<"
	 "float> >, std::array<char*, 2ul>)"},
	{"_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a39layer_norm_grad_"
	 "input_kernel_vectorizedIN3c108BFloat16EfLb0EEEvPKT_S7_PKT0_SA_S7_PS5_i",
	 "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::"
	 "BFloat16, float, false>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float "
	 "const*, c10::BFloat16 const*, c10::BFloat16*, int)"},
};

Test(demangle, cupti_symbols_read_as_kineto_stores_them)
{
	for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++) {
		char *d = NULL;

		cr_assert_eq(prof_demangle_new(seen[i].cupti, strlen(seen[i].cupti), &d), CVC_OK);
		cr_assert(d, "%s was not demangled", seen[i].cupti);
		cr_expect_str_eq(d, seen[i].kineto);
		free(d);
	}
}

/* Names that are no symbol stay as they are: extern "C" kernels (cuBLAS's
 * nvjet), CUPTI's copy names, a "_Z" prefix that is no mangling, and the
 * length is honoured (no NUL is read past it). */
Test(demangle, other_names_are_kept)
{
	static const char *const keep[] = {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
					   "Memcpy HtoD", "_Z", "_Zombie_kernel", ""};
	const char *longer = "_Z3foovTRAILING";
	char *d = (char *)1;

	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
		cr_assert_eq(prof_demangle_new(keep[i], strlen(keep[i]), &d), CVC_OK);
		cr_expect_null(d, "'%s' became '%s'", keep[i], d ? d : "");
		free(d);
	}
	cr_assert_eq(prof_demangle_new(longer, 7, &d), CVC_OK); /* "_Z3foov" */
	cr_assert(d);
	cr_expect_str_eq(d, "foo()");
	free(d);
}

/* Through the real spool and materializer: the kernel's row is named as
 * Kineto names it, and a copy keeps its own name. */
Test(demangle, materialized_kernels_carry_the_readable_name)
{
	static const char *const strs[] = {NULL, "Memcpy HtoD"};
	struct cvc_spool_act k = {0}, c = {0};
	cvc_materialize_stats ms;
	char spool[4200], db[4200], err[1024] = "";
	cvc_spool *sp = tu_spool_begin(spool, db);
	cvc_db *h = NULL;
	sqlite3_stmt *q = NULL;
	cvc_status st;
	int n = 0;

	for (unsigned i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		const char *s = strs[i] ? strs[i] : seen[1].cupti;

		cr_assert_eq(cvc_spool_put_str(sp, i + 4, s, strlen(s)), CVC_OK);
	}
	k.kind = CVC_ACT_KERNEL, k.start_ns = 1000000, k.end_ns = 1005000, k.name_sid = 4;
	c.kind = CVC_ACT_MEMCPY, c.start_ns = 1006000, c.end_ns = 1007000, c.name_sid = 5;
	c.bytes = 4096, c.copy_kind = 1;
	cr_assert_eq(cvc_spool_put(sp, CVC_SPOOL_ACT, &k, sizeof k), CVC_OK);
	cr_assert_eq(cvc_spool_put(sp, CVC_SPOOL_ACT, &c, sizeof c), CVC_OK);
	cr_assert_eq(cvc_spool_close(sp), CVC_OK);
	st = cvc_profile_materialize(spool, db, &ms, err, sizeof err);
	cr_assert_eq(st, CVC_OK, "status %d: %s", st, err);
	cr_assert_eq(cvc_db_open(db, 0, &h), CVC_OK);
	cr_assert_eq(sqlite3_prepare_v2(cvc_db_sqlite(h),
					"SELECT a.kind, s.value FROM activities a JOIN strings s "
					"ON s.id = a.name_id ORDER BY a.start_ns", -1, &q, NULL),
		     SQLITE_OK);
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(q, 1);

		cr_expect_str_eq(name, n == 0 ? seen[1].kineto : "Memcpy HtoD");
		n++;
	}
	cr_expect_eq(n, 2, "%d activities", n);
	sqlite3_finalize(q);
	cvc_db_close(h);
}
