# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The discloser, launched once per corpus run by `mncctl run --agent worker`: for each contract
name read on stdin it discloses a receipt under it and prints mncd's answer (one JSON line)."""
import json
import sys

sys.path.insert(0, sys.argv[1])
from mnc_client import Client  # noqa: E402

c = Client(sys.argv[2])
for line in sys.stdin:
    r = c.disclose(contract=line.strip(), state={"fields": {"selected_slot": "Thu 10:00"}})
    print(json.dumps(r), flush=True)
