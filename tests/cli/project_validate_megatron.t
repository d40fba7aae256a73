args: validate $SHARED/published/megatron-2021-selene.csv
exit: 0
stdout: params_b,heads,hidden,layers,tp,pp,gpus,global_batch,tflops_per_gpu,pct_of_peak,aggregate_pflops,predicted,error_pct
stderr: 5 rows, mean absolute error
