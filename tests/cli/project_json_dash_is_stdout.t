args: project --top 1 --json - | head -c 40
exit: 0
stdout: {"study":"default","scenarios":[
