# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# gcc and make: a two-file C program built by a Makefile (parallel, -j2), run, rebuilt after a
# touch; then ar and a static library.
. "$(dirname "$0")/compat.sh"
cd "$TMPDIR" || fail "cd"
cat >a.c <<'C'
int twice(int x) { return 2 * x; }
C
cat >main.c <<'C'
#include <stdio.h>
int twice(int);
int main(void) { printf("%d\n", twice(21)); return 0; }
C
printf 'prog: main.o a.o\n\t$(CC) -o $@ $^\nlib.a: a.o\n\tar rcs $@ $^\n' >Makefile
check "make -j2" make -s -j2 prog lib.a
check "run" [ "$(./prog)" = 42 ]
sleep 0.01; touch a.c
check "rebuild" make -s prog
check "static lib" [ -s lib.a ]
report
