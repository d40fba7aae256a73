args: predict attention --gpu H100 --heads 32 --kv-heads 5 --head-dim 128 --seq 2048; a=$?; "$cvc" predict attention --gpu H100 --heads 32 --seq 2048; b=$?; "$cvc" predict attention --gpu H100 --heads 32 --head-dim 128 --seq 2048 --dtype fp4; c=$?; "$cvc" predict attention --gpu A100 --heads 32 --head-dim 128 --seq 2048 --dtype fp8; d=$?; "$cvc" predict attention --gpu H100 --heads 32 --head-dim 128 --seq 2048 --backend flash; e=$?; test $a$b$c$d$e = 22222 && exit 2; exit 1
exit: 2
stderr: error: predict: --kv-heads: expected a divisor of --heads 32, got 5
stderr: error: predict: attention needs positive --heads, --head-dim and --seq
stderr: error: predict: --dtype fp4: fused attention runs in bf16, fp16, fp8 or tf32
stderr: error: predict: --dtype fp8: A100-SXM-80GB has no FP8 tensor cores (its catalog entry gives no fp8 peak): no attention kernel runs there in fp8
stderr: error: predict: --backend: expected te-default, torch-default, cudnn, fa2, fa4 or fa1, got 'flash'
