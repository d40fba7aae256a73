#!/bin/sh
# Golden CLI cases: each tests/cli/*.t file holds
#   args: <arguments to cvc>          (one line; $SHARED, $TMP and $CASES, this
#                                      folder, are expanded)
#   exit: <expected exit code>
#   stdout: / stderr: <lines that must appear, as fixed strings, one per line>
# A case whose args mention $SHARED is skipped when ../shared is absent.
cvc=$1 dir=$2 SHARED=$3
CASES=$(cd "$dir" && pwd)
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
export SHARED TMP CASES
pass=0 fail=0 skip=0
for t in "$dir"/*.t; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .t)
	args=$(sed -n 's/^args: //p' "$t")
	want=$(sed -n 's/^exit: //p' "$t")
	case "$args" in *'$SHARED'*) [ -d "$SHARED/traces" ] || { skip=$((skip+1)); echo "skip: $name (no ../shared)"; continue; } ;; esac
	(cd "$TMP" && eval "\"$cvc\" $args") >"$TMP/out" 2>"$TMP/err"
	got=$?
	ok=1
	[ "$got" = "$want" ] || { echo "FAIL: $name: exit $got, want $want"; ok=0; }
	sed -n 's/^stdout: //p' "$t" | while IFS= read -r line; do
		grep -qF -- "$line" "$TMP/out" || { echo "FAIL: $name: stdout lacks '$line'"; exit 1; }
	done || ok=0
	sed -n 's/^stderr: //p' "$t" | while IFS= read -r line; do
		grep -qF -- "$line" "$TMP/err" || { echo "FAIL: $name: stderr lacks '$line'"; exit 1; }
	done || ok=0
	if [ $ok = 1 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "--- stdout"; head -20 "$TMP/out"; echo "--- stderr"; head -20 "$TMP/err"; fi
done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
