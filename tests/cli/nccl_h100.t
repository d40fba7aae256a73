args: import --db $TMP/nccl.db $SHARED/traces/nccl-tests-logs/h100x16_2node_a3mega_all_reduce_perf.txt
exit: 0
stdout: 31 events, 0 activities, 0 collectives, 0 ranges, 62 nccl-tests rows
