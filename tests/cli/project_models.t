args: project --models
exit: 0
stdout: name,aliases,source,read
stdout: "deepseek-v3","deepseek-ai/DeepSeek-V3
stdout: "qwen3-235b-a22b","Qwen/Qwen3-235B-A22B
stdout: "nemotron-3-nano-30b-a3b",
