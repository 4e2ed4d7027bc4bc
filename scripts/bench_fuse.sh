#!/bin/sh
# make bench, tux3fuse's part (sh scripts/bench_fuse.sh BUILD, as root):
# the workloads users run, each on a fresh volume, against ext4 on a loop
# device (the kernel driver), fuse2fs on an ext4 image (e2fsprogs' FUSE
# driver, the nearest peer) and tmpfs, in the same run, all with default
# options, tux3fuse -o nowriteback (column tux3-nowb: the kernel's
# writeback cache off), and tux3fuse -o io_uring (column tux3-uring) where the kernel
# has FUSE over io_uring (its enable_uring parameter is turned on for the
# run and restored).  Each figure is the median of BENCH_FUSE_RUNS runs (default
# 3); in each run the four targets take turns, so that a change in the
# machine's load falls on all of them.  Printed: seconds, and each
# target's ratio to ext4.
#   cp        cp -a /usr/share/doc in, sync, umount (until the daemon has
#             let go of the volume)
#   cp-include  the same with /usr/include (many small headers)
#   tar       tar x of 10,000 small files (1-4 KiB, 100 directories), sync,
#             umount
#   find      find | wc -l of a 50,000-entry tree, freshly mounted (the
#             tree made by tar x, then unmounted; tmpfs: caches dropped)
#   du        du -s of the same tree, after find
#   rm        rm -rf of the same tree, sync, umount
#   git-status    git status of a clone of a real repository (/usr/include
#                 committed, then a third of its files changed on a second
#                 branch), freshly mounted
#   git-checkout  git checkout of the second branch, sync, umount
#   fio-*     fio, psync, 4 KiB blocks, 64 MiB file: seqwrite and
#             randwrite (each then fsync), seqread and randread after a
#             remount (tmpfs: caches dropped)
#   roundtrip tests/fuse_roundtrip (getxattr of a missing name), us per call
# BENCH_FUSE_TARGETS="ext4 tux3fuse" runs only those targets.
# Installs fuse2fs and fio when missing (apt-get), skips what cannot run.
set -u
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
fuse="$top/$build/tux3fuse"
mkfs_tux3="$top/$build/mkfs.tux3"
rt="$top/$build/tests/fuse_roundtrip"
runs=${BENCH_FUSE_RUNS:-3}
src=${BENCH_FUSE_SRC:-/usr/share/doc}

echo
echo "== tux3fuse against ext4 (loop), fuse2fs and tmpfs: medians of $runs"
if [ "$(id -u)" != 0 ]; then
	echo "bench_fuse: skipped (needs root: loop and tmpfs mounts)"
	exit 0
fi
if [ ! -c /dev/fuse ] || [ ! -x "$fuse" ]; then
	echo "bench_fuse: skipped (no /dev/fuse or no $fuse)"
	exit 0
fi
need=
command -v fuse2fs >/dev/null 2>&1 || need="$need fuse2fs"
command -v fio >/dev/null 2>&1 || need="$need fio"
[ -n "$need" ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	--no-install-recommends $need >/dev/null 2>&1
targets="ext4 tux3fuse tmpfs"
command -v fuse2fs >/dev/null 2>&1 && targets="ext4 tux3fuse fuse2fs tmpfs"
. "$top/scripts/uring_param.sh"
uring_on && targets="ext4 tux3fuse tux3-uring${targets#ext4 tux3fuse}"
targets="ext4 tux3fuse tux3-nowb${targets#ext4 tux3fuse}"
# BENCH_FUSE_TARGETS: a subset, in this order (ext4 first for the ratios)
targets=${BENCH_FUSE_TARGETS:-$targets}

work=$(mktemp -d /tmp/tux3-benchfuse.XXXXXX)
mnt=$work/mnt
img=$work/v.img
mkdir -p "$mnt"
daemon=
trap 'umount "$mnt" 2>/dev/null; rm -rf "$work"; uring_restore' EXIT
size=2g

now() { date +%s%N; }

# mkvol FS: a fresh, empty volume for FS in $img
mkvol() {
	rm -f "$img"
	case $1 in
	tux3*) "$mkfs_tux3" -q "$img" "$size" ;;
	ext4|fuse2fs) truncate -s "$size" "$img" &&
		mkfs.ext4 -q -F "$img" >/dev/null 2>&1 ;;
	tmpfs) : ;;
	esac
}

