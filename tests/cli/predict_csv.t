args: version >/dev/null; printf 'name,m,n,k\nqkv,4096,12288,4096\nsmall,16,16,16\n' > shapes.csv; "$cvc" predict gemm --gpu A100 --dtype bf16 --csv shapes.csv
exit: 0
stdout: name,m,n,k,time_us
stdout: qkv,4096,12288,4096,
stdout: small,16,16,16,
stderr: model: spec-sheet roofline of A100-SXM-80GB, default efficiency 0.70 (no fitted model)
