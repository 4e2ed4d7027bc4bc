#!/usr/bin/env python3
"""The helper of tests/fuzz/fsck_campaign.sh (the fsck damage campaign).

  fsck_fuzz.py tree DIR populated|small
      write a host tree for mkfs.tux3 -d: populated is about 1,000
      files with a 600-entry directory, small about 150; both with
      xattrs, hard links, symlinks, a sparse file and a file of many
      extents (a dleaf).  Fixed contents and mtimes (seeded).
  fsck_fuzz.py index IMAGE TUX3DEBUG OUT
      find the volume's live structures through tux3debug (icheck on
      every block, ls -p for the directories' inode numbers) and write
      them to OUT (JSON): the blocks of each class (bnode, ileaf, oleaf,
      dleaf, vleaf, log, dir, atom, bitmap, countmap, vtable); of the
      bnodes only those whose bytes on disk replay or a walk reads.
  fsck_fuzz.py mutate IMAGE INDEX SEED
      apply one damage, chosen from SEED alone, and print
      TARGET <TAB> OP <TAB> what was done.
  fsck_fuzz.py summary RESULTS SECONDS SEED BUILD KINDS
      print the campaign's summary from the result lines (one per case).
"""
import json
import os
import random
import re
import subprocess
import sys

SB = 4096                       # the superblock's byte offset
EXT = SB + 512                  # the extension record (format.md 15.1)

# ---- CRC32C (format.md 15.1), for the fields that carry one ----

_T = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _T.append(_c)


def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc = _T[(crc ^ b) & 0xff] ^ (crc >> 8)
    return crc ^ 0xffffffff


def be(data, off, width):
    return int.from_bytes(data[off:off + width], 'big')


# ---- host trees ----

def tree(src, kind):
    r = random.Random(19 if kind == 'populated' else 23)
    populated = kind == 'populated'
    big, ndirs, nfiles = (600, 20, 20) if populated else (200, 5, 10)
    os.makedirs(src)

    def mk(path, data):
        with open(path, 'wb') as f:
            f.write(data)

    bigdir = src + '/big'
    os.makedirs(bigdir)
    for i in range(big):
        mk('%s/e%04d-%s' % (bigdir, i, 'n' * r.randrange(0, 40)),
           r.randbytes(r.choice((0, 0, 10, 100, 3000))))
    for d in range(ndirs):
        dd = '%s/d%02d/sub%d' % (src, d, d % 3)
        os.makedirs(dd)
        for i in range(nfiles):
            mk('%s/f%03d' % (dd, i),
               r.randbytes(r.choice((0, 1, 500, 1024, 5000, 20000))))
    with open(src + '/sparse', 'wb') as f:
        f.write(b'head')
        f.seek(1 << 20)
        f.write(b'x' * 5000)
        f.truncate(4 << 20)
    # data every 192 KiB: one extent per chunk at every block size,
    # which takes a dleaf
    with open(src + '/holes', 'wb') as f:
        for i in range(40 if populated else 20):
            f.seek(i * 192 * 1024)
            f.write(r.randbytes(4096))
    nlinks = 10 if populated else 3
    for i in range(nlinks):
        os.symlink('d%02d/sub%d/f000' % (i % ndirs, (i % ndirs) % 3),
                   '%s/link%d' % (src, i))
        os.link('%s/d%02d/sub%d/f001' % (src, i % ndirs, (i % ndirs) % 3),
                '%s/hard%d' % (src, i))
    os.symlink('t' * 300, src + '/longlink')
    try:
        for i in range(30 if populated else 8):
            d = i % ndirs
            p = '%s/d%02d/sub%d/f%03d' % (src, d, d % 3, i % nfiles)
            os.setxattr(p, 'user.a%d' % (i % 5), r.randbytes(r.randrange(60)))
        os.setxattr(bigdir, 'user.dir', b'big')
    except OSError:
        pass                    # a host file system without user xattrs
    t = 1700000000 * 10**9
    for root, dirs, files in os.walk(src, topdown=False):
        for n in files + dirs:
            os.utime(os.path.join(root, n), ns=(t, t), follow_symlinks=False)
            t += 1000
    os.utime(src, ns=(t, t))


