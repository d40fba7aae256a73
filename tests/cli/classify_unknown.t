args: import --db t.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz >/dev/null && printf 'comm ^nccl\n' > c.rules && "$cvc" classify --db t.db --rules-only c.rules --unknown --format csv
exit: 0
stdout: name,count,total_us
stdout: "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(
