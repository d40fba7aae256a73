args: predict allreduce --bytes 64MiB --gpus 16 --system dgx-h100
exit: 0
stdout: allreduce 67108864 bytes over 16 GPUs (8 per node) on dgx-h100:
stdout: model: spec-sheet links of dgx-h100, default alpha-beta (no fitted model)
