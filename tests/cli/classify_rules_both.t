args: classify --db none.db --rules a.rules --rules-only b.rules
exit: 2
stderr: error: classify: --rules adds to the shipped rules and --rules-only replaces them: give one
