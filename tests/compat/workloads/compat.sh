# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What every shell workload shares (sourced): check and report, which POSTs "OK <workload>
# <mode>" to $COMPAT_SINK with curl. Exit 0 reported, 3 refused with EPERM/EACCES (a clean
# denial), 1 anything else.
fail() { echo "compat $COMPAT_ID: FAIL $*" >&2; exit 1; }
check() { local what=$1; shift; "$@" || fail "$what"; }
# refused MESSAGE: exit 3 if curl's verbose output says the kernel refused the connection
# (curl's one-line error, "Couldn't connect to server", does not carry the errno), else fail.
refused() {
    case $1 in
        *"Operation not permitted"* | *"Permission denied"*)
            echo "compat $COMPAT_ID: denied: $(printf '%s\n' "$1" | grep -m1 -E 'not permitted|denied')"; exit 3 ;;
    esac
    fail "$1"
}
report() {
    local out
    if out=$(curl -sS --max-time 20 --data-binary "OK $COMPAT_ID $*" "$COMPAT_SINK" 2>&1); then
        case $out in "got "*) echo "compat $COMPAT_ID: reported"; return 0 ;; esac
        fail "sink answered: $out"
    fi
    refused "report: $(curl -sS -v --max-time 20 --data-binary x "$COMPAT_SINK" 2>&1)"
}
