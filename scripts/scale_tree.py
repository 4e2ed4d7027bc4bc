#!/usr/bin/env python3
"""Make a tree of N small files for make bench-scale.

scale_tree.py DIR N [--empty] [--flat]

Files of 0 to 1,500 bytes (a fixed pseudo-random sequence, so every run
makes the same tree) in directories of 1,000 entries, those directories
themselves grouped 1,000 to a parent; --empty makes empty files (the
10M-file tree, which would not fit on disk twice over otherwise); --flat
puts all N files in DIR itself (the single-directory row).  Every 1,000th
file gets a second name (a hard link) so populate's link table is used.
"""
import os
import sys


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    empty = "--empty" in sys.argv
    flat = "--flat" in sys.argv
    if len(args) != 2:
        sys.exit(__doc__)
    top, count = args[0], int(args[1])
    os.makedirs(top, exist_ok=True)
    payload = bytes(range(256)) * 6
    seed = 12345
    for i in range(count):
        if flat:
            folder = top
        else:
            folder = os.path.join(top, "g%04d" % (i // 1000000),
                                  "d%04d" % (i // 1000 % 1000))
            if i % 1000 == 0:
                os.makedirs(folder, exist_ok=True)
        name = os.path.join(folder, "f%07d" % i)
        seed = (seed * 1103515245 + 12345) & 0x7fffffff
        size = 0 if empty else seed % 1501
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        if size:
            os.write(fd, payload[:size])
        os.close(fd)
        if i % 1000 == 999:
            os.link(name, name + ".link")


if __name__ == "__main__":
    main()
