args: fit --db f.db --system dgx-h100 $SHARED/traces/nccl-scale/h100x8_1node_dgx_nvswitch_all_reduce_perf.txt $SHARED/traces/nccl-scale/h100x16_2node_ndr_xe9680_all_reduce_perf.txt >/dev/null && "$cvc" predict allreduce --db f.db --bytes 1GiB --gpus 1024 --system dgx-h100 && "$cvc" predict allreduce --db f.db --bytes 16GiB --gpus 16 --system dgx-h100 --force && "$cvc" models --db f.db --format csv
exit: 0
stdout: allreduce 1073741824 bytes over 1024 GPUs (8 per node) on dgx-h100
stdout: model: large-message level of model 2 (dgx-h100, 16 ranks, 8 per node) carried over the span and NICs, tree, on the fitted NVLink level
stdout: model: fitted model 2 (dgx-h100 allreduce, 16 ranks, 8 per node, forced past the gate: h100x16
stdout: ,level,its own span kept out; its large-message level prices other spans,h100x16_2node_ndr_xe9680_all_reduce_perf.txt
