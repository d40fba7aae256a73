args: fit --db fn.db $SHARED/traces/nccl-tests-logs/h100x16_2node_a3mega_all_reduce_perf.txt >/dev/null 2>&1 && "$cvc" models --db fn.db && "$cvc" models show 1 --db fn.db
exit: 0
stdout: collective  H100-SXM
stdout: h100x16_2node_a3mega_all_reduce_perf.txt
stdout: ranks:         16 (8 per node)
stdout: domain:        8 .. 8589934592 bytes