# ---- the index of a volume's structures ----

def index(image, dbg, out):
    with open(image, 'rb') as f:
        f.seek(SB)
        sb = f.read(4096)
    bits = be(sb, 24, 2)
    volblocks = be(sb, 32, 8)
    bs = 1 << bits

    def run(script):
        p = subprocess.run([dbg, '-f', '-', image], input=script,
                           capture_output=True, text=True)
        return p.stdout

    # directories: their paths, then each one's children with inode and mode
    dirs = [l for l in run('find / -type d\n').splitlines() if l.startswith('/')]
    dirinums = {63}
    listing = run(''.join('ls -p %s\n' % d for d in dirs))
    for l in listing.splitlines():
        m = re.match(r'^/(\d+)/(\d+)/', l)
        if m and m.group(2).startswith('04'):
            dirinums.add(int(m.group(1)))
    script = ''.join('icheck %s\n' % ' '.join(str(b) for b in
                     range(s, min(volblocks, s + 60)))
                     for s in range(0, volblocks, 60))
    classes = {}
    vtable = []
    with open(image, 'rb') as f:
        for l in run(script).splitlines():
            m = re.match(r'^(\d+)\s+(.*)$', l)
            if not m:
                continue
            block, owner = int(m.group(1)), m.group(2)
            f.seek(block * bs)
            head = f.read(20)
            magic = head[:2]
            c = None
            if owner.startswith('log block'):
                c = 'log'
            elif owner.startswith(('inode table', 'orphan table')) or \
                    ' dtree ' in owner:
                if 'bnode' in owner:
                    c = 'bnode'
                elif owner.startswith('orphan table'):
                    c = 'oleaf'
                elif owner.startswith('inode table'):
                    c = 'ileaf'
                else:
                    c = 'vleaf' if magic == b'\xbe\x7a' else 'dleaf'
            elif 'attribute chain' in owner:
                c = 'spill'
            elif 'element chain' in owner:
                c = 'echain'
            elif '(the version table) data' in owner:
                vtable.append(block)
                continue
            elif '(the atom table) data' in owner:
                c = 'atom'
            elif '(the bitmap) data' in owner:
                c = 'bitmap'
            elif '(the countmap) data' in owner:
                c = 'countmap'
            else:
                m = re.match(r'^inode (\d+) .*data, logical block', owner)
                if m and int(m.group(1)) in dirinums:
                    # an index block of DIR_INDEX (format.md 15.5)
                    c = 'dirindex' if head[16:20] == b'T3DX' else 'dir'
            if c:
                classes.setdefault(c, []).append(block)
    # Bnodes are written only at a unify (format.md 5.1, 12.4): replay
    # loads a bnode's image from disk the first time a record touches it
    # and makes the images of new ones (BNODE_REDIRECT's new, BNODE_SPLIT's
    # dst, BNODE_ROOT's root) in memory.  So the blocks whose bytes count
    # are the live bnodes replay did not make, and the ones it loaded
    # (a redirect's old block, in use until the next unify); damage to a
    # bnode replay made in memory would never be read.
    made, loaded = set(), set()
    for l in run('log\n').splitlines():
        m = re.search(r'(BNODE_\w+) (.*)$', l)
        if not m or 'not replayed' in l:
            continue
        fields = dict((k, int(v)) for k, v in
                      re.findall(r'(\w+) (\d+)', m.group(2)))
        for k in ('old', 'parent', 'src'):
            if k in fields and fields[k] not in made:
                loaded.add(fields[k])
        for k in ('new', 'dst', 'root'):
            if k in fields:
                made.add(fields[k])
    bnodes = [b for b in classes.get('bnode', []) if b not in made]
    with open(image, 'rb') as f:
        for b in sorted(loaded - set(bnodes)):
            f.seek(b * bs)
            if f.read(2) == b'\xb4\xde':
                bnodes.append(b)
    classes['bnode'] = bnodes
    if not bnodes:
        del classes['bnode']
    with open(out, 'w') as f:
        json.dump({'bits': bits, 'volblocks': volblocks, 'classes': classes,
                   'vtable': vtable}, f)
    print(' '.join('%s:%d' % (c, len(b)) for c, b in sorted(classes.items()))
          + (' vtable:%d' % len(vtable) if vtable else ''))


