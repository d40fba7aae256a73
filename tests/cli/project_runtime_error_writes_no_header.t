args: version >/dev/null && printf 'name: bad\nscenarios:\n  - model: {arch: llama-3-8b, seq: 4096}\n    training: {global_batch: 512}\n    hardware: {gpu: H900, gpus: 8}\n' > bad.yaml && "$cvc" project bad.yaml -f csv > o.csv 2>e.txt; echo "csv: exit $? bytes $(wc -c < o.csv)"; "$cvc" project bad.yaml -f json > o.json 2>/dev/null; echo "json: exit $? bytes $(wc -c < o.json)"; cat e.txt
exit: 0
stdout: csv: exit 2 bytes 0
stdout: json: exit 2 bytes 0
stdout: gpu 'H900' is no GPU or system of the hardware catalog
