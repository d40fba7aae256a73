args: predict membound --gpu H100 --class norm --bytes 256MiB && "$cvc" predict membound --gpu H100 --class optimizer --bytes 1GiB --format json
exit: 0
stdout: membound norm 268435456 bytes on H100-SXM: 116.971 us (2294.9 GB/s)
stdout: model: spec-sheet HBM bandwidth, default per-class efficiency
stdout: {"gpu":"H100-SXM","class":"optimizer","bytes":1073741824,"time_us":429.8