# ---- mutations ----

# The superblock fields (doc/format.md 2.2 and 15.1): name, offset from
# byte 4096, width, kind.
SUPER_FIELDS = [
    ('magic', 0, 8, 'magic'), ('birthdate', 8, 8, 'int'),
    ('flags', 16, 8, 'int'), ('blockbits', 24, 2, 'bits'),
    ('volblocks', 32, 8, 'block'), ('iroot', 40, 8, 'root'),
    ('oroot', 48, 8, 'root'), ('usedinodes', 56, 8, 'int'),
    ('nextblock', 64, 8, 'block'), ('atomdictsize', 72, 8, 'int'),
    ('freeatom', 80, 4, 'int'), ('atomgen', 84, 4, 'int'),
    ('logchain', 88, 8, 'block'), ('logcount', 96, 4, 'int'),
]
EXT_FIELDS = [
    ('ext.magic', 0, 4, 'magic'), ('ext.version', 4, 2, 'int'),
    ('ext.size', 6, 2, 'int'), ('ext.compat', 8, 4, 'int'),
    ('ext.ro_compat', 12, 4, 'int'), ('ext.incompat', 16, 4, 'int'),
    ('ext.uuid', 24, 16, 'bytes'), ('ext.label', 40, 64, 'bytes'),
    ('ext.mkfs_time', 104, 8, 'int'), ('ext.seq', 112, 8, 'int'),
    ('ext.logchain', 120, 8, 'block'), ('ext.logcount', 128, 4, 'int'),
    ('ext.iroot', 136, 8, 'root'), ('ext.oroot', 144, 8, 'root'),
    ('ext.crclog', 152, 4, 'int'), ('ext.crc', 508, 4, 'int'),
]
# The version table's header and record fields (doc/format.md 17.2)
VT_HEADER = [('magic', 0, 4), ('format', 4, 2), ('labelbits', 6, 2),
             ('top', 8, 4), ('crc', 12, 4)]
VT_RECORD = [('parent', 0, 2), ('flags', 2, 2), ('tag', 4, 4),
             ('birth', 8, 8), ('into', 16, 2), ('step', 18, 2),
             ('name', 24, 40)]

BLOCK_CLASSES = ('bnode', 'ileaf', 'oleaf', 'dleaf', 'vleaf', 'log', 'dir',
                 'dirindex', 'spill', 'echain',
                 'atom', 'bitmap', 'countmap')


def new_int(r, old, width, kind, volblocks):
    """A new value for an integer field of WIDTH bytes."""
    top = (1 << (8 * width)) - 1
    choices = [0, 1, top, (old + 1) & top, (old - 1) & top,
               old ^ (1 << r.randrange(8 * width)), r.randint(0, top)]
    if kind == 'block':
        choices += [r.randrange(max(volblocks, 1)), volblocks,
                    volblocks + r.randint(1, 1000)]
    if kind == 'bits':
        choices += [r.randint(8, 17)]
    if kind == 'root':
        depth, block = old >> 48 & 0x7fff, old & (2**48 - 1)
        choices += [(r.randint(0, 31) << 48) | block,
                    (((depth + r.choice((-1, 1))) & 0x7fff) << 48) | block,
                    (depth << 48) | r.randrange(max(volblocks, 1)),
                    (depth << 48) | ((block + r.choice((-1, 1))) & (2**48 - 1)),
                    old | 1 << 63]
    return r.choice(choices) & top


