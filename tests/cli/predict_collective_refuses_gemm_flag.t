args: predict allreduce --system dgx-h100 --bytes 1GiB --gpus 8 --dtype fp8
exit: 2
stderr: error: predict: --dtype does not apply to allreduce (it is gemm's and attention's)
