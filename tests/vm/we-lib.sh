# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# we-lib.sh - TAP helpers shared by tests/vm/worked-example.sh and the coordinator script it
# writes (sourced; busybox sh).
fails=0
ok() {
    if [ "$1" = 1 ]; then echo "ok 0 - worked example: $2"; else echo "not ok 0 - worked example: $2"; fails=$((fails + 1)); fi
}
has() { case "$1" in *"$2"*) return 0 ;; esac; return 1; }
waitfor() {
    i=0
    while [ ! -e "$1" ] && [ $i -lt "$2" ]; do sleep 0.1; i=$((i + 1)); done
    [ -e "$1" ]
}
