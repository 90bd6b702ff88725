#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The launch cost of `mncctl run` against bare launches (tests/bench/bench_launch.py).
exec /usr/bin/python3 "$(dirname "$0")/bench_launch.py" "$@"
