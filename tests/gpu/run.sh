#!/bin/bash
# run.sh - the GPU checklist (../shared/gpu-checklist.md) and docs/GPU-VALIDATION.md's checks in
# one pass on a GPU machine, from the repository root, after tests/gpu/stage.sh: about 3 minutes
# on one H200, 2 with QUICK=1.  Writes $OUT/log.txt and $OUT/res.tgz (the databases, traces and tables); read
# them back with tests/gpu/compare.sh.  One GPU: the NCCL checks that need two ranks are skipped.
R=$PWD; G=$R/.gpu; P=$R/tests/gpu; W=${WORK:-/tmp/cvc-gpu}; OUT=${OUT:-$W.out}
rm -rf "$W"; mkdir -p "$W" "$OUT"; cd "$W" || exit 2
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s)
sec() { echo; echo "=== [$(($(date +%s) - T0)) s] $*"; }
T() { local s=$1; shift; local a; a=$(date +%s.%N); timeout -k 5 "$s" "$@"; local rc=$?
	echo "rc=$rc wall=$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $a}") s: $*"; return $rc; }
killed_at() { # $1 program, $2 dir: run under cvc profile, SIGKILL 6 s after it starts
	rm -f pid; cvc profile -o "$2" -- python3 "$P/$1" pid 10 & local cp=$!
	for _ in $(seq 60); do [ -s pid ] && break; kill -0 $cp 2>/dev/null || break; sleep 0.5; done
	sleep 6; [ -s pid ] && { kill -9 "$(cat pid)"; echo "killed $2 at $(date +%s.%N)" | tee "$2.kill"; }
	wait $cp; echo "cvc profile rc=$?"; }

sec env
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
nvcc --version | tail -1; grep PRETTY /etc/os-release
python3 -c "import torch;print('torch',torch.__version__,'cuda',torch.version.cuda,'nccl',torch.cuda.nccl.version())"
NV=$(python3 -c "import site;print(site.getsitepackages()[0])")/nvidia
D=""; for l in libcupti.so.13 libnccl.so.2 libcublasLt.so.13 libcublas.so.13 libcudart.so.13; do
	p=$(find "$NV" /usr/local/cuda/lib64 /usr/local/cuda/extras/CUPTI/lib64 -name "$l" 2>/dev/null | head -1)
	echo "$l -> ${p:-missing}"; [ -n "$p" ] && D="$D:$(dirname "$p")"; done
case $D in *cupti*|*cu13*) ;; *) D="$D:$G/cupti" ;; esac
export LD_LIBRARY_PATH=$G/lib$D${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=$G/bin:$PATH
ldd "$G/bin/libcvc_inject.so" "$G/bin/cvc" "$G/bin/gemm_allreduce" | grep "not found"

sec "5: error paths"
CUDA_VISIBLE_DEVICES= T 60 cvc calibrate "$R/projector/studies/pati2023.yaml" --gpus 1 --out cal_hidden
CUDA_VISIBLE_DEVICES= T 60 cvc profile -o p_hidden -- gemm_allreduce 2 16
CUDA_VISIBLE_DEVICES=7 T 60 cvc profile -o p_badidx -- gemm_allreduce 2 16
T 60 cvc profile -o p_exit7 -- cuda_exit7

sec "1: one PyTorch step, two recorders (and both at once)"
T 150 cvc profile -o p_step -- python3 "$P/step.py" plain
T 150 python3 "$P/step.py" kineto k_step.json
T 150 cvc profile -o p_both -- python3 "$P/step.py" kineto k_both.json
gzip k_*.json

sec "3, 9: NCCL plugin, NVTX (gemm_allreduce, NCCL_DEBUG=INFO)"
NCCL_DEBUG=INFO T 120 cvc profile -o p_ga -- gemm_allreduce 20 256 > ga.log 2>&1
grep -i "plugin\|NCCL version" ga.log | head; tail -2 ga.log

sec "4: calibrate, the runner on XLA's H100 shapes, GEMM speed by input values"
T 150 cvc calibrate "$R/projector/studies/pati2023.yaml" --gpus 1 --db cal.db --out calout
mkdir -p xlaout big; T 150 cvc_calibrate_run --plan "$G/xla_plan.csv" --out xlaout
T 60 cvc_calibrate_run --plan "$G/big_plan.csv" --out big; cat big/gemm.r0.csv
T 120 python3 "$P/mm.py"

sec "3 (issue 19): SIGKILL 6 s in, twice"
killed_at spin.py p_spin_a; killed_at spin.py p_spin_b

sec "6: DataLoader workers and SIGTERM, without and with cvc"
for mode in plain cvc; do rm -f pid
	if [ $mode = cvc ]; then cvc profile -o p_fork -- python3 "$P/fork.py" pid > fork_$mode.log 2>&1 &
	else python3 "$P/fork.py" pid > fork_$mode.log 2>&1 & fi; cp=$!
	for _ in $(seq 60); do [ -s pid ] && break; sleep 0.5; done; sleep 6
	echo "$mode: $(pgrep -f "^python3 .*fork.py" | wc -l) fork.py processes"; kill -TERM "$(cat pid)"; t=$(date +%s.%N)
	for _ in $(seq 80); do n=$(pgrep -f "^python3 .*fork.py" | wc -l); [ "$n" = 0 ] && break; sleep 0.25; done
	echo "$mode: fork.py gone after $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t}") s (left $n)"
	wait $cp; echo "$mode rc=$?"; done

sec "8: a CUDA graph replayed 10 times"
T 120 cvc profile -o p_graph -- python3 "$P/step.py" graph

if [ -z "${QUICK:-}" ]; then # QUICK=1: no overhead pairs (about a minute less)
sec "2: overhead, alternating"
for i in 1 2 3; do T 60 gemm_allreduce 300 256; T 60 cvc profile -o p_ov$i -- gemm_allreduce 300 256; done
for i in 1 2; do T 90 python3 "$P/step.py" plain; T 90 cvc profile -o p_tov$i -- python3 "$P/step.py" plain; done
fi

sec pack
tar czf "$OUT/res.tgz" --exclude='*.qdstrm' . ; ls -la "$OUT"
