args: version >/dev/null && printf '{"hidden_size": 4096,' > c.json && printf 'model: {config: c.json}\n' > cfg.yaml && "$cvc" project cfg.yaml
exit: 2
stderr: error: 'cfg.yaml': line 1, column 17: 'c.json': byte 21: expected a JSON object (the file ends inside it)
