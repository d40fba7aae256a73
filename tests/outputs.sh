#!/bin/sh
# outputs.sh - every file cvc writes for a user goes through the output
# module (db/out.c, include/cvc/cvc_out.h; issue 36): no fopen(..., "w" or
# "a"), no open(2) that creates, truncates or writes, no creat(2), rename(2)
# or mkstemp(3) anywhere else in the library, the tool or the profiler,
# unless the line (or one of the three above it) says why with "lint-out:" (a
# database SQLite writes in place, a private temporary file, the profiler's
# own spool).  Tests and benchmarks are not cvc: they are not checked.
#
#   outputs.sh SOURCE_DIR
set -u
src=${1:-.}
cd "$src" || exit 2

files=$(find db profiler analysis models projector reports cli include \
	\( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -type f 2>/dev/null | sort)
[ -n "$files" ] || { echo "outputs: no sources found under $src"; exit 2; }
bad=0
for f in $files; do
	[ "$f" = db/out.c ] && continue
	awk -v f="$f" 'BEGIN { said = -10 }
	# A write-mode fopen, a creating or writing open, creat, rename, mkstemp.
	/fopen[ \t]*\([^;]*"[wa][b+]*"/ || /freopen[ \t]*\(/ || \
	/[^_a-z]open[ \t]*\([^;]*O_(WRONLY|RDWR|CREAT|TRUNC|APPEND)/ || \
	/(^|[^_a-z])creat[ \t]*\(/ || /(^|[^_a-z.>])rename[ \t]*\(/ || /mkstemp[ \t]*\(/ {
		if ($0 !~ /lint-out:/ && NR - said > 3) {
			printf "outputs: %s:%d: writes a file outside db/out.c (cvc_out_open); " \
			       "if it must, say why with a lint-out: comment\n    %s\n", f, NR, $0
			bad = 1
		}
	}
	/lint-out:/ { said = NR }
	END { exit bad }
	' "$f" || bad=1
done
[ $bad = 0 ] && echo "outputs: every file written for a user goes through db/out.c"
exit $bad
