#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Report dependency cycles between source files, from the objects the build produced.

A source file A depends on B when A's object references a global symbol that B's object
defines (nm: U in A, T/D/B/R in B). A cycle is a strongly connected component of that graph
with more than one file. Headers are not nodes: one header shared by many .c files (mncd.h)
says nothing about who calls whom; the linker's view does.

usage: depcycles.py BUILD_DIR DIR...   (DIR: source folders such as user/lib loader user/mncd)
Prints TAP: one test per DIR (no cycle inside it) and one over all of them together
(no cycle across folders). Exits 1 if any cycle exists.
"""
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj], capture_output=True, text=True, check=True).stdout
    defined = {l.split()[-1] for l in out.splitlines() if len(l.split()) >= 3}
    out = subprocess.run(["nm", "-u", obj], capture_output=True, text=True, check=True).stdout
    undefined = {l.split()[-1] for l in out.splitlines() if l.strip()}
    return defined, undefined


def sccs(nodes, edges):
    """Tarjan's algorithm, iterative; returns the components with more than one node."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def graph(build, dirs):
    defs, uses = {}, {}
    for d in dirs:
        objdir = os.path.join(build, "obj", d)
        # Sources, not objects, name the nodes: an object left behind by a deleted file must
        # not count, and a source without its object is an error (build first).
        for f in sorted(os.listdir(d)):
            if f.endswith(".c"):
                src = os.path.join(d, f)
                obj = os.path.join(objdir, f[:-2] + ".o")
                if not os.path.isfile(obj):
                    raise SystemExit(f"depcycles: {obj} missing (build first)")
                defs[src], uses[src] = symbols(obj)
    owner = {}
    for src, ds in defs.items():
        for s in ds:
            owner[s] = src
    edges = {src: set() for src in defs}
    why = {}
    for src, us in uses.items():
        for s in us:
            dst = owner.get(s)
            if dst and dst != src:
                edges[src].add(dst)
                why.setdefault((src, dst), s)
    return sorted(defs), edges, why


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    build, dirs = sys.argv[1], sys.argv[2:]
    groups = [[d] for d in dirs] + [dirs]
    print(f"1..{len(groups)}")
    bad = False
    for n, g in enumerate(groups, 1):
        nodes, edges, why = graph(build, g)
        cycles = sccs(nodes, edges)
        name = "no dependency cycle between source files in " + " ".join(g)
        if not cycles:
            print(f"ok {n} - {name} ({len(nodes)} files)")
            continue
        bad = True
        print(f"not ok {n} - {name}")
        for comp in cycles:
            print("# cycle: " + " <-> ".join(comp))
            for a in comp:
                for b in sorted(edges[a] & set(comp)):
                    print(f"#   {a} -> {b} ({why[(a, b)]})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
