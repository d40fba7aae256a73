args: analyze --format xml
exit: 2
stderr: error: analyze: --format: 'xml' is not one of table|csv|json
