#!/usr/bin/env python3
"""Edit the version table in place (tests/fsck/p9-* cases).

   vtable_edit.py IMAGE BLOCK crc|nocrc OFFSET=HEXBYTES...

BLOCK is the table's first block (tux3debug bmap <3> 0; 4096-byte blocks,
a table of at most 63 records).  Each OFFSET (decimal, from the table's
start) gets the bytes HEXBYTES.  With crc, the CRC32C at byte 12 is made
good again over the header and the header's top records, so that only
the decoder's field rules or the tree's rules can catch the damage.
"""
import struct
import sys

from crc32c import crc32c


def main():
    path, block, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(path, 'r+b') as f:
        f.seek(block * 4096)
        t = bytearray(f.read(4096))
        for edit in sys.argv[4:]:
            off, data = edit.split('=')
            raw = bytes.fromhex(data)
            t[int(off):int(off) + len(raw)] = raw
        if mode == 'crc':
            top = struct.unpack('>I', t[8:12])[0]
            size = min(64 + 64 * top, len(t))
            t[12:16] = b'\0\0\0\0'
            t[12:16] = struct.pack('>I', crc32c(bytes(t[:size])))
        f.seek(block * 4096)
        f.write(t)


main()
