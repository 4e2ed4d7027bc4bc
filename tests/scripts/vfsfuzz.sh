#!/bin/sh
# Versioned file operations against a model (tests/vfsfuzz.c): random
# writes, truncates, creates, links, unlinks, renames, xattrs, chmods,
# snapshot creates and deletes and reopens in random versions, every
# version checked against its model:   sh tests/scripts/vfsfuzz.sh BUILD
#   vfsfuzz/seed-N   one run: no difference from the model, no unexpected
#                    error (on failure: the op, its version, the error;
#                    rerun with -v --ops N to see the ops up to it)
#   vfsfuzz/fsck     fsck.tux3 -fn on the volume of every run that passed:
#                    clean (exit 0)
# VFSFUZZ_OPS: total operations over the runs (default 100000 on BUILD,
# 20000 on a sanitizer build).
set -u
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
T=vfsfuzz
fz=$build/tests/vfsfuzz
fsck=$build/fsck.tux3
if [ ! -x "$fz" ] || [ ! -x "$fsck" ]; then
	skip all "$fz or $fsck not built"; exit 0
fi
scratch_dir
# The volumes on tmpfs when there is one: every commit ends in fdatasync,
# which on a disk costs more than the operations themselves.
dir=$work
if [ -d /dev/shm ] && [ -w /dev/shm ] &&
   shm=$(mktemp -d /dev/shm/vfsfuzz.XXXXXX 2>/dev/null); then
	dir=$shm
	trap 'rm -rf "$work" "$shm"' EXIT INT TERM
fi
case $build in
*asan*) total=${VFSFUZZ_OPS:-20000} ;;
*) total=${VFSFUZZ_OPS:-100000} ;;
esac

# seed, share of the total in percent, options: 4 KiB blocks (the default
# 24 files, 12 snapshots; then 48 files and 20 snapshots), 1 KiB blocks,
# and 512-byte blocks where inodes changed in many versions reach the
# per-inode cap (doc/format.md 17.3a) and changes are refused (ENOSPC).
fsck_bad=""
while read -r seed share opts; do
	ops=$((total * share / 100))
	img=$dir/s$seed.img
	start=$(date +%s)
	# shellcheck disable=SC2086
	out=$("$fz" "$img" --seed "$seed" --ops "$ops" --verify-every 1000 \
		--no-fsck $opts 2>&1)
	rc=$?
	end=$(date +%s)
	if [ $rc -eq 0 ]; then
		pass "seed-$seed"
	else
		fail "seed-$seed" "$ops ops $opts, exit $rc: $(printf '%s' "$out" |
			grep -m2 -e FAIL -e ERROR -e error | tr '\n' '|')"
	fi
	echo "vfsfuzz: seed $seed, $ops ops${opts:+ ($opts)}: $((end - start)) s"
	if [ $rc -eq 0 ]; then
		fo=$("$fsck" -fn "$img" 2>&1)
		frc=$?
		if [ $frc -ne 0 ]; then
			fsck_bad="$fsck_bad seed $seed: exit $frc: $(printf '%s' \
				"$fo" | grep -v '^Pass' | head -3 | tr '\n' '|')"
		fi
	fi
	rm -f "$img"
done <<EOF
1 35
2 30 --files 48 --snapshots 20
3 20 --blockbits 10
4 15 --blockbits 9 --size 64
EOF
if [ -z "$fsck_bad" ]; then pass fsck
else fail fsck "$fsck_bad"; fi
