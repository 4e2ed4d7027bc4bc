#!/usr/bin/env python3
"""layers.py - measure the layering of libtux3 from its own calls and includes.

Usage: python3 scripts/layers.py [--max-up N] [--max-loop N] BUILD_DIR [SRC_TOP]
  * Call graph: `nm -P` on every object under BUILD_DIR/common/ (flat or in
    folders; one object per .c file).  Global defined symbols (T D B R C G S
    V W ...) and undefined ones (U, w) give an edge A -> B when A uses a
    symbol that B defines.  Symbols no library object defines (libc, the
    sanitizer runtime) are ignored.
  * Ranks: a file in a folder under common/ takes the folder's layer
    (FOLDER_RANKS); a file at the root takes one from RANKS below, keyed by
    basename (glob patterns allowed); a root file found in neither is
    reported "unranked" and given rank 2.
  * Upward call arrows: distinct pairs A -> B with rank(A) < rank(B).
  * Upward include arrows: every #include "x" in SRC_TOP/common that resolves
    (includer's folder first, then common/) to a file under common/, where
    rank(includer) < rank(included).  Headers: folder rank when in a
    subfolder; at the root, PUBLIC_HEADERS are rank -1 (never counted),
    UMBRELLA_HEADERS are not counted either way, HEADER_RANKS (or a .c of the
    same stem in RANKS) give the rank, else 2.
  * Loops: strongly connected components of the call graph (Tarjan's
    algorithm, iterative).
Exit status: 0 ok, 1 a --max-up/--max-loop limit is exceeded, 2 usage error.
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys

# Layers, bottom to top: rank -> basenames (glob patterns allowed).
# (logwrite.c, version_ops.c, vinode_data.c: the files' names before the
# layers became folders, so that the same table measures older trees.)
RANKS = {
    0: "device.c devcache.c dev_direct.c overlay.c record.c blockset.c"
       " vol_io.c crc32c.c",                                                  # io
    1: "super.c superext.c sb2.c bnode.c ileaf.c dleaf.c iattr.c"
       " dirent.c log.c fields.c",                                   # format
    2: "btree.c inode.c filemap.c namei.c xattr.c orphan.c replay.c"
       " replay_steps.c replay_index.c logscan.c bitmap.c dir.c dir_index.c"
       " dirhash.c dirhash_info.c atom.c raw.c probe.c",  # core
    3: "btree_edit.c balloc.c commit.c log_write.c logwrite.c"
       " inode_write.c filemap_write.c namei_write.c orphan_write.c"
       " atom_write.c xattr_write.c data_write.c raw_write.c"
       " repair.c fallocate.c mkfs.c",                               # write
    4: "vtree.c velist.c vextent.c vattr.c vleaf.c vfilemap.c"
       " vfilemap_write.c vinode.c vinode_write.c vinode_data.c"
       " vtable.c vtable_inode.c",                                   # version
    5: "volume.c walk.c dirhash_feature.c atime_feature.c snapshot.c snapshot_compact.c snapshot_diff.c snapshot_diff_inode.c version_ops.c",                   # top
    6: "check.c fsck*.c",                                            # check
}
FOLDER_RANKS = {"io": 0, "format": 1, "core": 2, "replay": 2, "write": 3, "version": 4,
                "top": 5, "check": 6}
PUBLIC_HEADERS = {"tux3.h", "tux3_fields.h", "tux3_fsck.h", "tux3_walk.h"}
UMBRELLA_HEADERS = set()
HEADER_RANKS = {"volume.h": 0, "record.h": 0, "endian.h": 1, "core.h": 2,
                "dir_index.h": 2,
                "version.h": 4, "vfilemap.h": 4, "vleaf.h": 4,
                "internal.h": 5, "fsck_internal.h": 6}
DEFAULT_RANK = 2
UNDEF_TYPES = "Uw"
SHOW_SYMS = 4

warnings = set()


def table_rank(base):
    return next((r for r in sorted(RANKS) if any(
        fnmatch.fnmatchcase(base, p) for p in RANKS[r].split())), None)


def file_rank(rel):
    """Rank of a library file named by its path relative to common/."""
    folder, base = os.path.split(rel)
    if base.endswith(".h"):
        return header_rank(rel)
    # A folder says its layer; the table names the files at the root
    # (two files of one name in two layers, e.g. dirhash.c, stay apart).
    rank = FOLDER_RANKS.get(folder.split("/")[0]) if folder else None
    if rank is None:
        rank = table_rank(base)
    if rank is None:
        warnings.add("unranked: " + rel)
        rank = DEFAULT_RANK
    return rank


def header_rank(rel):
    """Rank of a header; None means an umbrella header (never counted)."""
    folder, base = os.path.split(rel)
    if base in PUBLIC_HEADERS:
        return -1
    if base in UMBRELLA_HEADERS:
        return None
    if folder:
        return FOLDER_RANKS.get(folder.split("/")[0], DEFAULT_RANK)
    if base in HEADER_RANKS:
        return HEADER_RANKS[base]
    rank = table_rank(base[:-2] + ".c")
    return DEFAULT_RANK if rank is None else rank


def read_objects(objdir, srcdir=None):
    """{rel .c path: (defined set, undefined set)} from nm -P; an object
    whose source is gone (a file since moved) is left out."""
    objs = {}
    for root, dirs, files in os.walk(objdir):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".o"):
                continue
            path = os.path.join(root, name)
            if srcdir and not os.path.exists(os.path.join(
                    srcdir, os.path.relpath(path, objdir)[:-2] + ".c")):
                continue
            out = subprocess.run(["nm", "-P", path], capture_output=True,
                                 text=True, check=True).stdout
            defs, undefs = set(), set()
            for sym, kind, *_ in (l.split() for l in out.splitlines()
                                  if len(l.split()) >= 2):
                if kind in UNDEF_TYPES:
                    undefs.add(sym)
                elif kind.isupper():
                    defs.add(sym)
            rel = os.path.relpath(path, objdir)[:-2] + ".c"
            objs[rel] = (defs, undefs)
    return objs


def call_edges(objs):
    """{(A, B): set of symbols A uses that B defines}."""
    definers = {}
    for f, (defs, _) in objs.items():
        for s in defs:
            definers.setdefault(s, []).append(f)
    edges = {}
    for a, (_, undefs) in objs.items():
        for s in undefs:
            for b in definers.get(s, ()):
                if b != a:
                    edges.setdefault((a, b), set()).add(s)
    return edges


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def include_arrows(srcdir):
    """Upward (includer, included) pairs among sources under common/."""
    arrows = []
    for root, dirs, files in os.walk(srcdir):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, srcdir)
            with open(path, errors="replace") as fh:
                names = INCLUDE.findall(fh.read())
            for inc in names:
                for base in (root, srcdir):
                    target = os.path.normpath(os.path.join(base, inc))
                    if os.path.isfile(target):
                        break
                else:
                    continue
                trel = os.path.relpath(target, srcdir)
                if trel.startswith("..") or not trel.endswith((".c", ".h")):
                    continue
                ra, rb = file_rank(rel), file_rank(trel)
                if ra is not None and rb is not None and ra >= 0 and ra < rb:
                    arrows.append((rel, trel, ra, rb))
    return sorted(set(arrows))


def tarjan(nodes, succ):
    """Strongly connected components, iteratively."""
    index, low, onstack, stack, sccs, work = {}, {}, set(), [], [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        onstack.add(v)
        work.append((v, iter(succ.get(v, ()))))

    for root in nodes:
        if root in index:
            continue
        visit(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    visit(w)
                    break
                if w in onstack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        onstack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    sccs.append(sorted(comp))
    return sccs


def main():
    ap = argparse.ArgumentParser(description="Measure libtux3 layering.")
    ap.add_argument("build_dir")
    ap.add_argument("src_top", nargs="?",
                    default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--max-up", type=int, metavar="N")
    ap.add_argument("--max-loop", type=int, metavar="N")
    args = ap.parse_args()
    objdir = os.path.join(args.build_dir, "common")
    srcdir = os.path.join(args.src_top, "common")
    for d in (objdir, srcdir):
        if not os.path.isdir(d):
            print("layers: no directory " + d, file=sys.stderr)
            return 2
    try:
        objs = read_objects(objdir, srcdir)
    except (OSError, subprocess.CalledProcessError) as e:
        print("layers: nm failed: %s" % e, file=sys.stderr)
        return 2
    if not objs:
        print("layers: no objects under " + objdir, file=sys.stderr)
        return 2

    files = sorted(objs)
    rank = {f: file_rank(f) for f in files}
    edges = call_edges(objs)
    up_calls = sorted((a, b) for (a, b) in edges if rank[a] < rank[b])
    up_incs = include_arrows(srcdir)
    succ = {}
    for a, b in sorted(edges):
        succ.setdefault(a, []).append(b)
    loops = sorted(tarjan(files, succ), key=lambda c: (-len(c), c))
    largest = loops[0]

    for w in sorted(warnings):
        print(w)
    print("upward call arrows: %d" % len(up_calls))
    for a, b in up_calls:
        syms = sorted(edges[(a, b)])
        print("  %s (%d) -> %s (%d): %s%s" % (a, rank[a], b, rank[b],
              ", ".join(syms[:SHOW_SYMS]), ", ..." * (len(syms) > SHOW_SYMS)))
    print("upward include arrows: %d" % len(up_incs))
    for a, b, ra, rb in up_incs:
        print("  %s (%d) -> %s (%d)" % (a, ra, b, rb))
    print("largest loop: %d files: %s" % (len(largest), " ".join(largest)))
    print("loops: " + (" ".join(str(len(c)) for c in loops if len(c) > 1)
                       or "none"))
    for c in loops[1:]:
        if len(c) > 1:
            print("  %d files: %s" % (len(c), " ".join(c)))
    print("layers: %d files, %d upward call arrows, %d upward include arrows,"
          " largest loop %d files" % (len(files), len(up_calls), len(up_incs),
                                      len(largest)))
    status = 0
    for what, value, limit in (("upward arrows", len(up_calls) + len(up_incs),
                                args.max_up),
                               ("largest loop", len(largest), args.max_loop)):
        if limit is not None and value > limit:
            print("layers: %s %d > %d" % (what, value, limit), file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
