#!/bin/sh
# outputs.sh - every file cvc writes for a user goes through the output
# module (db/out.c, include/cvc/cvc_out.h; issue 36): no fopen/fdopen in a
# write mode, no open(2) that creates, truncates or writes, no creat(2),
# rename(2) or mkstemp(3) anywhere else in the library, the tool or the
# profiler, unless the line (or one of the three above it) says why with
# "lint-out:" (a database SQLite writes in place, a private temporary file,
# the profiler's own spool).  Tests and benchmarks are not cvc: they are not
# checked.
#
# A call this script cannot read on its line is flagged too: an fopen whose
# mode is no "r..." literal there (a mode in a variable, or on the next
# line), an open whose flags are not there.  Whoever writes one says why
# with lint-out: or puts the mode on the line.
#
#   outputs.sh SOURCE_DIR
#   outputs.sh --self-test      plants each form in a scratch tree and checks
#                               that every one is found, and nothing else
set -u

# Prints one line per offending call in the files named; exit 1 when any.
scan() {
	bad=0
	for f in "$@"; do
		[ "$f" = db/out.c ] && continue
		awk -v f="$f" 'BEGIN { said = -10 }
		/lint-out:/ { said = NR }
		# comment lines name calls without making them
		/^[ \t]*(\/\/|\/?\*)/ { next }
		/(^|[^_a-z])f(d|re)?open[ \t]*\(/ && !/f(d|re)?open[ \t]*\([^;]*"r[be]*"/ ||
		/(^|[^_a-z])(open|open64|openat)[ \t]*\(/ &&
			(/O_(WRONLY|RDWR|CREAT|TRUNC|APPEND)/ || !/O_RDONLY/) ||
		/(^|[^_a-z])creat(64)?[ \t]*\(/ || /(^|[^_a-z.>])rename(at2?)?[ \t]*\(/ ||
		/mk(o?s?)temps?[ \t]*\(/ {
			if (NR - said > 3) {
				printf "outputs: %s:%d: writes a file outside db/out.c (cvc_out_open); " \
				       "if it must, say why with a lint-out: comment\n    %s\n", f, NR, $0
				bad = 1
			}
		}
		END { exit bad }
		' "$f" || bad=1
	done
	return $bad
}

if [ "${1:-}" = --self-test ]; then
	t=$(mktemp -d) || exit 2
	trap 'rm -rf "$t"' EXIT
	mkdir -p "$t/db"
	# each line below must be found: one call per line
	cat > "$t/db/bad.c" <<'EOF'
	FILE *a = fopen(path, "w");
	FILE *b = fopen(path, "wb");
	FILE *c = fopen(path, "a+");
	FILE *d = fopen(path, "we");
	FILE *e = fopen(path, mode);
	FILE *g = fopen(path,
	FILE *h = fdopen(fd, "w");
	FILE *i = freopen(path, "w", stdout);
	int j = open(path, O_WRONLY | O_CREAT, 0644);
	int k = openat(dirfd, name, O_RDWR);
	int l = open(path,
	int m = creat(path, 0644);
	if (rename(tmp, path))
	if (renameat(dfd, tmp, dfd, path))
	int n = mkstemp(buf);
	int o = mkostemp(buf, O_CLOEXEC);
EOF
	# none of these may be found
	cat > "$t/db/good.c" <<'EOF'
	FILE *a = fopen(path, "r");
	FILE *b = fopen(path, "rb");
	FILE *c = fopen(path, "re");
	int d = open(path, O_RDONLY | O_CLOEXEC);
	/* fopen(path, "w") in a comment names no call */
	 * open(path, O_WRONLY) in a comment block
	/* lint-out: a private file, made here on purpose */
	int e = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	int f = sqlite3_open_v2(path, &sq, flags, NULL);
	int g = cvc_out_rename(x);
EOF
	want=$(grep -c . "$t/db/bad.c")
	got=$(cd "$t" && scan db/bad.c | grep -c '^outputs:')
	fine=$(cd "$t" && scan db/good.c | grep -c '^outputs:')
	if [ "$got" != "$want" ] || [ "$fine" != 0 ]; then
		echo "outputs: self-test: found $got of $want planted writes, $fine false alarms"
		(cd "$t" && scan db/bad.c db/good.c)
		exit 1
	fi
	echo "outputs: self-test: all $want planted writes found, no false alarm"
	exit 0
fi

src=${1:-.}
cd "$src" || exit 2
files=$(find db profiler analysis models projector reports cli include \
	\( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -type f 2>/dev/null | sort)
[ -n "$files" ] || { echo "outputs: no sources found under $src"; exit 2; }
# shellcheck disable=SC2086 # the paths come from find over our own tree
scan $files || exit 1
echo "outputs: every file written for a user goes through db/out.c"
exit 0
