#!/bin/sh
# run.sh - runs one libFuzzer harness for a bounded time over a seed corpus.
#
#   run.sh FUZZER TARGET SECONDS WORKDIR SOURCE_DIR SHARED_DIR [SEED_SPOOL]
#
# The corpus (WORKDIR/corpus/TARGET) is built on first use from the small
# seeds authored in tests/fuzz/seeds/TARGET, the crash inputs already fixed
# (tests/fuzz/regress/TARGET) and, when ../shared is present, cut-down
# copies of real traces made here at run time (never committed).  It is
# kept between runs, so fuzzing time accumulates.  A crash leaves its input
# in WORKDIR/crashes/TARGET/ and fails the test; each run appends one line
# "date target seconds runs corpus crashes" to WORKDIR/fuzz-log.tsv, the
# figures docs/RELIABILITY.md quotes.
set -u
fuzzer=$1 target=$2 secs=$3 work=$4 src=$5 shared=$6 seed_spool=${7:-}
corpus=$work/corpus/$target
crashes=$work/crashes/$target
mkdir -p "$corpus" "$crashes"

# Real JSON events, kept whole: the header up to "traceEvents", then events
# (lines "  {" .. "  }") chosen by awk, closed as valid JSON.
kineto_cut() { # file max_events category-regex
	zcat "$1" 2>/dev/null | awk -v max="$2" -v want="$3" '
		!body { print; if ($0 ~ /"traceEvents"/) body = 1; next }
		/^  \{/ { ev = $0; inev = 1; next }
		inev { ev = ev "\n" $0 }
		inev && /^  \}/ {
			inev = 0
			if (ev ~ want && n < max) { sub(/,$/, "", ev); printf "%s%s\n", (n ? ",\n" : ""), ev; n++ }
			if (n >= max) exit
		}
		END { print "]}" }'
}

