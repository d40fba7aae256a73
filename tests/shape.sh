#!/bin/sh
# shape.sh - small files with one job each (issue 15, ../shared/STYLE.md):
# fails when a C or CUDA source file of the repository is over MAX_FILE lines
# or holds a function body over MAX_FN lines.  A function is what the house
# style writes: its opening brace alone in column 0, its closing brace in
# column 0; its length is counted from the first line of its signature.
#
#   shape.sh SOURCE_DIR
set -u
src=${1:-.}
cd "$src" || exit 2
MAX_FILE=1000
MAX_FN=150

files=$(find db profiler analysis models projector reports cli include tests bench examples \
	\( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -type f 2>/dev/null | sort)
[ -n "$files" ] || { echo "shape: no sources found under $src"; exit 2; }
bad=0
for f in $files; do
	awk -v f="$f" -v maxfile=$MAX_FILE -v maxfn=$MAX_FN '
	# The signature starts at the last line before the brace that begins in
	# column 0 with something other than a brace or a comment.
	/^[A-Za-z_]/ && !/^[{}]/ { sig = NR; name = $0 }
	/^\{/ { if (start == 0) { start = sig ? sig : NR; fname = name } }
	/^\}/ {
		if (start) {
			n = NR - start + 1
			if (n > maxfn) {
				sub(/\(.*/, "", fname)
				printf "shape: %s:%d: %s is %d lines (at most %d)\n", f, start, fname, n, maxfn
				bad = 1
			}
			start = 0
		}
	}
	END {
		if (NR > maxfile) {
			printf "shape: %s is %d lines (at most %d): split it by job\n", f, NR, maxfile
			bad = 1
		}
		exit bad
	}' "$f" || bad=1
done
[ $bad = 0 ] && echo "shape: every file is at most $MAX_FILE lines, every function at most $MAX_FN"
exit $bad
