args: project --by speed
exit: 2
stderr: error: project: --by: unknown metric 'speed'
