#!/bin/sh
# columns.sh - docs/COLUMNS.md is what `cvc help columns --format md` writes
# from the writers' own dictionaries (projector/coldoc.c, reports/coldoc.c,
# cli/coldoc.c): a column added or changed there without regenerating the
# file fails here.  Regenerate: cvc help columns --format md > docs/COLUMNS.md
#
#   columns.sh CVC SOURCE_DIR
cvc=$1 src=$2
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT
"$cvc" help columns --format md > "$out" || { echo "columns: cvc help columns failed"; exit 1; }
if ! diff -u "$src/docs/COLUMNS.md" "$out"; then
	echo "columns: docs/COLUMNS.md differs from 'cvc help columns --format md' (regenerate it)"
	exit 1
fi
echo "columns: docs/COLUMNS.md is the writers' dictionary"
