args: fit --db w.db $SHARED/traces/nccl-scale/h100x8_1node_dgx_nvswitch_all_reduce_perf.txt >/dev/null && printf 'name: t\nscenarios:\n  - model: {arch: llama3-70b, seq: 4096}\n    training: {global_batch: 1024, zero: 1}\n    parallelism: {tp: 8, pp: 1}\n    hardware: {gpu: H100-SXM, gpus: 8192}\n' > t.yaml && "$cvc" project t.yaml --db w.db --format csv
exit: 0
stdout: dp comm: 1024x past the measured range
