args: version >/dev/null; printf 'name: x\ndefault:\n  hardware: {gpus: 8}\nscenarios:\n  - model: {arch: llama3-8b}\n    hardware: {gpu: H100-SXM}\n' > typo.yaml; "$cvc" project typo.yaml -f csv
exit: 2
stderr: line 2, column 1: unknown top-level key 'default' beside 'scenarios' (expected name, defaults or scenarios)
