args: analyze --classes --collectives
exit: 2
stderr: error: analyze: --classes, --collectives and --idle print different tables
