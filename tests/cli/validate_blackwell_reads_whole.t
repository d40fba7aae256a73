args: validate $SHARED/published/blackwell-moe-runs.csv
exit: 0
stdout: predicted_tokens_per_s_per_gpu,predicted_tokens_per_s_per_gpu_lo,predicted_tokens_per_s_per_gpu_hi,measured_tokens_per_s_per_gpu,error_pct,assumed
stderr: 146 rows read, 146 with a measured figure;
