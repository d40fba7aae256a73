args: validate $SHARED/published/megatron-2021-selene.csv
exit: 0
stdout: params_b,heads,hidden,layers,tp,pp,gpus,global_batch,tflops_per_gpu,pct_of_peak,aggregate_pflops,predicted_tokens_per_s_per_gpu,predicted_tokens_per_s_per_gpu_lo,predicted_tokens_per_s_per_gpu_hi,measured_tokens_per_s_per_gpu,error_pct,assumed
stdout: Megatron-LM 2021 table (no gpu or dtype column)
stderr: 5 rows read, 5 with a measured figure; 5 projected (100.0% of those), 0 not projected
stderr: MAPE 
