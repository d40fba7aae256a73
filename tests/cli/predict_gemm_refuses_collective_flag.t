args: predict gemm --gpu H100 --m 4096 --n 4096 --k 4096 --bytes 1GiB
exit: 2
stderr: error: predict: --bytes does not apply to gemm (it is a collective's and membound's)
