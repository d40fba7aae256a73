/*
 * test_vnotes.c - what validate says it assumed for a row (vrow.c
 * vrow_note): notes past the room are cut, and the cut says so, so a
 * planner never reads a cut note as a whole one.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "projector/vrow.h"

/*
 * Claim: notes that fit are kept whole, "; "-separated; once they pass the
 * room the last one is cut, the notes end with VROW_NOTES_CUT, and later
 * notes add nothing.
 */
Test(vnotes, past_the_room_the_cut_is_said)
{
	static struct vrow r;
	char note[301];
	size_t len;

	memset(note, 'x', sizeof note - 1);
	note[sizeof note - 1] = 0;
	vrow_start(&r, 0, -1);
	vrow_note(&r, "first=%d", 1);
	vrow_note(&r, "second=%s", "two");
	cr_expect_str_eq(r.assumed, "first=1; second=two");
	for (int i = 0; i < 40; i++)
		vrow_note(&r, "n%02d=%s", i, note);
	len = strlen(r.assumed);
	cr_expect_lt(len, sizeof r.assumed);
	cr_expect_geq(len, sizeof r.assumed - sizeof VROW_NOTES_CUT - 1);
	cr_expect(len > strlen(VROW_NOTES_CUT) &&
			  !strcmp(r.assumed + len - strlen(VROW_NOTES_CUT), VROW_NOTES_CUT),
		  "ends: %s", r.assumed + len - 60);
	cr_expect(strstr(r.assumed, "; n00=xxx"), "the first long note whole");
	vrow_note(&r, "later=%d", 3);
	cr_expect_eq(strlen(r.assumed), len, "a note after the cut adds nothing");
	cr_expect(!strstr(r.assumed, "later="));
}
