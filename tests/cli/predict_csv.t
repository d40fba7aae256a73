args: version >/dev/null; printf 'name,m,n,k\nqkv,4096,12288,4096\nsmall,16,16,16\n' > shapes.csv; "$cvc" predict gemm --gpu A100 --dtype bf16 --csv shapes.csv
exit: 0
stdout: name,m,n,k,time_us
stdout: qkv,4096,12288,4096,
stdout: small,16,16,16,
stderr: model: built-in reference fit (a100__Llama-2-7b-hf__mlp.csv.gz, A100-SXM-80GB fp16), carried to A100-SXM-80GB
