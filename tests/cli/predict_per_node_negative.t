args: predict allreduce --system dgx-h100 --bytes 1GiB --gpus 8 --per-node -1
exit: 2
stderr: error: predict: --per-node: expected 1 to 1048576, got -1
