args: version >/dev/null && mkdir -p top/a/b && cp $SHARED/traces/nccl-scale/h100x8_1node_dgx_nvswitch_all_reduce_perf.txt top/a/ && cp $SHARED/traces/nccl-scale/h100x16_2node_ib400_all_reduce_perf.txt top/a/b/ && echo notes > top/README && "$cvc" import --db s.db top
exit: 0
stdout: imported 2 files
stderr: 1 file that no importer reads left out
