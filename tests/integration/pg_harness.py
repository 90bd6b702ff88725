# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A throwaway PostgreSQL server for the fleet tests (not a test itself: not executable).

Debian's postgresql package: `initdb` in a temporary directory, `pg_ctl` on a private UNIX
socket directory (no TCP listener), both run as an unprivileged user (tests run as root, and
PostgreSQL refuses to run as root). Local connections are trusted, except the role
`mnc_pw`, which must authenticate with a password (scram-sha-256) - the wrong-credentials
tests use it.
"""
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

PG_USER = os.environ.get("MNC_PG_USER", "nobody")


def bindir():
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(d, "initdb"), os.X_OK):
            return d
    raise RuntimeError("PostgreSQL server binaries not found (make deps installs postgresql)")


class Postgres:
    def __init__(self, prefix="mnc-pg."):
        self.bin = bindir()
        pw = pwd.getpwnam(PG_USER)
        self.uid, self.gid = pw.pw_uid, pw.pw_gid
        self.dir = tempfile.mkdtemp(prefix=prefix)
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "sock")
        self.log = os.path.join(self.dir, "postgres.log")
        for d in (self.data, self.sock):
            os.mkdir(d, 0o700)
            os.chown(d, self.uid, self.gid)
        open(self.log, "w").close()
        os.chown(self.log, self.uid, self.gid)
        self._as_user([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "postgres",
                       "-A", "trust", "-E", "UTF8", "--no-instructions"])
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write("local all mnc_pw scram-sha-256\nlocal all all trust\n")
        self.running = False

    def _as_user(self, argv, check=True, **kw):
        def drop():
            os.setgroups([])
            os.setgid(self.gid)
            os.setuid(self.uid)
        r = subprocess.run(argv, preexec_fn=drop, capture_output=True, text=True,
                           cwd=self.dir, **kw)
        if check and r.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(argv), r.stdout + r.stderr))
        return r

    def start(self, extra=""):
        opts = ("-k %s -c listen_addresses='' -c unix_socket_permissions=0777 "
                "-c max_connections=100 %s" % (self.sock, extra))
        r = self._as_user([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", self.log,
                           "-w", "-t", "60", "-o", opts, "start"], check=False)
        if r.returncode != 0:
            with open(self.log) as f:
                raise RuntimeError("pg_ctl start: %s\n%s" % (r.stdout + r.stderr,
                                                              f.read()[-2000:]))
        self.running = True

    def pid(self):
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def kill9(self):
        """SIGKILL the postmaster only (as a crash would), then wait for its children to
        notice and exit, so that a restart finds no stale shared memory users."""
        pid = self.pid()
        kids = []
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    with open("/proc/%s/stat" % p) as f:
                        if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                            kids.append(int(p))
                except (OSError, ValueError, IndexError):
                    pass
        os.kill(pid, signal.SIGKILL)
        end = time.time() + 30
        for k in kids + [pid]:
            while time.time() < end:
                try:
                    os.kill(k, 0)
                except ProcessLookupError:
                    break
                # a zombie child of the dead postmaster is reaped by init
                try:
                    with open("/proc/%d/stat" % k) as f:
                        if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                            break
                except OSError:
                    break
                time.sleep(0.05)
        # The dead postmaster may linger as a zombie (its parent pg_ctl exited, and a
        # subreaper above us may not reap promptly); PostgreSQL's lock-file check would take
        # it for a live server. Reap it if it is ours; otherwise, with every process of the
        # cluster gone, remove the stale lock file as an operator would.
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        try:
            with open("/proc/%d/stat" % pid) as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            zombie = False
        if zombie:
            for f in (os.path.join(self.data, "postmaster.pid"),
                      os.path.join(self.sock, ".s.PGSQL.5432.lock")):
                try:
                    os.unlink(f)
                except FileNotFoundError:
                    pass
        self.running = False

    def stop(self):
        if self.running:
            self._as_user([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "fast",
                           "-w", "stop"], check=False)
            self.running = False

    def conninfo(self, db="mnc", user="postgres", extra=""):
        return ("host=%s port=5432 dbname=%s user=%s %s" % (self.sock, db, user, extra)).strip()

    def psql(self, sql, db="mnc", check=True):
        r = subprocess.run(["psql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h",
                            self.sock, "-U", "postgres", "-d", db, "-c", sql],
                           capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError("psql: %s: %s" % (sql, r.stderr))
        return r.stdout.strip() if check else r

    def createdb(self, name):
        self.psql("CREATE DATABASE %s" % name, db="postgres")

    def cleanup(self):
        try:
            self.stop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
