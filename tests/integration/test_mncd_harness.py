# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Shared helpers for the test_mncd_* integration tests (not a test itself: not executable).

Starts a real mncd on a temporary socket and state dir, runs agent processes each in its own
cgroup v2 child (so the daemon identifies them by the kernel, not by anything they say), and
prints TAP.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
MNCD = os.path.join(BUILD, "mncd")
MNCCTL = os.path.join(BUILD, "mncctl")
sys.path.insert(0, os.path.join(ROOT, "user", "python"))
# Agents under `mncctl run` run as their own uid and read only the system directories plus what
# they are granted (--read): a system interpreter, and a staged copy of the client and the test
# agents in a world-traversable directory (the clone itself may sit under a 0700 home). Tests
# pass PYLIB / AGENTS_DIR to agents and AGENT_READ to `mncctl run`.
AGENT_PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


def _stage_agent_files():
    import atexit
    d = tempfile.mkdtemp(prefix="mnc-agentfiles.")
    os.chmod(d, 0o755)
    for src, name in ((os.path.join(ROOT, "user", "python"), "python"),
                      (os.path.join(ROOT, "tests", "integration", "agents"), "agents"),
                      (os.path.join(ROOT, "tests", "eval"), "eval")):
        shutil.copytree(src, os.path.join(d, name), ignore=shutil.ignore_patterns("__pycache__"))
        for base, dirs, files in os.walk(os.path.join(d, name)):
            for x in dirs + files:
                os.chmod(os.path.join(base, x), 0o755)
    atexit.register(shutil.rmtree, d, True)
    return d


STAGE = _stage_agent_files()
PYLIB = os.path.join(STAGE, "python")
AGENTS_DIR = os.path.join(STAGE, "agents")
EVAL_DIR = os.path.join(STAGE, "eval")
AGENT_READ = ["--read", STAGE]
from mnc_client import Client  # noqa: E402,F401


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, detail=""):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, name))
        else:
            self.failed += 1
            print("not ok %d - %s" % (self.n, name))
            if detail:
                for l in str(detail).splitlines()[:20]:
                    print("#   " + l)
        sys.stdout.flush()
        return cond

    def done(self):
        print("1..%d" % self.n)
        sys.exit(1 if self.failed else 0)


def cgroup2_mount():
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            if parts[2] == "cgroup2":
                return parts[1]
    return None


def test_policy(tmp, short_seconds=1):
    """The worked example's policy with sink paths inside tmp, plus a short-lived contract
    (share_short: seconds=short_seconds, memory allowed) for expiry tests."""
    with open(os.path.join(ROOT, "policies", "scheduling.json")) as f:
        p = json.load(f)
    for s in p.get("sinks", []):
        if "path" in s:
            s["path"] = os.path.join(tmp, "sinks", s["name"])
    os.makedirs(os.path.join(tmp, "sinks"), exist_ok=True)
    share = [c for c in p["contracts"] if c["id"] == "share_availability"][0]
    short = dict(share, id="share_short", purpose="share_short",
                 lifetime={"seconds": short_seconds})
    p["contracts"].append(short)
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as f:
        json.dump(p, f)
    return path


def state_example():
    with open(os.path.join(ROOT, "policies", "examples", "scheduling-state.json")) as f:
        return json.load(f)


