args: fit --db pc.db $SHARED/traces/xla-perf-tables/xla_matmul_perf_table.csv.gz >/dev/null 2>&1 && "$cvc" predict gemm --db pc.db --gpu "NVIDIA H200" --m 8192 --n 8192 --k 8192
exit: 0
stdout: bf16 on H200-SXM:
stdout: model: model 1 fitted on H100-SXM bf16, carried over to H200-SXM through the spec sheet