def mutate(image, idxfile, seed):
    r = random.Random(seed)
    with open(idxfile) as f:
        idx = json.load(f)
    bs = 1 << idx['bits']
    volblocks = idx['volblocks']
    classes = {c: b for c, b in idx['classes'].items()
               if c in BLOCK_CLASSES and b}
    fd = os.open(image, os.O_RDWR)

    def read(off, n):
        return os.pread(fd, n, off)

    def write(off, data):
        os.pwrite(fd, data, off)

    roll = r.random()
    family = 'block'
    if idx['vtable']:
        if roll < 0.25:
            family = 'vtable'
        elif roll < 0.45:
            family = 'super'
    elif roll < 0.22:
        family = 'super'

    for attempt in range(100):
        if family == 'super':
            has_ext = read(EXT, 4) == b'T3X1'
            fields = SUPER_FIELDS + (EXT_FIELDS if has_ext else [])
            name, off, width, kind = r.choice(fields)
            base = EXT if name.startswith('ext.') else SB
            old = read(base + off, width)
            if kind in ('magic', 'bytes'):
                new = bytearray(old)
                if kind == 'magic' or r.random() < 0.5:
                    i = r.randrange(width)
                    new[i] ^= 1 << r.randrange(8)
                else:
                    new = bytearray(r.randbytes(width))
                new = bytes(new)
            else:
                v = new_int(r, int.from_bytes(old, 'big'), width, kind,
                            volblocks)
                new = v.to_bytes(width, 'big')
            if new == old:
                continue
            write(base + off, new)
            note = ''
            # mostly a field with its CRC made good again: the damage is
            # the value, not the checksum
            if base == EXT and name != 'ext.crc' and r.random() < 0.8:
                rec = read(EXT, 508)
                write(EXT + 508, crc32c(rec).to_bytes(4, 'big'))
                note = ', CRC made good'
            target = 'ext' if base == EXT else 'super'
            os.close(fd)
            return target, 'field', '%s %s -> %s%s' % (
                name, old.hex(), new.hex(), note)

        if family == 'vtable':
            blocks = idx['vtable']
            table = b''.join(read(b * bs, bs) for b in blocks)
            top = be(table, 8, 4)
            size = min(64 + 64 * max(top, 1), len(table))
            new = bytearray(table)
            if r.random() < 0.4:
                op = 'bitflip'
                what = []
                for _ in range(r.randint(1, 3)):
                    o = r.randrange(size)
                    bit = r.randrange(8)
                    new[o] ^= 1 << bit
                    what.append('@%d:%d' % (o, bit))
                what = ','.join(what)
            else:
                op = 'field'
                if r.random() < 0.25:
                    name, o, width = r.choice(VT_HEADER)
                    where = 'header.' + name
                else:
                    label = r.randrange(max(min(top, (size - 64) // 64), 1))
                    name, o, width = r.choice(VT_RECORD)
                    o += 64 + 64 * label
                    where = 'label %d.%s' % (label, name)
                old = int.from_bytes(new[o:o + width], 'big')
                v = new_int(r, old, width, 'int', 0)
                new[o:o + width] = v.to_bytes(width, 'big')
                what = '%s %x -> %x' % (where, old, v)
            if bytes(new) == table:
                continue
            if r.random() < 0.75 and (op != 'field' or 'crc' not in what):
                t = be(new, 8, 4)
                n = 64 + 64 * t
                if n <= len(new):
                    crc = crc32c(bytes(new[0:12]) + b'\0\0\0\0' +
                                 bytes(new[16:n]))
                    new[12:16] = crc.to_bytes(4, 'big')
                    what += ', CRC made good'
            for i, b in enumerate(blocks):
                write(b * bs, bytes(new[i * bs:(i + 1) * bs]))
            os.close(fd)
            return 'vtable', op, what

        c = r.choice(sorted(classes))
        block = r.choice(classes[c])
        data = read(block * bs, bs)
        nonzero = [i for i, x in enumerate(data) if x]

        def offset():
            p = r.random()
            if nonzero and p < 0.6:
                return r.choice(nonzero)
            if p < 0.85:
                return r.randrange(min(64, bs))
            return r.randrange(bs)

        op = r.choice(('bitflip', 'bitflip', 'bitflip', 'bytes', 'bytes',
                       'zero', 'copy', 'copy'))
        new = bytearray(data)
        if op == 'bitflip':
            what = []
            for _ in range(r.randint(1, 4)):
                o = offset()
                bit = r.randrange(8)
                new[o] ^= 1 << bit
                what.append('@%d:%d' % (o, bit))
            what = 'bits ' + ','.join(what)
        elif op == 'bytes':
            o = offset()
            n = min(r.randint(1, 16), bs - o)
            new[o:o + n] = r.randbytes(n)
            what = '%d random bytes @%d' % (n, o)
        elif op == 'zero':
            new = bytearray(bs)
            what = 'zeroed'
        else:
            pool = classes[c] if r.random() < 0.5 else \
                [b for bl in classes.values() for b in bl]
            src = r.choice(pool)
            new = bytearray(read(src * bs, bs))
            what = 'contents of block %d' % src
        if bytes(new) == data:
            continue
        write(block * bs, bytes(new))
        os.close(fd)
        return c, op, 'block %d: %s' % (block, what)
    os.close(fd)
    return 'none', 'none', 'no mutation found'


# ---- the summary ----

VIOLATIONS = ('unrepaired', 'fy-disagrees', 'undetected')
FAILING = VIOLATIONS + ('exit8', 'signal', 'timeout', 'sanitizer')
POPULATED = ('pop4k', 'pop1k')


def rate(rep, det):
    return '%.1f%%' % (100.0 * rep / det) if det else '-'


def summary(results, seconds, seed, build, kinds):
    cases = []
    with open(results, encoding='utf-8', errors='replace') as f:
        for l in f:
            p = l.rstrip('\n').split('\t')
            if len(p) < 10:
                continue
            cases.append({'i': int(p[0]), 'kind': p[1], 'seed': p[2],
                          'target': p[3], 'op': p[4], 'rc': p[5],
                          'flags': set(p[6].split(',')) - {''},
                          'detail': p[7], 'why': p[8], 'repro': p[9]})
    cases.sort(key=lambda c: c['i'])

    def count(sel, flag):
        return sum(1 for c in sel if flag in c['flags'])

    n = len(cases)
    det = count(cases, 'detected')
    rep = count(cases, 'repaired')
    viol = sum(1 for c in cases if c['flags'] & set(VIOLATIONS))
    clean = sum(1 for c in cases if 'detected' not in c['flags'] and
                not c['flags'] & {'signal', 'timeout'} and
                c['rc'].split('/')[0] == '0')
    popblock = [c for c in cases if c['kind'] in POPULATED and
                c['target'] in BLOCK_CLASSES]
    pdet = count(popblock, 'detected')
    prep = count(popblock, 'repaired')
    print('fuzz-fsck: %d mutations, seed %s, %s, kinds: %s; %s s' %
          (n, seed, build, kinds, seconds))
    print('fuzz-fsck: detected %d, repaired %d, gave up %d, violations %d '
          '(unrepaired %d, -fy disagreed with a clean -fn %d, undetected damage '
          '%d), exit>=8 %d, signals %d, timeouts %d, sanitizer reports %d' %
          (det, rep, count(cases, 'gaveup'), viol, count(cases, 'unrepaired'),
           count(cases, 'fy-disagrees'), count(cases, 'undetected'),
           count(cases, 'exit8'), count(cases, 'signal'),
           count(cases, 'timeout'), count(cases, 'sanitizer')))
    print('fuzz-fsck: -fn clean %d: %d only legal values, %d undetected '
          'damage' % (clean, count(cases, 'legal'), count(cases, 'undetected')))
    print('fuzz-fsck: repair rate %s (%d of %d detected); populated 4k+1k, '
          'block damage %s (%d of %d)' % (rate(rep, det), rep, det,
                                         rate(prep, pdet), prep, pdet))

    def table(title, key, order):
        print()
        print('%-10s %5s %5s %5s %5s %5s %5s %5s %5s %5s %5s %7s' %
              (title, 'cases', 'det', 'rep', 'gave', 'legal', 'undet',
               'viol', 'exit8', 'sig', 'tmo', 'rate'))
        for k in order:
            sel = [c for c in cases if key(c) == k]
            if not sel:
                continue
            d, rp = count(sel, 'detected'), count(sel, 'repaired')
            print('%-10s %5d %5d %5d %5d %5d %5d %5d %5d %5d %5d %7s' %
                  (k, len(sel), d, rp, count(sel, 'gaveup'),
                   count(sel, 'legal'), count(sel, 'undetected'),
                   sum(1 for c in sel if c['flags'] & set(VIOLATIONS)),
                   count(sel, 'exit8'), count(sel, 'signal'),
                   count(sel, 'timeout'), rate(rp, d)))

    kinds_seen = []
    for c in cases:
        if c['kind'] not in kinds_seen:
            kinds_seen.append(c['kind'])
    table('kind', lambda c: c['kind'], kinds_seen)
    table('damage', lambda c: c['target'],
          ('super', 'ext') + BLOCK_CLASSES + ('vtable', 'none'))
    table('operation', lambda c: c['op'],
          ('field', 'bitflip', 'bytes', 'zero', 'copy', 'none'))
    print('(det: fsck -fn exit != 0; rep: then -fy exit 0/1 and -fn clean;'
          ' gave: -fy exit 4;\n legal: -fn clean and the volume reads back '
          '(manifest, check); undet: -fn clean but it does not;\n viol: '
          'unrepaired, undetected, or -fy disagreed with a clean -fn)')
    failing = [c for c in cases if c['flags'] & set(FAILING)]
    if failing:
        print()
        print('fuzz-fsck: %d failing cases:' % len(failing))
        for c in failing:
            print('  %s seed %s: %s [%s %s: %s] fsck %s' % (
                c['kind'], c['seed'],
                ','.join(sorted(c['flags'] & set(FAILING))), c['target'],
                c['op'], c['detail'], c['rc']))
            if c['why']:
                print('    %s' % c['why'])
            print('    reproduce: %s' % c['repro'])
    # one line for scripts (tests/scripts/fsck_campaign.sh, bench)
    print('fuzz-fsck-counts: cases=%d detected=%d repaired=%d gaveup=%d '
          'violations=%d exit8=%d signals=%d timeouts=%d sanitizer=%d '
          'legal=%d rate=%s rate_populated_block=%s' %
          (n, det, rep, count(cases, 'gaveup'), viol, count(cases, 'exit8'),
           count(cases, 'signal'), count(cases, 'timeout'),
           count(cases, 'sanitizer'), count(cases, 'legal'),
           rate(rep, det).rstrip('%'), rate(prep, pdet).rstrip('%')))


def main(argv):
    if len(argv) >= 3 and argv[0] == 'tree':
        tree(argv[1], argv[2])
    elif len(argv) >= 4 and argv[0] == 'index':
        index(argv[1], argv[2], argv[3])
    elif len(argv) >= 4 and argv[0] == 'mutate':
        print('\t'.join(mutate(argv[1], argv[2], int(argv[3]))))
    elif len(argv) >= 6 and argv[0] == 'summary':
        summary(*argv[1:6])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
