args: import --db mf.db $SHARED/traces/hta-trace-diff-a100-w8/control.json.gz >/dev/null 2>&1 && "$cvc" fit --db mf.db >/dev/null 2>&1 && "$cvc" predict membound --db mf.db --gpu A100-SXM-40GB --class elementwise --bytes 256MiB && "$cvc" predict membound --db mf.db --gpu H100 --class elementwise --bytes 256MiB && "$cvc" predict membound --db mf.db --gpu H100 --class optimizer --bytes 256MiB
exit: 0
stdout: membound elementwise 268435456 bytes on A100-SXM-40GB:
stdout: model: fitted membound model 3 (A100-SXM-40GB elementwise: floor
stdout: model: membound model 3 fitted on A100-SXM-40GB elementwise (eff 0.86), carried over to H100-SXM through the HBM bandwidth
stdout: model: spec-sheet HBM bandwidth, default per-class efficiency
