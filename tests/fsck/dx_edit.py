#!/usr/bin/env python3
"""Edit a directory index block in place (tests/fsck/p5-dir-index-* cases).

   dx_edit.py IMAGE BLOCKSIZE BLOCK LOGICAL DIR_INUM KIND OFFSET=HEXBYTES...

BLOCK is the index block's physical block (tux3debug bmap DIR LOGICAL), of
kind KIND (1 root, 2 table, 3 bucket; checked).  Each OFFSET (decimal,
from the block's start) gets the bytes HEXBYTES, then the CRC at byte 36
is made good again (format.md 15.5: CRC32C of be64 DIR_INUM, be64
LOGICAL, then the block with bytes 36-39 zero), so that only the index's
own rules can catch the damage.
"""
import struct
import sys

from crc32c import crc32c


def main():
    path = sys.argv[1]
    bs, block, logical, inum, kind = (int(a) for a in sys.argv[2:7])
    with open(path, 'r+b') as f:
        f.seek(block * bs)
        b = bytearray(f.read(bs))
        if b[16:20] != b'T3DX' or b[20] != kind:
            sys.exit("dx_edit: block %d is not an index block of kind %d"
                     % (block, kind))
        for edit in sys.argv[7:]:
            off, data = edit.split('=')
            raw = bytes.fromhex(data)
            b[int(off):int(off) + len(raw)] = raw
        c = crc32c(struct.pack('>QQ', inum, logical))
        c = crc32c(bytes(b[:36]) + bytes(4) + bytes(b[40:]), c)
        b[36:40] = struct.pack('>I', c)
        f.seek(block * bs)
        f.write(b)


main()
