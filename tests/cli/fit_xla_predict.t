args: fit --db fx.db $SHARED/traces/xla-perf-tables/xla_matmul_perf_table.csv.gz >/dev/null 2>&1 && "$cvc" predict gemm --db fx.db --gpu H100 --m 4096 --n 4096 --k 4096 --dtype bf16
exit: 0
stdout: gemm b=1 m=4096 n=4096 k=4096 bf16 on H100-SXM:
stdout: model: fitted model 1 (H100-SXM bf16, xla_matmul_perf_table.csv.gz)
