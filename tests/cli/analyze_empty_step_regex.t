args: import --db a.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz >/dev/null && "$cvc" analyze --db a.db --by step --step-regex ''
exit: 2
stderr: error: --step-regex: expected a pattern naming the step ranges, got ''
