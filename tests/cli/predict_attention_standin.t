args: predict attention --gpu MI300X --heads 32 --kv-heads 8 --head-dim 128 --seq 4096 --b 1 --dtype bf16 --causal && "$cvc" predict attention --gpu H100 --heads 32 --head-dim 128 --seq 4096 --b 1 --dtype fp8 --backend fa2
exit: 0
stdout: model: fused-attention curves measured on MI300X (attention-bench); no curve of this library, dtype or mask was measured on MI300X: the nearest measured one stands in
stdout: carried to H100-SXM through the spec sheet; no curve of this library, dtype or mask was measured on H200-SXM: the nearest measured one stands in
