/*
 * test_vfloor.c - the floor a validation table's repeated scenarios set
 * (projector/vfloor.c): rows projected alike but measured apart leave
 * error no projection from what they state can remove.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "cvc/cvc_project.h"
#include "projector/vrow.h"
#include "testutil.h"

/*
 * Claim: per set of equal projections the floor is the least sum of
 * |x - m| / m over one figure x, found at one of the set's measurements
 * (a weighted median), whatever the order the rows come in; a set whose
 * measurements agree adds nothing; lone rows make no set.
 * Setup: projections 1, 2, 1, 3, 2, 1 (three sets: {1: 100, 50, 200},
 * {2: 10, 10}, {3: 7} alone), shuffled.
 * Tolerance: exact to 1e-9: set {100, 50, 200} is best at x = 50
 * (0.5 + 0 + 0.75 = 1.25, where x = 100 gives 0 + 1 + 0.5 = 1.5 and
 * x = 200 gives 1 + 3 + 0 = 4): 125%; set {10, 10} adds 0.
 */
Test(vfloor, weighted_median_of_each_set)
{
	struct vpair a[] = {{1, 100}, {2, 10}, {1, 50}, {3, 7}, {2, 10}, {1, 200}};
	int sets = -1, shared = -1;
	double sum = vfloor_sum(a, sizeof a / sizeof a[0], &sets, &shared);

	cr_expect_eq(sets, 2);
	cr_expect_eq(shared, 5);
	cr_expect_float_eq(sum, 125.0, 1e-9);
	sum = vfloor_sum(a, 0, &sets, &shared);
	cr_expect_eq(sets, 0);
	cr_expect_eq(shared, 0);
	cr_expect_float_eq(sum, 0, 1e-12);
}

/*
 * Claim: rows that read as the same scenario but were measured apart set a
 * floor no projection from what they state can beat: per such set, the
 * least MAPE of one figure (found at one of its measurements), 0 for the
 * other rows, over the projected rows; per --by group the same within it.
 * Setup: one layout measured at 1, 2 and 3 s a step (131072, 65536 and
 * 43690.7 tokens/s per GPU) and another layout once.
 * Tolerance: exact to 0.01 point: the best figure for the three is 65536
 * or 43690.7 (sum of relative errors 1.0 either way, where 131072 gives 3),
 * 100/4 = 25% over the four rows; site a's pair {1 s, 3 s} 2/3 over its
 * two rows; the lone rows no set.  And the floor is never above the MAPE.
 */
Test(vfloor, repeated_scenarios_in_a_table)
{
	const char *text = "layers,hidden,heads,global_batch,gpus,tp,pp,seq,iter_s,site\n"
			   "24,2048,16,512,8,1,1,2048,1.0,a\n24,2048,16,512,8,1,1,2048,2.0,b\n"
			   "24,2048,16,512,8,1,1,2048,3.0,a\n32,4096,32,512,8,2,1,2048,4.0,c\n";
	cvc_proj_validate_opts by = {NULL, "site", 0};
	cvc_proj_validation v;
	char *out = tu_validate_text(text, &by, &v, CVC_OK);

	cr_assert_eq(v.all.expressible, 4, "%s", out);
	cr_expect_eq(v.all.repeat_sets, 1);
	cr_expect_eq(v.all.repeat_rows, 3);
	cr_expect_float_eq(v.all.floor_pct, 100.0 / 4, 0.01);
	cr_expect_leq(v.all.floor_pct, v.all.mape_pct);
	cr_assert_eq(v.ngroups, 3);
	cr_expect_eq(v.groups[0].st.repeat_sets, 1);
	cr_expect_eq(v.groups[0].st.repeat_rows, 2);
	cr_expect_float_eq(v.groups[0].st.floor_pct, 100.0 * (2.0 / 3) / 2, 0.01);
	for (int g = 1; g < 3; g++) {
		cr_expect_eq(v.groups[g].st.repeat_sets, 0);
		cr_expect_float_eq(v.groups[g].st.floor_pct, 0, 1e-9);
	}
	free(out);
	cvc_proj_validation_release(&v);
}
