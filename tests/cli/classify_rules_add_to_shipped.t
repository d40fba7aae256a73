args: import --db cr.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz >/dev/null && printf 'softmax vectorized_elementwise_kernel\n' > mine.rules && "$cvc" classify --db cr.db --rules mine.rules --format csv
exit: 0
stdout: softmax,
stdout: allreduce,
stdout: conv,
stdout: norm,
