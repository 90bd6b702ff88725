# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""sqlite3 in the workspace: a rollback-journal database, then WAL with a second connection
reading while the first writes (POSIX advisory locks, the -shm file mapped shared)."""
import os
import sqlite3

import compat

ws = os.environ["TMPDIR"]
db = sqlite3.connect(os.path.join(ws, "plain.db"))
db.execute("create table t (k integer primary key, v text)")
db.executemany("insert into t (v) values (?)", [("v%d" % i,) for i in range(100)])
db.commit()
compat.check(db.execute("select count(*) from t").fetchone()[0] == 100, "rollback journal")
db.close()
a = sqlite3.connect(os.path.join(ws, "wal.db"))
compat.check(a.execute("pragma journal_mode=wal").fetchone()[0] == "wal", "journal_mode=wal")
a.execute("create table t (k integer primary key, v text)")
a.commit()
b = sqlite3.connect(os.path.join(ws, "wal.db"))
a.execute("insert into t (v) values ('x')")
compat.check(b.execute("select count(*) from t").fetchone()[0] == 0, "reader isolation")
a.commit()
compat.check(b.execute("select count(*) from t").fetchone()[0] == 1, "reader sees the commit")
a.execute("pragma wal_checkpoint(truncate)")
a.close()
b.close()
compat.report("rows=100+1")
