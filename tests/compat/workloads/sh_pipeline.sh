# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bash: pipelines, process substitution, here-strings, a background job and wait, a temporary
# file through mktemp, flock(1) on a file of the workspace (untainted; refused cleanly once tainted).
. "$(dirname "$0")/compat.sh"
set -o pipefail
n=$(seq 1 10000 | grep 7 | sort -rn 2>/dev/null | head -3 | tr '\n' ' ')
check "pipeline" [ "$n" = "9997 9987 9979 " ]
check "process substitution" diff <(printf 'a\nb\n') <(printf 'a\nb\n')
read -r w _ <<<"here string"; check "here-string" [ "$w" = here ]
(sleep 0.05; echo bg >"$TMPDIR/bg") & wait $!
check "background job" grep -q bg "$TMPDIR/bg"
f=$(mktemp); echo data >"$f"; check "mktemp" grep -q data "$f"; rm -f "$f"
# a lock is every user's to read in /proc/locks: refused once tainted (docs/compat.md, "Locks")
case $COMPAT_ID in
    *untainted) check "flock" flock "$TMPDIR/lock" -c true ;;
    *) e=$(flock "$TMPDIR/lock" -c true 2>&1) && fail "a tainted agent took a lock"
       case $e in *"not permitted"*) ;; *) fail "flock refused unclearly: $e" ;; esac
       check "mkdir as a lock (the workaround)" mkdir "$TMPDIR/lock.d" && rmdir "$TMPDIR/lock.d" ;;
esac
report
