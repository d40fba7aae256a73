args: predict gemm --gpu V100 --m 4096 --n 4096 --k 4096 --dtype fp8
exit: 2
stderr: error: predict: --dtype fp8: V100-SXM2-32GB has no FP8 tensor cores
stderr: as 'cvc project' marks such a layout impossible
