args: calibrate --plan no-such-study.yaml
exit: 1
stderr: error: 'no-such-study.yaml': cannot open
