args: profile --delay soon -- true
exit: 2
stderr: error: profile: --delay: expected a number, got 'soon'
