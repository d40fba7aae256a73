args: project --csv - | grep -ce '[0-9]e[+-][0-9]' || true
exit: 0
stdout: 0
