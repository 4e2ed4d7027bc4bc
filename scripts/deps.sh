#!/bin/sh
# deps.sh build|test|all: ensure what one purpose needs, only when missing.
#   build  the compiler, pkg-config and the libraries the build links
#          (what `make` needs)
#   test   the programs the tests and workloads run (what `make check` adds)
#   all    both (`make deps`)
# Libraries are checked with pkg-config, programs with command -v.  As root
# this runs `apt-get update` once (only if something is missing), then one
# `apt-get install`; otherwise it names the packages and fails.
set -u

purpose=${1:-build}
missing=""
need_pkg() {	# need_pkg PKGCONFIG-NAME DEBIAN-PACKAGE
	if ! command -v pkg-config >/dev/null 2>&1 ||
	   ! pkg-config --exists "$1" 2>/dev/null; then
		missing="$missing $2"
	fi
}
need_cmd() {	# need_cmd COMMAND DEBIAN-PACKAGE
	command -v "$1" >/dev/null 2>&1 || missing="$missing $2"
}

need_build() {
	cc_prog=${CC:-cc}
	cc_prog=${cc_prog%% *}
	case $cc_prog in
	clang*)	need_cmd "$cc_prog" clang ;;
	*)	need_cmd "$cc_prog" gcc ;;
	esac
	# the C library's headers (gcc only recommends them)
	printf '#include <stdio.h>\n' | "$cc_prog" -E -x c - >/dev/null 2>&1 ||
		missing="$missing libc6-dev"
	need_cmd pkg-config pkg-config
	need_pkg blkid libblkid-dev
	need_pkg uuid uuid-dev
	need_pkg readline libreadline-dev
	need_pkg libcgraph libgraphviz-dev
	need_pkg libgvc libgraphviz-dev
	need_pkg libcrypto libssl-dev
	need_pkg fuse3 libfuse3-dev
	need_pkg liburing liburing-dev
}

need_test() {
	need_cmd dot graphviz
	need_cmd zstd zstd
	need_cmd sha256sum coreutils
	need_cmd python3 python3
	need_cmd mkfs.ext4 e2fsprogs
	need_cmd blkid util-linux
	need_cmd nm binutils
	# peak memory in fsck_scale (GNU time's %M; the shell's time has none)
	need_cmd /usr/bin/time time
	# tux3fuse's tests and their workloads
	need_cmd fusermount3 fuse3
	need_cmd fio fio
	need_cmd stress-ng stress-ng
	need_cmd xfs_io xfsprogs
	need_cmd sqlite3 sqlite3
	need_cmd git git
	need_cmd setfattr attr
	# the udev rule, tested with a private udevd (probe.sh, boot.sh)
	need_cmd udevadm udev
}

case $purpose in
build)	need_build ;;
test)	need_test ;;
all)	need_build; need_test ;;
*)	echo "usage: deps.sh build|test|all" >&2; exit 2 ;;
esac

# de-duplicate
missing=$(printf '%s\n' $missing | sort -u | tr '\n' ' ')
missing=${missing% }
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps ($purpose): missing packages: $missing" >&2
	echo "deps: run 'make deps' as root, or: apt-get install $missing" >&2
	exit 1
fi
echo "deps ($purpose): installing: $missing"
export DEBIAN_FRONTEND=noninteractive
# Another apt (an unattended upgrade, a second build) may hold dpkg's
# lock: wait for it rather than fail.
lock="-o DPkg::Lock::Timeout=600"
apt-get $lock update -qq >/dev/null || { echo "deps: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086
apt-get $lock install -y -qq --no-install-recommends $missing >/dev/null ||
	{ echo "deps: apt-get install $missing failed" >&2; exit 1; }
echo "deps: done"
