args: project --top 3 --per none --intervals off --no-marginal
exit: 0
stdout: study,index,name,layers,hidden
stderr: project: kept the 3 best by tokens_per_s over all scenarios
