args: report --no-db -o r.html
exit: 2
stderr: error: report: nothing to report
