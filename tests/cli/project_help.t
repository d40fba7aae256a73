args: project --help
exit: 0
stdout: --per FIELDS
stdout: examples:
stdout:   cvc project --top 5 --csv best.csv
stdout: metrics for --by (also any numeric scenario field):
stdout: tokens_per_s_per_gpu,
stdout: fields for --per, comma-separated
stdout: model, hardware, none, name,