# mnt_up FS: mount $img (tmpfs: a fresh tmpfs) on $mnt
mnt_up() {
	case $1 in
	tux3fuse) "$fuse" "$img" "$mnt" ;;
	tux3-uring) "$fuse" -o io_uring "$img" "$mnt" ;;
	tux3-nowb) "$fuse" -o nowriteback "$img" "$mnt" ;;
	ext4) mount -o loop "$img" "$mnt" ;;
	fuse2fs) fuse2fs -f "$img" "$mnt" >/dev/null 2>&1 &
		daemon=$!
		i=0
		until grep -q " $mnt " /proc/self/mountinfo || [ $i -ge 100 ]
		do
			sleep 0.05
			i=$((i + 1))
		done ;;
	tmpfs) mount -t tmpfs -o size="$size" tmpfs "$mnt" ;;
	esac
}

# mnt_down FS: sync, unmount, and wait until the driver let go
mnt_down() {
	sync
	umount "$mnt" || return 1
	case $1 in
	tux3*) flock -x "$img" true ;;
	fuse2fs) wait "$daemon" ;;
	esac
}

# remount FS: cold caches for what follows (tmpfs cannot: caches dropped)
remount() {
	if [ "$1" = tmpfs ]; then
		sync
		echo 3 > /proc/sys/vm/drop_caches
	else
		mnt_down "$1" && mnt_up "$1"
	fi
	echo 3 > /proc/sys/vm/drop_caches
}

