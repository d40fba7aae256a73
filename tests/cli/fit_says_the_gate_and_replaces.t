args: fit --db fg.db $SHARED/traces/nccl-tests-logs/h100x16_2node_a3mega_all_reduce_perf.txt && "$cvc" fit --db fg.db $SHARED/traces/nccl-tests-logs/h100x16_2node_a3mega_all_reduce_perf.txt && "$cvc" models --db fg.db --format csv | grep -c ',collective,'
exit: 0
stdout: used
stdout: no: extrapolation error above 30%
stdout: (replaces this input's earlier fit)
stdout: 1
