args: validate --by gpu $SHARED/published/modern-runs.csv >/dev/null
exit: 0
stderr: gpu=H100-SXM: 119 rows read
stderr: gpu=A100-SXM-40GB: 78 rows read
