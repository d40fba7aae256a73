#!/bin/sh
# docrefs.sh - what the docs name must exist (docs/ARCHITECTURE.md: "keep it
# true").  The docs cite tests, files, functions, commands and tables by
# name; a rename in the code leaves the doc pointing at nothing and no
# compiler says so.  This fails, naming doc:line and the reference, when
#
#   test      a `suite.test` whose suite is a Criterion suite of tests/unit
#             is not a Test() of that suite; a `unit.X`, `lint.X`, `cli.X`,
#             `valgrind.X` or `fuzz.X` is not a ctest the build registers;
#             `unit.X` `name`, `name2` (or a table of names under a heading
#             naming `unit.X`): a name that is no Test() in test_X.c;
#             `cli` `name`: no golden case tests/cli/name.t
#   path      a path under one of the repository's top folders, or under
#             ../shared (when it is there), is not in the tree (globs must
#             match something; <PLACEHOLDER> paths are skipped)
#   file      a bare `name.c`-style file (.c .h .sql .sh .cmake .js .rules)
#             is nowhere in the tree; in ARCHITECTURE.md's module table,
#             not under that row's folder
#   symbol    a `cvc_*`, `proj_*` (and the other prefixes below) identifier
#             or `name()` is not defined: no function definition, macro,
#             type or enumerator of that name in a .c/.h/.cu file; an
#             upper-case CVC_/PROJ_/SIG_ name does not occur in the code
#   command   a `cvc VERB` in a code block or a code span names a verb
#             `cvc help` does not list, or a flag `cvc VERB --help` does not
#             list (tokens after a lone --, a pipe, a redirection or a #
#             comment are the other program's or prose)
#   section   a docs/X.md "Heading" reference has no heading containing it
#   table     ARCHITECTURE.md "Who owns which table" lists a table that no
#             db/*.sql creates, or leaves out one that is created
#   span      a code span broken across lines inside a name (a line ending
#             in `_` inside `...`): Markdown renders the break as a space
#
# Left out, because prose cannot be told from a reference reliably: names
# outside code spans, lower-case identifiers without a project prefix (YAML
# fields, CSV columns and other projects' functions look the same), a flag
# cited without its verb, CSV column names (docs/COLUMNS.md is generated and
# checked by lint.columns), and what a reference claims about its target.
#
#   docrefs.sh CVC SOURCE_DIR [SHARED_DIR]
#   docrefs.sh --self-test CVC SOURCE_DIR   (each planted reference is found)
set -u
if [ "${1:-}" = --self-test ]; then
	# One dangling reference a line, each of a different kind, then a line
	# of good ones: the check must name every planted line and no other.
	doc=$(mktemp) || exit 2
	trap 'rm -f "$doc"' EXIT
	cat > "$doc" <<'EOF'
`moerun.no_such_test_of_moerun`
`unit.no_such_test_file`
`unit.moerun` `no_such_test_in_moerun`
`cli` `no_such_golden_case`
see projector/no_such_file.c
`no_such_file.c`
`cvc_no_such_function()`
`CVC_NO_SUCH_WORD`
`cvc nosuchverb --db x.db`
`cvc project --no-such-flag`
docs/MODELS.md "No such heading or title"
a span broken `inside_a_
name`
```sh
cvc project --top 5 --no-such-flag-in-a-block
```
`moerun.deepseek_v3_chunk_pair_against_its_trace`, projector/moe.c, `proj_op_ep`, `cvc project --top 5`, docs/MODELS.md "Validation", `unit.moerun` `dualpipe_schedule`, `cli` `project_csv_formula_name`
EOF
	out=$(DOCREFS_DOCS=$doc sh "$0" "$2" "$3" /nonexistent)
	found=$(printf '%s\n' "$out" | sed -n "s|^docrefs: $doc:\([0-9]*\):.*|\1|p" | sort -un | tr '\n' ' ')
	want='1 2 3 4 5 6 7 8 9 10 11 12 15 '
	[ "$found" = "$want" ] && { echo "docrefs: self-test: every planted reference found"; exit 0; }
	printf '%s\n' "$out"
	echo "docrefs: self-test: lines flagged '$found', planted '$want'"
	exit 1
