args: analyze --db $TMP/does-not-exist.db --format csv
exit: 2
stderr: error: '
stderr: does-not-exist.db': no such database
