args: validate --format json $SHARED/published/megatron-2021-selene.csv
exit: 0
stdout: [
stdout: "predicted_tokens_per_s_per_gpu":
stderr: MAPE