# the inputs: 10,000 small files and a 50,000-entry tree, as archives
mktree() {	# DIR NFILES PERDIR: files of 1-4 KiB
	python3 - "$@" <<'EOF2'
import os, sys
top, n, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = os.urandom(4096)
for i in range(n):
    d = os.path.join(top, "d%d" % (i // per))
    if i % per == 0:
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d" % i), "wb") as f:
        f.write(data[: 1024 + (i * 997) % 3072])
EOF2
}
echo "   making the inputs (10,000 and 50,000 small files)"
mkdir -p "$work/in/small" "$work/in/tree"
mktree "$work/in/small" 10000 100
tar cf "$work/small.tar" -C "$work/in/small" .
mktree "$work/in/tree" 49500 100
tar cf "$work/tree.tar" -C "$work/in/tree" .
rm -rf "$work/in"
# the repository: /usr/include as branch a; branch b changes every third
# file, removes every seventeenth and adds 500
repo=$work/repo
git=
if command -v git >/dev/null 2>&1 && [ -d /usr/include ]; then
	echo "   making the repository (/usr/include, two branches)"
	gitc() { git -C "$repo" -c user.name=bench -c user.email=bench@localhost "$@"; }
	mkdir -p "$repo" && cp -a /usr/include/. "$repo/" &&
	git init -q "$repo" && gitc add -A && gitc commit -qm a &&
	gitc branch a && python3 - "$repo" <<'EOF2' &&
import os, sys
top = sys.argv[1]
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(top)
               if "/.git" not in d + "/" for f in fs)
for i, p in enumerate(files):
    if os.path.islink(p):
        continue
    if i % 17 == 0:
        os.unlink(p)
    elif i % 3 == 0:
        with open(p, "a") as f:
            f.write("/* changed on branch b */\n")
for i in range(500):
    with open(os.path.join(top, "new%d.h" % i), "w") as f:
        f.write("#define NEW%d %d\n" % (i, i))
EOF2
	gitc add -A && gitc commit -qm b && gitc branch b &&
	gitc checkout -q a && git=yes
	[ -n "$git" ] || echo "   (no repository: the git rows are left out)"
fi
kib=$(du -sk "$src" | cut -f1)
echo "   $src: $(find "$src" | wc -l) paths, $((kib / 1024)) MiB;" \
	"volumes of $size; targets: $targets"

# record WORKLOAD FS NS
record() {
	echo "$1 $2 $3" >> "$work/times"
}

# timed WORKLOAD FS COMMAND...: run COMMAND, record its wall time
timed() {
	w=$1 f=$2
	shift 2
	t0=$(now)
	if "$@"; then
		record "$w" "$f" $(($(now) - t0))
	else
		echo "   $w on $f failed"
	fi
}

copy_in() { cp -a "$src" "$mnt/" && mnt_down "$1"; }
copy_include() { cp -a /usr/include "$mnt/" && mnt_down "$1"; }
git_status() { git -C "$mnt/r" status --porcelain > /dev/null; }
git_checkout() { git -C "$mnt/r" checkout -q b && mnt_down "$1"; }
untar() { tar xf "$2" -C "$mnt" && mnt_down "$1"; }
count() { find "$mnt" | wc -l > /dev/null; }
dus() { du -s "$mnt" > /dev/null; }
rmtree() { rm -rf "$mnt"/* && mnt_down "$1"; }
fio_job() {	# NAME RW
	fio --name="$1" --filename="$mnt/fio" --rw="$2" --bs=4k --size=64m \
		--ioengine=psync --end_fsync=1 --invalidate=1 \
		--output=/dev/null
}

one_run() {	# FS
	f=$1
	mkvol "$f" && mnt_up "$f" || { echo "   $f: cannot mount"; return; }
	timed cp "$f" copy_in "$f"
	if [ -d /usr/include ]; then
		mkvol "$f" && mnt_up "$f" &&
			timed cp-include "$f" copy_include "$f"
	fi
	mkvol "$f" && mnt_up "$f" && timed tar "$f" untar "$f" "$work/small.tar"
	mkvol "$f" && mnt_up "$f" && tar xf "$work/tree.tar" -C "$mnt" &&
		remount "$f"
	timed find "$f" count
	timed du "$f" dus
	timed rm "$f" rmtree "$f"
	if [ -n "$git" ]; then
		mkvol "$f" && mnt_up "$f" &&
		git clone -q --no-hardlinks -b a "$repo" "$mnt/r" &&
			remount "$f"
		timed git-status "$f" git_status
		timed git-checkout "$f" git_checkout "$f"
		grep -q " $mnt " /proc/self/mountinfo && mnt_down "$f"
	fi
	if command -v fio >/dev/null 2>&1; then
		mkvol "$f" && mnt_up "$f"
		timed fio-seqwrite "$f" fio_job sw write
		timed fio-randwrite "$f" fio_job rw randwrite
		remount "$f"
		timed fio-seqread "$f" fio_job sr read
		remount "$f"
		timed fio-randread "$f" fio_job rr randread
		mnt_down "$f"
	fi
	if [ -x "$rt" ]; then
		mkvol "$f" && mnt_up "$f" && touch "$mnt/f" &&
		us=$("$rt" "$mnt/f" 20000 | sed 's/.*: \([0-9.]*\) us.*/\1/') &&
		echo "roundtrip $f $us" >> "$work/times"
		mnt_down "$f"
	fi
}

r=1
while [ $r -le "$runs" ]; do
	for f in $targets; do
		one_run "$f"
	done
	r=$((r + 1))
done

# the table: medians, seconds (roundtrip: us), ratios to ext4
awk -v targets="$targets" '
{ v[$1, $2, ++n[$1, $2]] = $3; if (!($1 in seen)) { seen[$1] = 1;
  order[++nw] = $1 } }
function median(w, f,   k, i, j, t, a) {
	k = n[w, f]
	if (!k) return -1
	for (i = 1; i <= k; i++) a[i] = v[w, f, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
		if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	nt = split(targets, T, " ")
	printf "%-14s", "workload"
	for (i = 1; i <= nt; i++) printf " %16s", T[i]
	printf "\n"
	for (w = 1; w <= nw; w++) {
		name = order[w]
		base = median(name, "ext4")
		printf "%-14s", name
		for (i = 1; i <= nt; i++) {
			m = median(name, T[i])
			if (m < 0) { printf " %16s", "-"; continue }
			s = name == "roundtrip" ? m : m / 1e9
			unit = name == "roundtrip" ? "us" : "s"
			if (T[i] == "ext4" || base <= 0)
				printf " %14.3f%-2s", s, unit
			else
				printf " %8.3f (%4.2fx)", s, m / base
		}
		printf "\n"
	}
}' "$work/times"
echo "(seconds, medians; (Nx): time / ext4's; roundtrip in microseconds)"
