args: predict gemm --gpu H100 --m 4096 --n 4096 --k 4096 && "$cvc" predict allreduce --bytes 64MiB --gpus 16 --system dgx-h100 && "$cvc" predict attention --gpu H100 --heads 32 --head-dim 128 --seq 4096 --causal && "$cvc" predict membound --gpu H100 --class norm --bytes 1GiB
exit: 0
stdout: uncertainty: 90% interval 165.662 to 244.087 us (relative standard error 11.8%)
stdout: uncertainty: 90% interval 287.919 to 568.495 us (relative standard error 20.7%)
stdout: uncertainty: 90% interval 219.212 to 349.504 us (relative standard error 14.2%)
stdout: uncertainty: 90% interval 229.352 to 924.145 us (relative standard error 42.4%)
