# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""sqlite3 in the workspace: a rollback-journal database, then WAL with a second connection
reading while the first writes. Untainted, with SQLite's default locking (POSIX advisory locks,
the -shm file mapped shared). Tainted, a lock is a value every user reads in /proc/locks, so
the launcher refuses it (docs/compat.md, "Locks"): the default VFS must fail cleanly (an
OperationalError, no crash), and the documented way works: the unix-dotfile VFS (no kernel lock;
WAL with locking_mode=EXCLUSIVE, which keeps its index in the process's heap)."""
import os
import sqlite3

import compat

ws = os.environ["TMPDIR"]
tainted = compat.ID.split()[-1] != "untainted"


def connect(name):
    if not tainted:
        return sqlite3.connect(os.path.join(ws, name))
    return sqlite3.connect("file:%s?vfs=unix-dotfile" % os.path.join(ws, name), uri=True)


if tainted:
    try:
        sqlite3.connect(os.path.join(ws, "default.db")).execute("create table t (x)")
        compat.fail("a tainted agent took a lock with the default VFS")
    except sqlite3.OperationalError as e:
        print("compat %s: default VFS refused cleanly: %s" % (compat.ID, e), flush=True)
db = connect("plain.db")
db.execute("create table t (k integer primary key, v text)")
db.executemany("insert into t (v) values (?)", [("v%d" % i,) for i in range(100)])
db.commit()
compat.check(db.execute("select count(*) from t").fetchone()[0] == 100, "rollback journal")
db.close()
a = connect("wal.db")
if tainted:
    a.execute("pragma locking_mode=exclusive")
compat.check(a.execute("pragma journal_mode=wal").fetchone()[0] == "wal", "journal_mode=wal")
a.execute("create table t (k integer primary key, v text)")
a.commit()
if not tainted:
    b = sqlite3.connect(os.path.join(ws, "wal.db"))
    a.execute("insert into t (v) values ('x')")
    compat.check(b.execute("select count(*) from t").fetchone()[0] == 0, "reader isolation")
    a.commit()
    compat.check(b.execute("select count(*) from t").fetchone()[0] == 1, "reader sees the commit")
    b.close()
else:
    a.execute("insert into t (v) values ('x')")
    a.commit()
    compat.check(a.execute("select count(*) from t").fetchone()[0] == 1, "WAL, exclusive")
a.execute("pragma wal_checkpoint(truncate)")
a.close()
compat.report("rows=100+1")
