args: import --db older.db $SHARED/traces/hta-trace-diff-a100-w8/control.json.gz >/dev/null && "$cvc" fit --db older.db
exit: 0
stdout: gemm       A100-SXM-40GB  -                    tf32              0    0    123
stdout: membound   A100-SXM-40GB  -                    elementwise       0    0     10
stderr: fit: 3 models stored in 'older.db'
stderr: fp32 rows run faster than the dense fp32 peak
