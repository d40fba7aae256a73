args: fit --db pf.db $SHARED/traces/xla-perf-tables/xla_matmul_perf_table.csv.gz >/dev/null 2>&1 && "$cvc" project --db pf.db --csv pf.csv --json pf.json 2>/dev/null && rm pf.db && "$cvc" report --no-db --projection pf.csv -o pf.html --csv-dir pf >/dev/null && "$cvc" report --no-db --projection pf.json -o pfj.html --csv-dir pfj >/dev/null && cat pf/provenance.csv pf/model_origins.csv pf/provenance_models.csv && grep -l 'fitted model 1 (H100-SXM bf16, xla_matmul_perf_table.csv.gz)' pf.html pfj.html pfj/model_origins.csv && grep -c '^1,gemm,H100-SXM,,bf16,' pfj/provenance_models.csv
exit: 0
stdout: read from,pf.provenance.json
stdout: /pf.db
stdout: models,the database's fits; spec-sheet defaults where it has none
stdout: H100-SXM,gemm,bf16,1,,"fitted model 1 (H100-SXM bf16, xla_matmul_perf_table.csv.gz)"
stdout: 1,gemm,H100-SXM,,bf16,0,0,375,
stdout: flop,xla_matmul_perf_table.csv.gz
stdout: H100-SXM,collective,allreduce,,
stdout: pf.html
stdout: pfj.html
stdout: pfj/model_origins.csv
