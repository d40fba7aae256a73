args: project --intervals maybe
exit: 2
stderr: project: --intervals: expected on or off, got 'maybe'
