args: version >/dev/null && printf 'model: [{arch: Qwen/Qwen3-235B-A22B, seq: 4096}, {arch: DeepSeek-V3, layers: 31}]\nparallelism: {tp: 4, ep: 8, pp: 2}\nhardware: {gpu: B200, gpus: 64}\n' > byname.yaml && "$cvc" project byname.yaml --intervals off | cut -d, -f3-5
exit: 0
stdout: name,layers,hidden
stdout: qwen3-235b-a22b,94,4096
stdout: deepseek-v3,31,7168
