args: fit --db ss.db $SHARED/traces/xla-perf-tables/xla_matmul_perf_table.csv.gz >/dev/null 2>&1 && "$cvc" project --csv ss.csv 2>/dev/null && "$cvc" report --db ss.db --projection ss.csv -o ss.html --csv-dir ss >/dev/null && cat ss/provenance.csv ss/model_origins.csv && ! grep -q 'model 1' ss/model_origins.csv && test ! -e ss/provenance_models.csv && grep -c '^1,gemm,H100-SXM' ss/models.csv
exit: 0
stdout: database,none: spec-sheet defaults
stdout: models,none: spec-sheet defaults
stdout: H100-SXM,collective,allreduce,,
stdout: spec-sheet links of H100-SXM, default alpha-beta (no fitted model)
