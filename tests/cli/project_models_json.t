args: project --models -f json
exit: 0
stdout: {"name":"llama2-7b","aliases":
