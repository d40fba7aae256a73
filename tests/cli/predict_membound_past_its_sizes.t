args: import --db mp.db $SHARED/traces/hta-trace-diff-a100-w8/control.json.gz >/dev/null 2>&1 && "$cvc" fit --db mp.db >/dev/null 2>&1 && "$cvc" predict membound --db mp.db --gpu A100-SXM-40GB --class elementwise --bytes 4GB && "$cvc" predict membound --db mp.db --gpu A100-SXM-40GB --class copy --bytes 4GB
exit: 0
stdout: 5.24x past the largest size it measured, through a carry the quality gate measured
stdout: membound copy 4000000000 bytes on A100-SXM-40GB
stdout: model: spec-sheet HBM bandwidth, default per-class efficiency
