args: predict gemm --gpu H100 --m 4096 --n 4096 --k 4096 --format csv && "$cvc" predict allreduce --bytes 64MiB --gpus 16 --system dgx-h100 --format json
exit: 0
stdout: H100-SXM,bf16,1,4096,4096,4096,201.087,165.662,244.087,683.48,"built-in reference fit
stdout: "bytes":67108864,"gpus":16,"per_node":8,"time_us":404.574,"time_us_lo":287.919,"time_us_hi":568.495,"algbw_gbps":165.875,"busbw_gbps":311.016,
