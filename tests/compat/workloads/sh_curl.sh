# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# curl: a GET (keepalive on, as curl's default), then the POST of compat.sh's report.
. "$(dirname "$0")/compat.sh"
g=$(curl -sS -v --max-time 20 "$COMPAT_SINK" 2>"$TMPDIR/curl.err") || refused "GET: $(cat "$TMPDIR/curl.err")"
check "GET" [ "$g" = pong ]
report
