args: analyze --classes --collectives
exit: 2
stderr: error: analyze: --classes and --collectives
