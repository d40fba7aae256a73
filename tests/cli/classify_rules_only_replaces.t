args: import --db cro.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz >/dev/null && printf 'softmax vectorized_elementwise_kernel\n' > only.rules && "$cvc" classify --db cro.db --rules-only only.rules --format csv | grep -c "^allreduce," ; "$cvc" classify --db cro.db --rules-only only.rules --format csv
exit: 0
stdout: 0
stdout: softmax,
stdout: other,
