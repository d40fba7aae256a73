args: version >/dev/null; printf 'm,n,k\n64,64,64\n' > s.csv; "$cvc" predict gemm --gpu H100 --csv s.csv --k 64
exit: 2
stderr: error: predict: --k does not apply with --csv (the file's rows give the shapes)
