# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The agent's own identity: pwd/grp entries for its uid and gid, getpass.getuser(), the home
directory, os.getlogin-free lookups, and `id -un` / `whoami` as children."""
import getpass
import grp
import os
import pwd
import subprocess

import compat

pw = pwd.getpwuid(os.getuid())
compat.check(pw.pw_uid == os.getuid() and pw.pw_name, "getpwuid")
compat.check(pwd.getpwnam(pw.pw_name).pw_uid == os.getuid(), "getpwnam")
compat.check(grp.getgrgid(os.getgid()).gr_name, "getgrgid")
compat.check(getpass.getuser() == pw.pw_name, "getpass.getuser")
home = os.path.expanduser("~")
compat.check(os.path.isdir(home) and os.access(home, os.W_OK), "home %s usable" % home)
for cmd in (["id", "-un"], ["whoami"]):
    compat.check(subprocess.check_output(cmd, text=True).strip() == pw.pw_name, " ".join(cmd))
compat.report(pw.pw_name)
