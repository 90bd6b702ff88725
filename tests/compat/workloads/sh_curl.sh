# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# curl: a GET (keepalive on, as curl's default), then the POST of compat.sh's report.
. "$(dirname "$0")/compat.sh"
if ! g=$(curl -sS --max-time 20 "$COMPAT_SINK" 2>&1); then
    case $g in *"Operation not permitted"* | *"Permission denied"*) echo "compat $COMPAT_ID: denied: $g"; exit 3 ;; esac
    fail "GET: $g"
fi
check "GET" [ "$g" = pong ]
report
