args: predict gemm --gpu H100 --m 64 --n 64 --k 64 >/dev/null; "$cvc" models --db none.db show 1 -f json
exit: 2
stderr: error: models: --format does not apply to show (it formats list)
