#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""mncd_instr.py - instructions mncd executes per operation, counted by valgrind's callgrind
(exact and repeatable, unlike CPU time on a shared VM). Run as root from the repo root:

    python3 tests/tools/mncd_instr.py BUILD_DIR N D OUT

starts BUILD_DIR/mncd under callgrind (kernel layer off, state in a fresh /tmp dir), makes one
disclose, then N send+recv round trips of one worker/coordinator pair (2N operations, each
request written with the agent's uid as its real uid, as bench_mncd does), then D discloses,
stops mncd and leaves the callgrind profile in OUT (callgrind_annotate OUT). Per-operation
figures are differences between two runs, which cancel start-up: e.g. (N=1100 minus N=100)
/ 2000 instructions per send or recv. docs/mncd.md, "Performance", has the figures."""
import os, socket, subprocess, sys, tempfile, time, json, signal
build, N, D, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
W, C = 61001, 61002
d = tempfile.mkdtemp(prefix='cpu-cg.', dir='/tmp'); os.chmod(d, 0o755)
cfg = d + '/config.json'; sock = d + '/mncd.sock'
open(cfg, 'w').write(json.dumps({"kernel": "off", "agents": {"worker": {"uid": W}, "coordinator": {"uid": C}}}))
repo = os.getcwd()
p = subprocess.Popen(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out, os.path.abspath(build) + '/mncd', '--config', cfg,
                      '--socket', sock, '--state-dir', d + '/state', '--policy', repo + '/policies/scheduling.json'],
                     stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
def conn(uid):
    os.setresuid(-1, uid, -1)
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(sock); return s
    finally:
        os.setresuid(-1, 0, -1)
for i in range(600):
    try:
        w = conn(W); break
    except OSError:
        time.sleep(0.1)
c = conn(C)
bufs = {}
def call(s, uid, req):
    os.setresuid(uid, uid, -1)
    s.sendall(req)
    os.setresuid(0, 0, -1)
    b = bufs.get(s, b'')
    while b'\n' not in b:
        b += s.recv(65536)
    line, _, rest = b.partition(b'\n'); bufs[s] = rest
    return line
st = ' '.join(open(repo + '/policies/examples/scheduling-state.json').read().split('\n'))
dreq = ('{"verb":"disclose","contract":"share_availability","state":%s}\n' % st).encode()
r = call(w, W, dreq)
try:
    oid = json.loads(r)['object']['id']
except KeyError:
    sys.exit(r)
sreq = ('{"verb":"send","object":"%s","to":"coordinator"}\n' % oid).encode()
rreq = b'{"verb":"recv","max":1}\n'
for i in range(N):
    a = call(w, W, sreq); b = call(c, C, rreq)
    if b'"ok":true' not in a or b'"ok":true' not in b or b'"messages":[]' in b:
        sys.exit('bad: %s %s' % (a, b))
for i in range(D):
    a = call(w, W, dreq)
    if b'"ok":true' not in a:
        sys.exit('bad disclose: %s' % a)
p.send_signal(signal.SIGTERM); p.wait()
subprocess.run(['rm', '-rf', d])
