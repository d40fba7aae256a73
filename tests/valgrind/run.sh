#!/bin/sh
# run.sh - the cvc tool under valgrind on real traces: zero reports wanted.
#
#   run.sh CVC SHARED_DIR WORKDIR
#
# Each command runs under memcheck with --error-exitcode=99, so an invalid
# read or write, a use of uninitialised memory or a definite leak fails the
# test; the commands' own exit codes must be 0.  Registered by
# tests/fuzz/fuzz.cmake in the normal (non-asan) build only.  Exits 77
# (ctest: skipped) when valgrind or ../shared is missing.
set -u
cvc=$1 shared=$2 work=$3
if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind not installed: skipped (apt-get install valgrind)"
	exit 77
fi
tr=$shared/traces
if [ ! -d "$tr" ]; then
	echo "$tr missing: skipped"
	exit 77
fi
rm -rf "$work"
mkdir -p "$work"
db=$work/vg.db
fails=0
n=0
supp=$(dirname "$0")/pcre2-jit.supp

vg() { # name, expected exit code, then the cvc arguments
	name=$1 want=$2
	shift 2
	n=$((n + 1))
	valgrind -q --suppressions="$supp" --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--show-leak-kinds=definite --track-origins=yes --log-file="$work/$name.vg" \
		"$cvc" "$@" > "$work/$name.out" 2> "$work/$name.err"
	rc=$?
	if [ $rc -ne "$want" ] || [ -s "$work/$name.vg" ]; then
		echo "FAIL $name (exit $rc): cvc $*"
		cat "$work/$name.vg" "$work/$name.err" | head -n 60
		fails=$((fails + 1))
	else
		echo "ok   $name: cvc $*"
	fi
}

vg import-kineto 0 import --db "$db" --run kineto "$tr/hta-nccl-args-a100-w2/nccl_data.json.gz"
vg import-kineto2 0 import --db "$db" --run dlrm "$tr/param-dlrm-8xv100/worker0_step_12.1694128201545.pt.trace.json.gz" \
	"$tr/param-dlrm-8xv100/worker1_step_12.1694128201556.pt.trace.json.gz"
vg import-nsys 0 import --db "$db" --run nsys "$tr/pipit-nsys-sqlite-perlmutter/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"
vg import-nccl 0 import --db "$db" --run nccl "$tr/nccl-tests-logs/h100x16_2node_a3mega_all_reduce_perf.txt"
# Read once (profiler/import/stream.c): Kineto streamed from a FIFO, an nsys export from stdin.
mkfifo "$work/k.fifo"
zcat "$tr/hta-nccl-args-a100-w2/nccl_data.json.gz" > "$work/k.fifo" &
writer=$!
vg import-fifo 0 import --db "$db" --run fifo "$work/k.fifo"
kill "$writer" 2>/dev/null # a writer no reader came for would hold ctest's pipe open
vg import-stdin 0 import --db "$db" --run stdin - < "$tr/pipit-nsys-sqlite-perlmutter/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"
vg analyze 0 analyze --db "$db"
vg analyze-run 0 analyze --db "$db" --run kineto
vg classify 0 classify --unknown --db "$db"
vg project 0 project --csv "$work/project.csv"
vg report 0 report --db "$db" -o "$work/report.html" --csv-dir "$work/report-csv"
# Bad input: the error path must be as clean as the good one.
zcat "$tr/hta-nccl-args-a100-w2/nccl_data.json.gz" | head -c 200000 > "$work/truncated.json"
vg bad-input 2 import --db "$work/bad.db" "$work/truncated.json"

echo "valgrind: $n commands, $fails with reports or failures"
[ $fails -eq 0 ]
