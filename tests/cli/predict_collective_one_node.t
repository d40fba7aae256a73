args: predict allreduce --bytes 64MiB --gpus 1 --system dgx-h100 && "$cvc" predict allreduce --bytes 64MiB --gpus 4 --system dgx-h100 && "$cvc" predict allreduce --bytes 64MiB --gpus 16 --system dgx-h100
exit: 0
stdout: allreduce 67108864 bytes over 1 GPU (one node of 8) on dgx-h100: 0.000 us
stdout: model: none: a group of one GPU sends nothing
stdout: allreduce 67108864 bytes over 4 GPUs (one node of 8) on dgx-h100
stdout: allreduce 67108864 bytes over 16 GPUs (8 per node) on dgx-h100
