args: import --db $TMP/kineto_ok.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz
exit: 0
stdout: imported 1 file into run 1 of '
stdout: : 40573 events, 3774 activities, 21 collectives, 72 ranges
