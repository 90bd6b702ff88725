# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""subprocess: run with input and captured output, a two-process pipeline, communicate() with a
timeout, and check_output of a shell."""
import subprocess

import compat

r = subprocess.run(["sort", "-r"], input="a\nc\nb\n", capture_output=True, text=True, timeout=20)
compat.check(r.returncode == 0 and r.stdout == "c\nb\na\n", "sort -r: %r" % (r,))
p1 = subprocess.Popen(["seq", "1", "1000"], stdout=subprocess.PIPE)
p2 = subprocess.Popen(["wc", "-l"], stdin=p1.stdout, stdout=subprocess.PIPE, text=True)
p1.stdout.close()
out, _ = p2.communicate(timeout=20)
compat.check(out.strip() == "1000" and p1.wait(10) == 0, "seq | wc -l: %r" % out)
p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
o, e = p.communicate(b"x" * 200000, timeout=20)
compat.check(len(o) == 200000, "cat of 200 kB: %d" % len(o))
compat.check(subprocess.check_output("echo $((6*7))", shell=True, text=True).strip() == "42", "sh -c")
compat.report()
