args: version >/dev/null && printf 'name: typo\nscenarios:\n  - hardware: {gpu: A100-40, gpus: 64}\n' > typo.yaml && "$cvc" project typo.yaml --csv -
exit: 2
stderr: 'typo.yaml': line 3, column 21: gpu 'A100-40' is no GPU or system of the hardware catalog, by name or alias; nearest: A100-SXM-40GB