class Daemon:
    def __init__(self, tmp, config=None, wrapper=None, policy=None):
        self.tmp = tmp
        self.sock = os.path.join(tmp, "mncd.sock")
        self.state = os.path.join(tmp, "state")
        self.policy = policy or test_policy(tmp)
        self.cfg = os.path.join(tmp, "config.json")
        with open(self.cfg, "w") as f:
            # The kernel layer defaults to on (auto) and would attach to the host's default pin
            # root; these tests exercise the userspace monitor, so they say "off" explicitly
            # (a test may still pass its own "kernel").
            json.dump(dict({"kernel": "off"}, **(config or {})), f)
        self.wrapper = wrapper or []
        self.proc = None
        self.log = os.path.join(tmp, "mncd.log")

    def start(self, expect_fail=False):
        args = self.wrapper + [MNCD, "--config", self.cfg, "--socket", self.sock,
                               "--state-dir", self.state, "--policy", self.policy]
        self.logf = open(self.log, "ab")
        self.proc = subprocess.Popen(args, stdout=self.logf, stderr=self.logf)
        deadline = time.time() + (60 if self.wrapper else 10)
        while time.time() < deadline:
            if self.proc.poll() is not None:
                if expect_fail:
                    return self.proc.returncode
                raise RuntimeError("mncd exited %d: %s" % (self.proc.returncode, self.read_log()))
            if os.path.exists(self.sock):
                try:
                    s = socket.socket(socket.AF_UNIX)
                    s.connect(self.sock)
                    s.close()
                    return 0
                except OSError:
                    pass
            time.sleep(0.02)
        raise RuntimeError("mncd did not come up: " + self.read_log())

    def read_log(self):
        try:
            with open(self.log, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        return self.proc.returncode

    def client(self):
        return Client(self.sock)

    def mncctl(self, *args):
        r = subprocess.run([MNCCTL, "--socket", self.sock] + list(args), capture_output=True,
                           text=True)
        return r.returncode, r.stdout + r.stderr

    def names(self, text, value):
        """Does a keyed token in text name value? mncd records a value an agent chose as
        "h:SALT.MAC" (docs/threat-model.md, "Records about agents"), salted afresh each time;
        this daemon's key (STATE/audit.key) tells which tokens name what (`mncctl audit find`)."""
        import hashlib
        import hmac
        import re
        with open(os.path.join(self.state, "audit.key"), "rb") as f:
            key = f.read()
        v = str(value).encode() if not isinstance(value, bytes) else value
        for m in re.finditer(r"h:([0-9a-f]{8})\.([0-9a-f]{16})", text or ""):
            mac = hmac.new(key, bytes.fromhex(m.group(1)) + v, hashlib.sha256).hexdigest()[:16]
            if mac == m.group(2):
                return True
        return False


ADMIN_UID = 65534  # for tests whose own uid (root) is mapped to an agent: an agent is never admin


def admin_status(daemon, uid=ADMIN_UID):
    """`mncctl --json status` run as `uid` (the daemon's configured "admin_uid", not an agent):
    for tests in which root is an agent by uid. The socket's directory must be reachable by uid."""
    def drop():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    r = subprocess.run([MNCCTL, "--socket", daemon.sock, "--json", "status"], capture_output=True,
                       text=True, preexec_fn=drop)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"ok": False, "error": r.stdout + r.stderr}


AGENT_SCRIPT = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
from mnc_client import Client
c = Client(sys.argv[2])
for line in sys.stdin:
    req = json.loads(line)
    verb = req.pop("verb")
    print(json.dumps(c.call(verb, **req)), flush=True)
"""


class Agents:
    """One process per agent, each in its own cgroup v2 child; cgroup -> agent goes into the
    daemon config."""

    def __init__(self, names):
        self.mnt = cgroup2_mount()
        if not self.mnt:
            raise RuntimeError("no cgroup2 mount in /proc/mounts")
        self.base_rel = "/mnc-test-%d" % os.getpid()
        self.base = self.mnt + self.base_rel
        os.makedirs(self.base, exist_ok=True)
        self.names = names
        self.procs = {}
        for n in names:
            os.makedirs(os.path.join(self.base, n), exist_ok=True)

    def config(self):
        return {n: "%s/%s" % (self.base_rel, n) for n in self.names}

    def cgroups_config(self):
        return {"%s/%s" % (self.base_rel, n): n for n in self.names}

    def start(self, sock):
        for n in self.names:
            procs_file = os.path.join(self.base, n, "cgroup.procs")

            def enter(pf=procs_file):
                with open(pf, "w") as f:
                    f.write("0")

            self.procs[n] = subprocess.Popen(
                [sys.executable, "-c", AGENT_SCRIPT, os.path.join(ROOT, "user", "python"), sock],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=enter)

    def call(self, name, verb, **args):
        p = self.procs[name]
        args["verb"] = verb
        p.stdin.write(json.dumps(args) + "\n")
        p.stdin.flush()
        line = p.stdout.readline()
        if not line:
            raise RuntimeError("agent %s died" % name)
        return json.loads(line)

    def stop(self):
        for p in self.procs.values():
            try:
                p.stdin.close()
                p.wait(5)
            except Exception:
                p.kill()
        self.procs = {}
        for n in self.names:
            try:
                os.rmdir(os.path.join(self.base, n))
            except OSError:
                pass
        try:
            os.rmdir(self.base)
        except OSError:
            pass


def tmpdir():
    return tempfile.mkdtemp(prefix="mncd-test.")


def cleanup(tmp):
    shutil.rmtree(tmp, ignore_errors=True)