seed_from_shared() {
	t=$1
	[ -d "$shared/traces" ] || return 0
	tr=$shared/traces
	case $t in
	kineto)
		i=0
		for f in "$tr"/*/*.json.gz; do
			i=$((i + 1))
			kineto_cut "$f" 25 '"cat": "(cpu_op|user_annotation|cuda_runtime)"' > "$corpus/shared-cpu-$i.json"
			kineto_cut "$f" 25 '"cat": "(kernel|gpu_memcpy|gpu_memset|ac2g|gpu_user_annotation)"' > "$corpus/shared-gpu-$i.json"
		done
		# One compressed seed: the gzip layer is parsed too.
		gzip -c "$corpus/shared-gpu-1.json" > "$corpus/shared-gpu-1.json.gz" ;;
	nsys)
		command -v sqlite3 >/dev/null || return 0
		i=0
		for f in "$tr"/pipit-nsys-sqlite-perlmutter/*.sqlite.gz; do
			i=$((i + 1))
			db=$corpus/shared-$i.sqlite
			zcat "$f" > "$db.tmp" || continue
			# Keep every table (the schema is what the importer reads) but
			# only a few rows each, in small pages: a seed of tens of KB.
			sqlite3 "$db.tmp" "SELECT name FROM sqlite_schema WHERE type='table'" |
			while read -r tab; do
				case $tab in StringIds) keep=400 ;; *) keep=12 ;; esac
				echo "DELETE FROM \"$tab\" WHERE rowid NOT IN (SELECT rowid FROM \"$tab\" ORDER BY rowid LIMIT $keep);"
			done > "$db.sql"
			# The exports' 86 tables and 400 strings of up to kilobytes
			# (command lines, environments) vacuumed to 300 KB, more than
			# the 128 KiB libFuzzer then read of a seed: cut, the file was
			# no SQLite database and the harness never passed its header.
			# Names cut to 48 bytes it is 140 KB, under nsys's max_len.
			echo "UPDATE StringIds SET value = substr(value, 1, 48);" >> "$db.sql"
			sqlite3 "$db.tmp" < "$db.sql" && sqlite3 "$db.tmp" "PRAGMA page_size=512; VACUUM;" &&
				mv "$db.tmp" "$db"
			rm -f "$db.tmp" "$db.sql"
		done ;;
	nccltests)
		for f in "$tr"/nccl-tests-logs/*; do cp "$f" "$corpus/shared-$(basename "$f")"; done ;;
	csvtab)
		for f in "$tr"/xla-perf-tables/*.csv.gz "$tr"/vidur-profiling/*/*.csv.gz; do
			zcat "$f" | head -n 40 > "$corpus/shared-$(basename "$f" .gz)"
		done
		for f in "$tr"/nccl-tests-logs/*; do cp "$f" "$corpus/shared-$(basename "$f")"; done ;;
	cvcdb)
		# A small real cvc database: the seed tool imports a log and a trace cut.
		tool=$(dirname "$fuzzer")/cvc
		[ -x "$tool" ] || return 0
		rm -f "$work/seed.db" "$work/seed.db-wal" "$work/seed.db-shm"
		kineto_cut "$tr/hta-nccl-args-a100-w2/nccl_data.json.gz" 20 '"cat": "(kernel|gpu_memcpy)"' > "$work/seed.json"
		ASAN_OPTIONS=detect_leaks=0 "$tool" import --db "$work/seed.db" "$work/seed.json" \
			"$tr/nccl-tests-logs/a100x8_sendrecv_perf.md" >/dev/null 2>&1 &&
			sqlite3 "$work/seed.db" "PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;" >/dev/null 2>&1 &&
			cp "$work/seed.db" "$corpus/shared-seed.db"
		rm -f "$work/seed.db" "$work/seed.db-wal" "$work/seed.db-shm" "$work/seed.json" ;;
	validate)
		# The published tables' header and first rows: their free text.
		for f in "$shared"/published/*.csv; do
			[ -f "$f" ] && head -n 12 "$f" > "$corpus/shared-$(basename "$f")"
		done ;;
	stream | analyze)
		# Detection picks the importer: seeds of every format.
		for f in kineto nsys nccltests cvcdb; do seed_from_shared $f; done ;;
	esac
}

if [ ! -f "$corpus/.seeded" ]; then
	case $target in
	catalog) cp "$src/models/hw/catalog.csv" "$corpus/repo-catalog.csv" ;;
	rules) cp "$src/analysis/rules/default.rules" "$corpus/repo-default.rules" ;;
	scenario) cp "$src/projector/studies"/*.yaml "$src/examples"/*.yaml "$corpus/" ;;
	validate) cp "$src/tests/data"/*.csv "$corpus/" 2>/dev/null ;;
	hfconfig) cp "$src/tests/data"/hf-config-*.json "$corpus/" 2>/dev/null ;;
	spool) [ -n "$seed_spool" ] && rm -f "$corpus/seed.spool" && "$seed_spool" "$corpus/seed.spool" ;;
	esac
	seed_from_shared "$target"
	touch "$corpus/.seeded"
fi
# Authored seeds and fixed crashes are copied every run, so ones added later
# reach a corpus seeded before them.
[ -d "$src/tests/fuzz/seeds/$target" ] && cp "$src/tests/fuzz/seeds/$target"/* "$corpus/" 2>/dev/null
[ -d "$src/tests/fuzz/regress/$target" ] && cp "$src/tests/fuzz/regress/$target"/* "$corpus/" 2>/dev/null
# nccl-tests' -J JSON reaches its reader through `cvc fit` and detection too
case $target in csvtab | stream | analyze) cp "$src/tests/fuzz/seeds/nccltests"/*.json "$corpus/" 2>/dev/null ;; esac

dict=
[ -f "$src/tests/fuzz/$target.dict" ] && dict="-dict=$src/tests/fuzz/$target.dict"
# nsys: the schema of an export's 86 tables alone is 60 KB in 512-byte pages
case $target in nsys) maxlen=196608 ;; cvcdb|analyze) maxlen=131072 ;; *) maxlen=65536 ;; esac

log=$work/$target.log
# Leaks are checked per input; a slow input (> 20 s) is a finding too.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$fuzzer" "$corpus" -max_total_time="$secs" -max_len=$maxlen -timeout=20 -rss_limit_mb=2048 \
	-artifact_prefix="$crashes/" -print_final_stats=1 $dict > "$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
ncorp=$(find "$corpus" -type f | wc -l)
ncrash=$(find "$crashes" -type f | wc -l)
printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$target" "$secs" \
	"${runs:-0}" "$ncorp" "$ncrash" >> "$work/fuzz-log.tsv"
echo "fuzz $target: ${runs:-0} inputs in ${secs} s, corpus $ncorp files, crash files $ncrash, exit $rc"
if [ $rc -ne 0 ]; then
	tail -n 60 "$log"
	echo "fuzz $target: crash input(s) in $crashes/ - add them to tests/fuzz/regress/$target/"
	exit 1
fi
exit 0
