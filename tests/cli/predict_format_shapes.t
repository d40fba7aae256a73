args: version >/dev/null && printf 'm,n,k\n64,64,64\n4096,4096,4096\n' > shapes.csv && "$cvc" predict gemm --gpu H100 --csv shapes.csv --format json && "$cvc" predict gemm --gpu H100 --csv shapes.csv --format table
exit: 0
stdout: {"m":64,"n":64,"k":64,"time_us":4.009},
stdout: m      n      k      time_us
stdout: 4,096  4,096  4,096      201
