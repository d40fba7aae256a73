# Turns a data file into a C source defining `const char NAME[]` (NUL-terminated),
# so shipped defaults (schema, rules, catalog, Chart.js) live inside the binary.
# Usage: cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
math(EXPR len "${n} / 2")
file(WRITE "${OUT}" "/* generated from ${IN} by cmake/embed.cmake; do not edit */\n#include <stddef.h>\nconst char ${NAME}[] = {\n${body}0x00};\nconst size_t ${NAME}_len = ${len};\n")
