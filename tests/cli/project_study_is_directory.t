args: project .
exit: 2
stderr: cannot read: Is a directory
