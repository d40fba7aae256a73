args: project $CASES/../data/hf-config-study.yaml --intervals off | cut -d, -f3-5
exit: 0
stdout: name,layers,hidden
stdout: hf-config-deepseek-v3,61,7168
stdout: hf-config-nemotron-h-8b,52,4096
