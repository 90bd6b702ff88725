# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""taint.py PYLIB SOCKET OBJECT CMD ARGS...: receives OBJECT through mncd (the agent is tainted
by its contract from then on, every process of it), then execs CMD in the same process, so the
workload runs tainted exactly as an agent that received before doing its work."""
import os
import sys

sys.path.insert(0, sys.argv[1])
from mnc_client import Client  # noqa: E402

with Client(sys.argv[2]) as c:
    r = c.recv(obj=sys.argv[3])
if not r.get("ok"):
    sys.exit("taint.py: recv refused: %s" % r)
os.execvp(sys.argv[4], sys.argv[4:])
