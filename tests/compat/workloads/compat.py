# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What every Python workload shares: check() for its local results and report(), which POSTs
"OK <workload> <mode>" to the sink ($COMPAT_SINK) the way the workload itself would talk to it.
Exit status (run-compat reads it): 0 reported; 3 the report was refused with EPERM/EACCES (a
clean denial: expected where the scope forbids the sink); 1 anything else."""
import errno
import os
import sys
import urllib.error
import urllib.request

ID = os.environ.get("COMPAT_ID", "? ?")
SINK = os.environ.get("COMPAT_SINK", "")


def fail(msg):
    sys.stderr.write("compat %s: FAIL %s\n" % (ID, msg))
    sys.exit(1)


def check(cond, what):
    if not cond:
        fail(what)


def denied_errno(e):
    while e is not None:
        if isinstance(e, OSError) and e.errno in (errno.EPERM, errno.EACCES):
            return e.errno
        e = getattr(e, "reason", None) if isinstance(e, urllib.error.URLError) else e.__cause__ or e.__context__
    return 0


def refused(e):
    """Exit 3 if e is a clean EPERM/EACCES refusal, 1 otherwise."""
    en = denied_errno(e)
    if en:
        print("compat %s: denied (%s): %s" % (ID, errno.errorcode[en], e), flush=True)
        sys.exit(3)
    fail("report: %r" % (e,))


def report(detail=""):
    body = ("OK %s %s" % (ID, detail)).strip().encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(SINK, data=body, method="POST"), timeout=20) as r:
            check(r.status == 200, "sink answered %d" % r.status)
    except Exception as e:  # noqa: BLE001 (judged by refused)
        refused(e)
    print("compat %s: reported" % ID, flush=True)
