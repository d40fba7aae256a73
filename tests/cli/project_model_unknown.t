args: version >/dev/null && printf 'model: {arch: qwen9-1t}\n' > unknown.yaml && "$cvc" project unknown.yaml
exit: 2
stderr: error: 'unknown.yaml': line 1, column 15: unknown model 'qwen9-1t': expected a name from cvc's catalog
