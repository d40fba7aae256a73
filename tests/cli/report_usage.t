args: report --db nothing.db
exit: 2
stderr: error: report: -o FILE is needed: the HTML page to write
stderr: usage: cvc report
