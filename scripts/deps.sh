#!/bin/sh
# Install what the build and the tests need, only when it is missing.
# Libraries are checked with pkg-config, programs with command -v.  As root
# this runs `apt-get update` once (only if something is missing), then
# `apt-get install`; otherwise it names the packages and fails.
set -u

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

need_cmd cc gcc
need_cmd make make
need_cmd pkg-config pkg-config
need_pkg blkid libblkid-dev
need_pkg uuid uuid-dev
need_pkg readline libreadline-dev
need_pkg libcgraph libgraphviz-dev
need_pkg libgvc libgraphviz-dev
need_pkg libcrypto libssl-dev
need_cmd dot graphviz
need_cmd zstd zstd
need_cmd sha256sum coreutils
need_cmd python3 python3
need_cmd mkfs.ext4 e2fsprogs
need_cmd blkid util-linux
# tux3fuse and its tests' workloads
need_pkg fuse3 libfuse3-dev
need_cmd fusermount3 fuse3
need_cmd fio fio
need_cmd stress-ng stress-ng
need_cmd xfs_io xfsprogs
need_cmd sqlite3 sqlite3
need_cmd git git
need_cmd setfattr attr
need_cmd udevadm udev

# de-duplicate
missing=$(printf '%s\n' $missing | sort -u | tr '\n' ' ')
[ -z "${missing% }" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run 'make deps' as root, or: apt-get install$missing" >&2
	exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || { echo "deps: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
	{ echo "deps: apt-get install$missing failed" >&2; exit 1; }
echo "deps: done"
