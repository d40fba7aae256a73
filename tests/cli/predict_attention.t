args: predict attention --gpu H100 --heads 32 --kv-heads 8 --head-dim 128 --seq 8192 --causal && "$cvc" predict attention --gpu H100 --heads 32 --kv-heads 8 --head-dim 128 --seq 8192 --causal --backward --backend fa1
exit: 0
stdout: attention forward b=1 heads=32 kv_heads=8 head_dim=128 seq=8192 causal bf16 cudnn on H100-SXM: 1016.528 us (540.8 TFLOP/s)
stdout: model: fused-attention curves measured on H200-SXM (attention-bench), carried to H100-SXM through the spec sheet
stdout: attention backward b=1 heads=32 kv_heads=8 head_dim=128 seq=8192 causal bf16 fa1 on H100-SXM:
stdout: model: FlashAttention-1: FlashAttention-2's time x 1.79 (the FlashAttention-2 paper's end-to-end table, Dao 2023); fused-attention curves
