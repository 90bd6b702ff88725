# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bash: pipelines, process substitution, here-strings, a background job and wait, a temporary
# file through mktemp, flock(1) on a file of the workspace.
. "$(dirname "$0")/compat.sh"
set -o pipefail
n=$(seq 1 10000 | grep 7 | sort -rn | head -3 | tr '\n' ' ')
check "pipeline" [ "$n" = "9997 9987 9977 " ]
check "process substitution" diff <(printf 'a\nb\n') <(printf 'a\nb\n')
read -r w <<<"here string"; check "here-string" [ "$w" = here ]
(sleep 0.05; echo bg >"$TMPDIR/bg") & wait $!
check "background job" grep -q bg "$TMPDIR/bg"
f=$(mktemp); echo data >"$f"; check "mktemp" grep -q data "$f"; rm -f "$f"
check "flock" flock "$TMPDIR/lock" -c true
report
