args: project --top 1 --per none --by seq_len --csv - >/dev/null
exit: 0
stderr: project: kept the 1 best by seq over all scenarios
