args: project --top 1 --per none --intervals off --csv - && test ! -e ./- && test ! -e ./-.provenance.json && echo no-file-named-dash
exit: 0
stdout: study,index,name
stdout: no-file-named-dash
