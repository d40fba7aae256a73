args: project --top 3 --by tokens_per_s --valid-only --no-marginal
exit: 0
stdout: study,index,name,layers,hidden
stdout: default,
stderr: project: 'default':