fi
cvc=$1 src=$2 shared=${3:-$2/../shared}
case $cvc in /*) ;; */*) cvc=$PWD/$cvc ;; esac
case $shared in /*) ;; *) shared=$PWD/$shared ;; esac
cd "$src" || exit 2
[ -d "$shared" ] || shared=
tmp=$(mktemp -d) || exit 2
trap '[ -n "${DOCREFS_KEEP:-}" ] && cp -r "$tmp" "$DOCREFS_KEEP"; rm -rf "$tmp"' EXIT

# DOCREFS_DOCS: the self-test's planted document instead of the docs.
docs=${DOCREFS_DOCS:-}
if [ -z "$docs" ]; then
	docs="README.md bench/README.md examples/README.md"
	for d in docs/*.md; do docs="$docs $d"; done
fi
tops='db profiler analysis models projector reports cli include tests bench examples docs cmake .ci'
srcs=$(find $tops -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) 2>/dev/null | sort)

# ---- what exists -------------------------------------------------------------
# Criterion tests: Test(suite, name, ...), the name possibly on the next line.
for f in tests/unit/*.c tests/unit/cuda/*.c; do
	u=${f##*/test_}; u=${u%.c}
	awk -v u="$u" '/^(Test|ParameterizedTest|Theory)\(/ {
		l = $0
		while (l !~ /^[A-Za-z]+\([^,]*,[^,)]*[,)]/ && (getline nx) > 0) l = l nx
		sub(/^[A-Za-z]+\(/, "", l); split(l, a, ",")
		s = a[1]; t = a[2]; gsub(/[ \t)]/, "", s); gsub(/[ \t)]/, "", t)
		print s "." t, u
	}' "$f"
