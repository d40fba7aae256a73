args: project --top 5 --per model,gpuz
exit: 2
stderr: error: project: --per: unknown field 'gpuz' (one of model,hardware,none,name,
