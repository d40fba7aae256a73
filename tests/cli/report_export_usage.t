args: export --db nope.db
exit: 2
stderr: usage: cvc export --perfetto FILE
