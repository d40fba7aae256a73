args: project --top 3 --by tokens_per_s --valid-only --no-marginal
exit: 0
stdout: study,index,name,layers,hidden
stdout: default,
stderr: project: 'default':
stderr: project: kept the 3 best by tokens_per_s of each of 124 groups (per model,hardware,gpus)
