#!/bin/sh
# stage.sh - on the development machine, after a build with the CUDA toolkit:
# copies what the GPU machine needs into .gpu/ (ignored by git; the device
# tool carries it): cvc's programs, the Debian libraries they link that a
# GPU image lacks, a fallback libcupti, and the calibrate plans built from
# ../shared's XLA H100 table.  Then, on the GPU machine: sh tests/gpu/run.sh
#
#   sh tests/gpu/stage.sh [BUILD_DIR]        (default build)
set -eu
B=${1:-build}
S=$(cd "$(dirname "$0")/../.." && pwd)/../shared
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib .gpu/cupti
for f in cvc libcvc_inject.so cvc_calibrate_run gemm_allreduce cuda_exit7; do
	[ -f "$B/$f" ] || { echo "stage: $B/$f missing: build with the CUDA toolkit first" >&2; exit 2; }
	cp "$B/$f" .gpu/bin/
done
# the libraries of Debian's packages; glibc, libstdc++, zlib and CUDA's own are there
ldd "$B/cvc" "$B/libcvc_inject.so" | awk '/=> \// {print $3}' | sort -u |
	grep -E 'libsqlite3|libpcre2|libjson-c|libgsl|libyaml' | xargs -r -I{} cp -L {} .gpu/lib/
cp -L "$(ldd "$B/libcvc_inject.so" | awk '/libcupti/ {print $3}')" .gpu/cupti/
H=kind,dtype,sub,b,m,n,k,heads,kv_heads,causal,backward,bytes,group,per_node,uses,scenarios,est_us,est_gpu_s
{ echo $H; zcat "$S/traces/xla-perf-tables/xla_matmul_perf_table.csv.gz" | awk -F, '
	$1 == "sm_90" && ($6 == "bf16xbf16->bf16" || $6 == "f8e4m3fnxf8e4m3fn->bf16") {
		printf "gemm,%s,,%s,%s,%s,%s,0,0,0,0,0,0,0,1,1,%s,%g\n",
		       ($6 ~ /^bf16/) ? "bf16" : "fp8", $2, $3, $4, $5, $9, $9 * 25e-6 }'; } > .gpu/xla_plan.csv
{ echo $H; for s in "bf16,,1,4096,4096,4096" "bf16,,1,8192,8192,8192" "fp8,,1,8192,8192,8192"; do
	echo "gemm,$s,0,0,0,0,0,0,0,1,1,0,0"; done; } > .gpu/big_plan.csv
du -sh .gpu
