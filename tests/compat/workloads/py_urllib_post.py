# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""urllib: a GET, then a POST of the result to the allowed sink (compat.report is that POST)."""
import urllib.request

import compat

try:
    with urllib.request.urlopen(compat.SINK, timeout=20) as r:
        compat.check(r.read() == b"pong\n", "GET")
except Exception as e:  # noqa: BLE001
    compat.refused(e)
compat.report()
