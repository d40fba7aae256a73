args: calibrate --plan
exit: 0
stdout: calibration plan for study 'default':
stdout: kind              exact    planned
stdout: gemm 
stdout: collective 
stdout: not measurable on 8 GPUs:
stdout: profiling cost reduction: 
stdout: (Pati et al. report 2100x)
