args: version >/dev/null && printf 'name: "=HYPERLINK(1)"\nmodel: {layers: 2, hidden: 256, heads: 4, vocab: 1000, seq: 128}\ntraining: {global_batch: 8, micro_batch: 1}\nhardware: {gpu: H100-SXM, gpus: 8}\n' > evil.yaml && "$cvc" project evil.yaml --intervals off | cut -d, -f1 | tail -1
exit: 0
stdout: "'=HYPERLINK(1)"
