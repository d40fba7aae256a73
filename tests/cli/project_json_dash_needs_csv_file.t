args: project --json -
exit: 2
stderr: --json -: the CSV goes to stdout too; give --csv FILE
