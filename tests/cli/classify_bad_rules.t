args: version >/dev/null && printf '# mine\ngemm  foo(bar\n' > bad.rules && "$cvc" classify --db nope.db --rules bad.rules
exit: 2
stderr: error: 'bad.rules': line 2, column 14: missing closing parenthesis
