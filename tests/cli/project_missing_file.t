args: project no-such-study.yaml
exit: 2
stderr: error: 'no-such-study.yaml': cannot open
