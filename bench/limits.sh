#!/bin/sh
# limits.sh - the two size limits of issue 8, at full size (not run by
# `make test`, whose test_safety runs them at 400 MB and 10^6 rows):
#
#   1. a 5 GB synthetic Kineto trace imported through a FIFO (nothing on
#      disk but the database): peak RSS of the importer;
#   2. a 10^7-scenario study streamed with `cvc project --csv - >/dev/null`:
#      peak RSS of the projector.
#
#   bench/limits.sh [BUILD_DIR] [GB]     (defaults: build, 5)
#
# Needs GNU time (/usr/bin/time) and python3 for the trace generator; writes
# into $TMPDIR.  Results go to stdout, one line each, for docs/RELIABILITY.md.
set -eu
build=${1:-build}
gb=${2:-5}
cvc=$build/cvc
[ -x "$cvc" ] || { echo "error: '$cvc': build first (make build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cvc-limits-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ---- 1. 5 GB trace through a FIFO ------------------------------------------------
mkfifo "$tmp/trace.json"
python3 - "$tmp/trace.json" "$gb" <<'PY' &
import sys
path, gb = sys.argv[1], float(sys.argv[2])
limit = int(gb * (1 << 30))
with open(path, "w", buffering=1 << 20) as f:
    n = f.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],'
                ' "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},'
                ' "traceEvents": [\n')
    ev, ts = 0, 1700000000000000
    chunk = []
    while n < limit:
        k = ev % 64
        if ev % 4 == 3:
            s = ('{"ph": "X", "cat": "cpu_op", "name": "aten::op_%d", "pid": 1, "tid": 2, '
                 '"ts": %d, "dur": 3, "args": {"External id": %d}},\n' % (k, ts, ev))
        else:
            nm = "ncclDevKernel_AllReduce_Sum_f32_RING_LL" if k < 8 else "sm90_gemm_kernel"
            st = 20 if k < 8 else 7
            s = ('{"ph": "X", "cat": "kernel", "name": "%s_%d", "pid": 0, "tid": %d, "ts": %d, '
                 '"dur": 2, "args": {"External id": %d, "device": 0, "stream": %d, '
                 '"correlation": %d, "grid": [8, 1, 1], "block": [256, 1, 1]}},\n'
                 % (nm, k, st, ts, ev, st, ev))
        chunk.append(s)
        n += len(s)
        ts += 3
        ev += 1
        if len(chunk) == 4096:
            f.write("".join(chunk))
            chunk = []
    f.write("".join(chunk))
    f.write('{"ph": "i", "name": "end", "pid": 1, "tid": 2, "ts": %d, "s": "t"}\n]}\n' % ts)
print("generated %d events, %.2f GB" % (ev, n / (1 << 30)), file=sys.stderr)
PY
# The CLI sniffs the format by reading the file, which a FIFO cannot give
# back; the bench helper calls the Kineto importer directly.
/usr/bin/time -f "%M %e" -o "$tmp/time1" "$build/bench_limits_import" "$tmp/trace.db" "$tmp/trace.json"
wait
read -r rss1 secs1 < "$tmp/time1"
echo "kineto ${gb} GB via FIFO: peak RSS $((rss1 / 1024)) MiB, ${secs1} s, db $(du -m "$tmp/trace.db" | cut -f1) MiB"
rm -f "$tmp/trace.db"*

# ---- 2. 10^7 scenarios ------------------------------------------------------------
cat > "$tmp/big.yaml" <<'YAML'
name: limits
scenarios:
  - model: {name: m, layers: 32, hidden: 4096, heads: 32, kv_heads: 32, ffn: 11008, ffn_type: swiglu, vocab: 32000, seq: 4096}
    training: {global_batch: {from: 1, to: 10000, step: 1}, micro_batch: 1}
    parallelism: {tp: 1, pp: 1}
    hardware: {gpu: H100-SXM, gpus_per_node: 8, gpus: {from: 8, to: 8000, step: 8}}
YAML
/usr/bin/time -f "%M %e" -o "$tmp/time2" "$cvc" project "$tmp/big.yaml" --csv - >/dev/null 2> "$tmp/proj.err"
read -r rss2 secs2 < "$tmp/time2"
echo "project 10^7 scenarios to /dev/null: peak RSS $((rss2 / 1024)) MiB, ${secs2} s ($(tail -n 1 "$tmp/proj.err"))"
