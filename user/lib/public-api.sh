#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Prints the names of the functions libmnc's public headers declare (user/include/mnc/*.h), one
# per line, sorted: every `mnc_name(` at the start of a declaration that is not static inline.
# The Makefile turns the list into libmnc.so's version script; tests/integration/test_layout
# compares it with what libmnc.so exports.
set -eu
dir=${1:-user/include/mnc}
# join continuation lines so that a prototype is one line, drop comments, keep non-static
# declarations, take the name before the first "("
cat "$dir"/*.h |
    sed -e 's://.*$::' |
    awk 'BEGIN { c = 0 }
         { line = $0
           while (1) {
             if (c) { i = index(line, "*/"); if (!i) { line = ""; break } line = substr(line, i + 2); c = 0 }
             i = index(line, "/*"); if (!i) break
             rest = substr(line, i + 2); j = index(rest, "*/")
             if (j) line = substr(line, 1, i - 1) " " substr(rest, j + 2)
             else { line = substr(line, 1, i - 1); c = 1; break }
           }
           print line }' |
    grep -v '^[[:space:]]*static' |
    grep -v '^[[:space:]]*#' |
    grep -oE '^[A-Za-z_][A-Za-z0-9_ \*]*[ \*](mnc_[a-z0-9_]+)\(' |
    grep -oE 'mnc_[a-z0-9_]+\($' |
    sed 's/($//' | sort -u
