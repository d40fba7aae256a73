args: profile --activities kernel,bogus -- true
exit: 2
stderr: error: profile: --activities: unknown activity 'bogus'
