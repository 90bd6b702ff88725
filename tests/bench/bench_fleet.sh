#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Fleet mode: charges/s and latency on a shared PostgreSQL ledger vs the local journal vs
# PostgreSQL's own single-row INSERT floor (tests/bench/fleet/bench_fleet.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 tests/bench/fleet/bench_fleet.py "$@"
