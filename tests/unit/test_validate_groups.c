/*
 * test_validate_groups.c - `cvc validate --by`: the summary per value of a
 * column, and per software stack and release the rows' text names.
 */
#include <stdlib.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

Test(validate_groups, by_groups_and_bad_convention)
{
	const char *text = "layers,hidden,heads,global_batch,gpus,tp,pp,seq,iter_s,site\n"
			   "24,2048,16,512,8,1,1,2048,1.0,a\n24,2048,16,512,8,1,1,2048,2.0,b\n"
			   "24,2048,16,512,8,1,1,2048,3.0,a\n24,2048,16,512,8,1,1,2048,3.0, A? \n"
			   "24,2048,16,512,8,1,1,2048,3.0,a (b)\n";
	cvc_proj_validate_opts by = {NULL, "site", 0}, bad = {"flopz", NULL, 0}, nocol = {NULL, "x", 0};
	cvc_proj_validation v;
	char *out = tu_validate_text(text, &by, &v, CVC_OK);

	/* case, spaces and a guess's '?' say nothing of the value; other words do */
	cr_assert_eq(v.ngroups, 3);
	cr_expect_str_eq(v.groups[0].key, "a");
	cr_expect_eq(v.groups[0].st.rows, 3);
	cr_expect_str_eq(v.groups[2].key, "a (b)");
	cr_expect_eq(v.groups[1].st.expressible, 1);
	free(out);
	cvc_proj_validation_release(&v);
	out = tu_validate_text(text, &bad, &v, CVC_ERR_USAGE);
	free(out);
	out = tu_validate_text(text, &nocol, &v, CVC_ERR_USAGE);
	free(out);
}

/*
 * Claim: --by stack groups rows by the stack and the release month their
 * text names (sub-releases join their month; a stack without a date, and
 * a date without a stack, are groups of their own), and a file's own
 * 'stack' column wins over the one read.
 */
Test(validate_groups, by_stack_groups_by_the_release_a_row_names)
{
	const char *text =
		"layers,hidden,heads,global_batch,gpus,tp,pp,seq,iter_s,source,notes\n"
		"24,2048,16,512,8,1,1,2048,1.0,Megatron-Bridge performance summary,"
		"Release 25.09 NeMo container\n"
		"24,2048,16,512,8,1,1,2048,2.0,Megatron-Bridge performance summary,"
		"Release 26.06.01 NeMo container\n"
		"24,2048,16,512,8,1,1,2048,3.0,Megatron-Bridge performance summary,"
		"Release 26.06 NeMo container\n"
		"24,2048,16,512,8,1,1,2048,3.0,torchtitan benchmarks,\n"
		"24,2048,16,512,8,1,1,2048,3.0,a paper,arXiv 2104.04473\n";
	const char *own = "layers,hidden,heads,global_batch,gpus,tp,pp,seq,iter_s,notes,stack\n"
			  "24,2048,16,512,8,1,1,2048,1.0,Release 25.09 NeMo container,x\n";
	cvc_proj_validate_opts by = {NULL, "stack", 0}, nocol = {NULL, "release", 0};
	cvc_proj_validation v;
	char *out = tu_validate_text(text, &by, &v, CVC_OK);

	cr_assert_eq(v.ngroups, 4, "%s", out);
	cr_expect_str_eq(v.groups[0].key, "Megatron-Bridge 2025-09 (release 25.09)");
	cr_expect_eq(v.groups[0].st.rows, 1);
	cr_expect_str_eq(v.groups[1].key, "Megatron-Bridge 2026-06 (release 26.06)");
	cr_expect_eq(v.groups[1].st.rows, 2);
	cr_expect_eq(v.groups[1].st.expressible, 2);
	cr_expect_str_eq(v.groups[2].key, "torchtitan, undated");
	cr_expect_str_eq(v.groups[3].key, "no stack named 2021-04 (arxiv 2104.04473)");
	free(out);
	cvc_proj_validation_release(&v);
	out = tu_validate_text(own, &by, &v, CVC_OK);
	cr_assert_eq(v.ngroups, 1, "%s", out);
	cr_expect_str_eq(v.groups[0].key, "x");
	free(out);
	cvc_proj_validation_release(&v);
	out = tu_validate_text(text, &nocol, &v, CVC_ERR_USAGE);
	free(out);
}
