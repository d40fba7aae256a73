args: report --db nothing.db
exit: 2
stderr: usage: cvc report