done > "$tmp/tests_of"
cut -d' ' -f1 "$tmp/tests_of" | sort -u > "$tmp/tests"
cut -d. -f1 "$tmp/tests" | sort -u > "$tmp/suites"
# unit.X names the file tests/unit/test_X.c: "U NAME" for each Test in it
awk '{ n = $1; sub(/^[^.]*\./, "", n); print $2, n }' "$tmp/tests_of" | sort -u > "$tmp/tests_in"
# ctest names: unit.X per tests/unit/test_X.c (CMakeLists.txt's glob), the
# literal add_test(NAME ...) of every CMake file, fuzz.X per CVC_FUZZ_TARGETS.
{
	for f in tests/unit/test_*.c; do
		f=${f##*/test_}; echo "unit.${f%.c}"
	done
	find . -name 'build*' -prune -o \( -name CMakeLists.txt -o -name '*.cmake' \) -type f \
		-exec sed -n 's/.*add_test(NAME \([A-Za-z0-9_.]*\) .*/\1/p' {} + | grep -v '\$'
	find . -name 'build*' -prune -o -name '*.cmake' -type f -exec awk '
		/set\(CVC_FUZZ_TARGETS/ { on = 1; sub(/.*CVC_FUZZ_TARGETS/, "") }
		on { n = split($0, w, /[ \t)]+/); for (i = 1; i <= n; i++) if (w[i] != "") print "fuzz." w[i]
		     if ($0 ~ /\)/) on = 0 }' {} +
} | sort -u > "$tmp/ctests"
# Basenames of the tree, for bare file names.
find $tops CMakeLists.txt Makefile -type f 2>/dev/null | sed 's|.*/||' | sort -u > "$tmp/basenames"
# C names defined: a function (its name and '(' on a line starting in column
# 0, the house style), a macro, a struct/enum/typedef name, an enumerator.
# shellcheck disable=SC2086
awk '
	/^[A-Za-z_][^;=]*[ *]?[A-Za-z_][A-Za-z0-9_]*\(/ && !/^(return|if|for|while|switch)\b/ {
		l = $0; sub(/\(.*/, "", l); n = split(l, w, /[ *]+/); print w[n] }
	/^#[ \t]*define[ \t]+[A-Za-z_]/ { l = $0; sub(/^#[ \t]*define[ \t]+/, "", l); sub(/[^A-Za-z0-9_].*/, "", l); print l }
	/^(typedef[ \t]+)?(struct|enum|union)[ \t]+[A-Za-z_]/ { print $2 == "struct" || $2 == "enum" || $2 == "union" ? $3 : $2 }
	/^}[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*;/ { l = $0; gsub(/[} \t;]/, "", l); print l }
	/^typedef[^;(]*[ *][A-Za-z_][A-Za-z0-9_]*;/ { l = $0; sub(/;.*/, "", l); n = split(l, w, /[ *]+/); print w[n] }
	/^[ \t]+[A-Z][A-Z0-9_]*[ \t]*(=[^,]*)?,?[ \t]*(\/\*.*)?$/ { l = $0; gsub(/[ \t]/, "", l); sub(/[=,\/].*/, "", l); print l }
	/^[ \t]+[a-z_][a-z0-9_]*[ \t]*,?[ \t]*$/ { l = $0; gsub(/[ \t,]/, "", l); print l }
' $srcs > "$tmp/defs0"
# ... and what the code writes under a name (a JSON key, a report table, a
# "cvc_version" member) or builds under one (an executable, a library).
grep -ohE '"[a-z_][a-z0-9_]*"' $srcs | tr -d '"' >> "$tmp/defs0"
find . -name 'build*' -prune -o \( -name CMakeLists.txt -o -name '*.cmake' \) -type f \
	-exec sed -n 's/.*add_\(executable\|library\)(\([A-Za-z0-9_]*\).*/\2/p' {} + >> "$tmp/defs0"
sort -u "$tmp/defs0" > "$tmp/defs"
# Every word of the code and the build, for upper-case names (macros, but
# also environment variables and CMake cache entries the code reads).
# (not this file: its self-test plants names that exist nowhere else)
find $tops CMakeLists.txt Makefile -type f ! -name '*.md' ! -name docrefs.sh -exec cat {} + 2>/dev/null |
	tr -c 'A-Za-z0-9_' '\n' | grep -E '^(CVC|PROJ|SIG)_' | sort -u > "$tmp/words"
# Commands and their flags, as cvc itself lists them.
"$cvc" help > "$tmp/help" 2>&1 || { echo "docrefs: '$cvc help' failed"; exit 2; }
verbs=$(sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' "$tmp/help")
[ -n "$verbs" ] || { echo "docrefs: no commands in '$cvc help'"; exit 2; }
for v in $verbs; do
	"$cvc" "$v" --help 2>&1 | sed '/^examples:/,$d' | tr -s ' ,[]|=' '\n' |
		grep -E '^--?[A-Za-z][A-Za-z0-9-]*$' | sed "s/^/$v /"
	echo "$v --help"; echo "$v -h"
done | sort -u > "$tmp/flags"
printf '%s\n' $verbs help > "$tmp/verbs"
# Tables: what db/*.sql creates.
sed -n 's/.*CREATE TABLE \(IF NOT EXISTS \)\{0,1\}\([a-z_]*\).*/\2/p' db/*.sql | sort -u > "$tmp/tables"

# ---- what the docs cite ------------------------------------------------------
# One record per reference: DOC LINE KIND REF.  Code spans are read across a
# line break (as Markdown does); fenced blocks line by line.
# shellcheck disable=SC2086
awk -v tops="$tops" '
function emit(kind, ref) { printf "%s\t%d\t%s\t%s\n", FILENAME, at, kind, ref }
function paths(s,    t, p) {
	# A path starts at a top folder or at ../shared, not inside another path or URL.
	t = " " s
	while (match(t, /[^A-Za-z0-9_.\/~-](\.\.\/shared|\/work\/shared|db|profiler|analysis|models|projector|reports|cli|include|tests|bench|examples|docs|cmake|\.ci)\/[A-Za-z0-9_.\/*<>{}+-]*/)) {
		p = substr(t, RSTART + 1, RLENGTH - 1); t = substr(t, RSTART + RLENGTH)
		sub(/[.,:;]+$/, "", p)
		emit("path", p)
	}
}
function cmds(s, span,    n, w, i, v, j) {
	n = split(s, w, /[ \t]+/)
	for (i = 1; i <= n; i++) {
		if (w[i] != "cvc" && w[i] !~ /\/cvc$/) continue
		if (i > 1 && w[i - 1] !~ /^(\$|\||;|&&|\(|srun|sudo|exec|time|env|valgrind|[A-Z_]+=.*|[0-9]+|--?[a-zA-Z-]+)$/) continue
		v = w[i + 1]
		if (v == "" || v !~ /^[a-z][a-z-]*$/) { if (!span) emit("verb", v); continue }
		emit("verb", v)
		for (j = i + 2; j <= n; j++) {
			if (w[j] ~ /^(\||>|>>|<|;|&&|#|--|\)|2>.*|>.*)$/ || w[j] ~ /^#/) break
			if (w[j] ~ /^--?[A-Za-z][A-Za-z0-9-]*(=.*)?$/) { f = w[j]; sub(/=.*/, "", f); emit("flag", v " " f) }
		}
		i = j
	}
}
function spans(s,    c, gap) {
	chain = ""
	while (match(s, /`[^`]+`/)) {
		c = substr(s, RSTART + 1, RLENGTH - 2); gap = substr(s, 1, RSTART - 1); s = substr(s, RSTART + RLENGTH)
		# `unit.X` `a_test`, `another`: names of tests in tests/unit/test_X.c;
		# `cli` `a_case`: golden cases, tests/cli/a_case.t
		if (chain != "" && gap ~ /^[ ,]*(and )?$/ && c ~ /^[a-z][a-z0-9_]*_[a-z0-9_]+$/) {
			if (chain == "cli") emit("path", "tests/cli/" c ".t"); else emit("testin", chain " " c)
			continue
		}
		chain = ""
		if (c ~ /^unit\.[a-z0-9_]+$/) chain = substr(c, 6)
		if (c == "cli") chain = "cli"
		if (c ~ /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/ && c !~ ext) emit("test", c)
		if (c ~ /^[A-Za-z0-9_+-]+\.(c|h|sql|sh|cmake|js|rules|cu)$/) emit("file", c)
		if (c ~ /^(cvc|cvci|proj|rep|cli|opm|imp|mat|kin|vrow|vtext|vrecipe|tu|fz|cmd)_[a-z0-9_]*(\(\))?$/) { sub(/\(\)$/, "", c); emit("symbol", c) }
		if (c ~ /^(CVC|PROJ|SIG)_[A-Z0-9_]*$/) emit("word", c)
		if (c ~ /^(cvc|cvci|proj)_[a-z0-9_]+\.[a-z_]+$/ && c !~ ext) { emit("symbol", substr(c, 1, index(c, ".") - 1)) }
		if (c ~ /(^|[ \t(])(\.\/build\/)?cvc [a-z]/) cmds(c, 1)
	}
}
BEGIN { ext = "\\.(c|h|cu|py|sh|js|db|csv|json|yaml|sql|so|cmake|md|txt|gz|rules|log|html|tsv|t)$" }
FNR == 1 { fence = 0; pend = ""; intab = 0; hunit = "" }
/^```/ { fence = !fence; next }
fence { at = FNR; paths($0); sub(/^\$ /, ""); cmds($0, 0); next }
{
	line = $0
	if (pend != "") {
		if (pend ~ /_$/) { at = pend_at; emit("span", substr(pend, length(pend) - 30)) }
		line = pend (pend ~ /[_\/]$/ ? "" : " ") line
	} else pend_at = FNR
	at = pend_at
	# An odd count of backticks: the span goes on on the next line.
	if (gsub(/`/, "`", line) % 2 == 1) { pend = line; next }
	pend = ""
	if (line ~ /^#/) { hunit = ""; if (match(line, /`unit\.[a-z0-9_]+`/)) hunit = substr(line, RSTART + 6, RLENGTH - 7) }
	# a table under a heading that names `unit.X`: its first cells are tests of X
	if (hunit != "" && line ~ /^\| `[a-z][a-z0-9_]*_[a-z0-9_]+` \|/) { c = line; sub(/^\| `/, "", c); sub(/`.*/, "", c); emit("testin", hunit " " c) }
	paths(line); spans(line)
	if (FILENAME == "docs/ARCHITECTURE.md") {
		if (line ~ /^## /) intab = (line ~ /Who owns which table/) ? 1 : (line ~ /^## Modules/ ? 2 : 0)
		if (intab == 1 && line ~ /^\| `/) { c = line; sub(/^\| /, "", c); sub(/ \|.*/, "", c)
			while (match(c, /`[a-z_]+`/)) { emit("table", substr(c, RSTART + 1, RLENGTH - 2)); c = substr(c, RSTART + RLENGTH) } }
		if (intab == 2 && line ~ /^\| `[a-z\/]+`/) { c = line; sub(/^\| `/, "", c); sub(/[` ].*/, "", c)
			r = line; sub(/^\| [^|]*\|/, "", r); sub(/\|[^|]*\|[ \t]*$/, "", r)
			while (match(r, /[^\/A-Za-z0-9_`](`)?[A-Za-z0-9_]+\.(c|h|sql|js|rules)`/)) {
				f = substr(r, RSTART + 1, RLENGTH - 2); sub(/^`/, "", f); r = substr(r, RSTART + RLENGTH)
				emit("modfile", c " " f) } }
	}
	s = line
	while (match(s, /(docs\/)?[A-Z][A-Z-]*\.md"? "[^"]+"/)) {
		c = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
		emit("section", c)
	}
}
' $docs > "$tmp/refs"

# Paths and files the docs cite from other projects (the doc names the
# repository beside each): patterns, one a line, never this tree's.
cat > "$tmp/external" <<'EOF'
cupti.h
libjs-chart.js
sbatch_benchmarking.sh
docs/api-guide/pipeline_parallel_layout.md
docs/deepep_vs_hybridep_benchmark.md
docs/discussions/deepseek-v3-gb200-*
docs/examples/gemm_profiling
docs/float8.md
docs/performance.md
docs/performance-summary.md
examples/benchmark/configs/*
examples/comm_model.py
examples/launch_per_comm_model.py
examples/llama
examples/post_training/modelopt/conf/
examples/run_axonn_perlmutter.sh
models/common/model_chunk_schedule_plan.py
models/llama/model.py
tests/test_hybrid_ep.py
EOF
external() {
	while read -r pat; do
		# shellcheck disable=SC2254
		case $1 in $pat) return 0 ;; esac
	done < "$tmp/external"
	return 1
}

# ---- check -------------------------------------------------------------------
bad=0
say() { echo "docrefs: $1:$2: $3"; bad=1; }
n=0
while IFS='	' read -r doc line kind ref; do
	n=$((n + 1))
	case $kind in
	testin)
		grep -qxF "$ref" "$tmp/tests_in" ||
			say "$doc" "$line" "'${ref#* }' is not a Criterion test in tests/unit/test_${ref%% *}.c (unit.${ref%% *})" ;;
	test)
		case ${ref%%.*} in
		unit | lint | cli | valgrind | fuzz)
			grep -qxF "$ref" "$tmp/ctests" || say "$doc" "$line" "'$ref' is not a ctest the build registers" ;;
		*)
			grep -qxF "${ref%%.*}" "$tmp/suites" && ! grep -qxF "$ref" "$tmp/tests" &&
				say "$doc" "$line" "'$ref' is not a Criterion test (suite '${ref%%.*}' has no such Test)" ;;
		esac ;;
	path)
		case $ref in *'<'* | *'{'*) continue ;; esac
		external "$ref" && continue
		p=$ref
		case $p in
		../shared/* | /work/shared/*)
			[ -n "$shared" ] || continue
			p=${p#../shared/}; p=$shared/${p#/work/shared/} ;;
		esac
		case $p in /*) ;; *) p=./$p ;; esac
		# shellcheck disable=SC2086
		set -- $p
		[ -e "$1" ] || say "$doc" "$line" "path '$ref' is not in the tree" ;;
	file)
		external "$ref" && continue
		grep -qxF "$ref" "$tmp/basenames" || say "$doc" "$line" "file '$ref' is nowhere in the tree" ;;
	modfile)
		dir=${ref%% *} f=${ref#* }
		external "$f" && continue
		# a row's public header lives in include/cvc/
		[ -n "$(find "$dir" include/cvc -name "$f" -type f 2>/dev/null | head -1)" ] ||
			say "$doc" "$line" "module table: '$f' is not under $dir" ;;
	symbol)
		grep -qxF "$ref" "$tmp/defs" || say "$doc" "$line" "'$ref' is not defined in the code" ;;
	word)
		grep -qxF "$ref" "$tmp/words" || say "$doc" "$line" "'$ref' occurs nowhere in the code" ;;
	verb)
		grep -qxF "$ref" "$tmp/verbs" || say "$doc" "$line" "'cvc $ref': cvc has no such command" ;;
	flag)
		v=${ref%% *}
		grep -qxF "$v" "$tmp/verbs" && [ "$v" != help ] && ! grep -qxF "$ref" "$tmp/flags" &&
			say "$doc" "$line" "'cvc $ref': 'cvc $v --help' lists no such flag" ;;
	section)
		f=${ref%%.md*}.md h=${ref#*\"}; h=${h%\"}
		case $f in docs/*) ;; */*) continue ;; README.md) ;; *) f=docs/$f ;; esac
		[ -f "$f" ] || { say "$doc" "$line" "'$f' is not in the tree"; continue; }
		# a heading, or a paragraph's bold title (**Title**, * **Title**)
		grep -E '^(#|\*\*|[*-] \*\*)' "$f" | grep -qiF -- "$h" ||
			say "$doc" "$line" "$f has no heading or bold paragraph title \"$h\"" ;;
	table)
		grep -qxF "$ref" "$tmp/tables" || say "$doc" "$line" "table '$ref' is created by no db/*.sql"
		echo "$ref" >> "$tmp/tables_cited" ;;
	span)
		say "$doc" "$line" "code span broken inside a name ('...$ref'): Markdown shows a space there" ;;
	esac
done < "$tmp/refs"
touch "$tmp/tables_cited"
case " $docs " in *" docs/ARCHITECTURE.md "*) ;; *) : > "$tmp/tables" ;; esac
for t in $(cat "$tmp/tables"); do
	grep -qxF "$t" "$tmp/tables_cited" ||
		say docs/ARCHITECTURE.md 0 "table '$t' (db/*.sql) is missing from \"Who owns which table\""
done
[ $bad = 0 ] && echo "docrefs: $n references in the docs, every one found"
exit $bad
