# tux3-tools: libtux3 and the offline tools for the Tux3 filesystem.
#
#   make            build everything (installs missing Debian packages first)
#   make check      build, then run every test (normal and sanitizer builds);
#                   TESTS=fsck,crash runs those groups only, TEST_JOBS=N
#                   jobs at once, logs in BUILD/tests/log (doc/testing.md)
#   make check-asan run the tests on the AddressSanitizer + UBSan build only
#   make coverage   a gcov build (build-cov) through the tests, then line and
#                   branch coverage per folder and the least-covered files
#   make demo       the main job on a default image
#   make soak       long random runs of the write-path model (SOAK=N)
#   make crash      the crash simulator's large set (tests/crash/large.sh)
#   make fuzz-versions  the versioned-pointer fuzz test, 10 million steps
#   make fuzz-fsck  the fsck damage campaign: FUZZ_FSCK_N (600) mutations of
#                   volumes of every kind, seed FUZZ_FSCK_SEED (1), a summary
#   make bench      mkfs.tux3 -d against mke2fs -d and mkfs.btrfs --rootdir,
#                   the checks against e2fsck/btrfs check, version costs,
#                   cp -a through tux3fuse against ext4 on loop and tmpfs
#   make fuse       tux3fuse's tests and workloads at full size
#   make install    PREFIX=/usr/local DESTDIR= (tools in sbin, man pages)

.DEFAULT_GOAL := all
# Build on every core unless the caller chose (-j N).
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif

PREFIX  ?= /usr/local
DESTDIR ?=
SBINDIR  = $(PREFIX)/sbin
MANDIR   = $(PREFIX)/share/man/man8

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
CFLAGS_BASE = -std=gnu11 $(OPT) -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-D_FILE_OFFSET_BITS=64 -Icommon -MMD -MP
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined

PKGS_DEBUG = readline libcrypto uuid
PKGS_MKFS  = blkid uuid
PKGS_DOT   = libcgraph libgvc
PKGS_FUSE  = fuse3

LIB_SRC   = $(wildcard common/*.c common/*/*.c)
DEBUG_SRC = $(wildcard debugfs/*.c)
MKFS_SRC  = $(wildcard mkfs/*.c)
FSCK_SRC  = $(wildcard fsck/*.c)
UNIT_SRC  = $(wildcard tests/unit/*.c)
DOT_SRC   = $(wildcard dump/tux3dot.c dump/dot_*.c)
IMAGE_SRC = $(wildcard dump/tux3image.c dump/image_*.c)
FUSE_SRC  = $(wildcard fuse/*.c)
# mount(8) looks for helpers in /sbin, whatever the PREFIX
MOUNT_HELPER_DIR ?= /sbin
DUMP_H    = $(wildcard dump/*.h)

# One build tree per flavour: $(BUILD) normal, build-asan sanitized.
define flavour
$(1)/common/%.o: common/%.c | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -c $$< -o $$@
$(1)/debugfs/%.o: debugfs/%.c debugfs/*.h | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) $$$$(pkg-config --cflags $$(PKGS_DEBUG)) -c $$< -o $$@
$(1)/mkfs/%.o: mkfs/%.c | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) $$$$(pkg-config --cflags $$(PKGS_MKFS)) -c $$< -o $$@
$(1)/fsck/%.o: fsck/%.c | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -c $$< -o $$@
$(1)/dump/%.o: dump/%.c $$(DUMP_H) | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) $$$$(pkg-config --cflags $$(PKGS_DOT)) -c $$< -o $$@
$(1)/tux3dot: $$(patsubst %.c,$(1)/%.o,$$(DOT_SRC)) $(1)/libtux3.a
	$$(CC) $(2) -o $$@ $$^ $$$$(pkg-config --libs $$(PKGS_DOT))
$(1)/fuse/%.o: fuse/%.c fuse/*.h | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) $$$$(pkg-config --cflags $$(PKGS_FUSE)) -c $$< -o $$@
$(1)/tux3fuse: $$(patsubst %.c,$(1)/%.o,$$(FUSE_SRC)) $(1)/libtux3.a
	$$(CC) $(2) -o $$@ $$^ $$$$(pkg-config --libs $$(PKGS_FUSE))
$(1)/mount.tux3: fuse/mount.tux3.sh
	@mkdir -p $$(dir $$@)
	sed 's|@SBINDIR@|$$(SBINDIR)|g' $$< > $$@ && chmod 755 $$@
$(1)/tux3image: $$(patsubst %.c,$(1)/%.o,$$(IMAGE_SRC)) $(1)/libtux3.a
	$$(CC) $(2) -o $$@ $$^
$(1)/tests/dotcount: tests/dotcount.c $(1)/libtux3.a | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) $$$$(pkg-config --cflags $$(PKGS_DOT)) -o $$@ $$< $(1)/libtux3.a $$$$(pkg-config --libs $$(PKGS_DOT))
$(1)/libtux3.a: $$(patsubst %.c,$(1)/%.o,$$(LIB_SRC))
	rm -f $$@
	ar rcs $$@ $$^
$(1)/tux3debug: $$(patsubst %.c,$(1)/%.o,$$(DEBUG_SRC)) $(1)/libtux3.a
	$$(CC) $(2) -o $$@ $$^ $$$$(pkg-config --libs $$(PKGS_DEBUG))
$(1)/mkfs.tux3: $$(patsubst %.c,$(1)/%.o,$$(MKFS_SRC)) $(1)/libtux3.a
	$$(CC) $(2) -o $$@ $$^ $$$$(pkg-config --libs $$(PKGS_MKFS))
$(1)/fsck.tux3: $$(patsubst %.c,$(1)/%.o,$$(FSCK_SRC)) $(1)/libtux3.a
	$$(CC) $(2) -o $$@ $$^
$(1)/tests/unit/%: tests/unit/%.c tests/unit/*.h $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -Itests/unit -o $$@ $$< $(1)/libtux3.a
$(1)/tests/corrupt: tests/corrupt.c $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$< $(1)/libtux3.a
$(1)/tests/vbench: tests/vbench.c $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$< $(1)/libtux3.a
$(1)/tests/mkvtable: tests/mkvtable.c $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$< $(1)/libtux3.a
$(1)/tests/vfsfuzz: tests/vfsfuzz.c $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$< $(1)/libtux3.a
$(1)/tests/fuse_posix: tests/fuse_posix.c | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$<
$(1)/tests/fuse_roundtrip: tests/fuse_roundtrip.c | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$<
$(1)/tests/crash/crashsim: tests/crash/crashsim.c $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$< $(1)/libtux3.a
$(1)-all: $(1)/libtux3.a $(1)/tux3debug $(1)/mkfs.tux3 $(1)/fsck.tux3 \
	$$(patsubst tests/unit/%.c,$(1)/tests/unit/%,$$(UNIT_SRC)) \
	$$(if $$(wildcard tests/corrupt.c),$(1)/tests/corrupt) \
	$$(if $$(wildcard tests/mkvtable.c),$(1)/tests/mkvtable) \
	$$(if $$(wildcard tests/vfsfuzz.c),$(1)/tests/vfsfuzz) \
	$$(if $$(wildcard tests/vbench.c),$(1)/tests/vbench) \
	$$(if $$(wildcard tests/fuse_posix.c),$(1)/tests/fuse_posix) \
	$$(if $$(wildcard tests/fuse_roundtrip.c),$(1)/tests/fuse_roundtrip) \
	$$(if $$(wildcard tests/crash/crashsim.c),$(1)/tests/crash/crashsim) \
	$$(if $$(wildcard dump/tux3dot.c),$(1)/tux3dot) \
	$$(if $$(wildcard dump/tux3image.c),$(1)/tux3image) \
	$$(if $$(wildcard fuse/tux3fuse.c),$(1)/tux3fuse $(1)/mount.tux3) \
	$$(if $$(wildcard tests/dotcount.c),$(1)/tests/dotcount)
endef

$(eval $(call flavour,$(BUILD),))
$(eval $(call flavour,build-asan,$(SAN_FLAGS)))
# gcov counters; atomic updates because tux3fuse and the tests run threads
COV_FLAGS = --coverage -fprofile-update=atomic
$(eval $(call flavour,build-cov,$(COV_FLAGS)))

.PHONY: all deps check check-asan check-fast soak crash fuzz-versions fuzz-fsck bench demo install clean coverage $(BUILD)-all build-asan-all build-cov-all

all: $(BUILD)-all

deps:
	@sh scripts/deps.sh

# TESTS (groups, comma-separated) and TEST_JOBS reach tests/run.sh
export TESTS TEST_JOBS
check: $(BUILD)-all build-asan-all
	@sh tests/run.sh $(BUILD) build-asan

check-fast: $(BUILD)-all
	@sh tests/run.sh $(BUILD)

check-asan: build-asan-all
	@sh tests/run.sh build-asan

# gcovr is this target's own dependency (installed here as root if missing)
coverage: build-cov-all
	@sh scripts/coverage.sh build-cov

# Long random runs of the write-path model test (SOAK=N rounds per block
# size, default 200) and SOAK*10 fsck mutations, on the sanitizer build.
SOAK ?= 200
soak: build-asan-all
	@TUX3_SOAK=$(SOAK) TUX3_SCRATCH=$${TMPDIR:-/tmp} build-asan/tests/unit/test_write
	@FSCK_MUTATIONS=$$(( $(SOAK) * 10 )) TUX3_SCRATCH=$${TMPDIR:-/tmp} \
		sh tests/scripts/fsck_mutate.sh build-asan | grep -v '^PASS'

# The full ACE set and 1000 random workloads at 4096 and 512-byte blocks
# (CRASH_RANDOM=N, CRASH_OPS=N), through the crash simulator.
crash: $(BUILD)-all
	@sh tests/crash/large.sh $(BUILD)

# The versioned-pointer fuzz test at the seed's length (FUZZ_STEPS steps
# on one address set, FUZZ_STEPS/10 on versioned extents;
# every invariant and every version's content checked after each step),
# then tests/vfsfuzz: VFS_OPS file operations in random versions against
# a model, over ten seeds and geometries (4 KiB, more files and
# snapshots, 1 KiB, 512-byte blocks at the per-inode cap, large files,
# 64 KiB), each volume checked by fsck at the end.
FUZZ_STEPS ?= 10000000
VFS_OPS ?= 1000000
fuzz-versions: $(BUILD)-all
	@start=$$(date +%s%N); \
	TUX3_FUZZ_VERSIONS=$(FUZZ_STEPS) $(BUILD)/tests/unit/test_version && \
	end=$$(date +%s%N) && \
	echo "fuzz-versions: $(FUZZ_STEPS) steps in $$(( (end - start) / 1000000 )) ms"
	@dir=$$(mktemp -d $$( [ -w /dev/shm ] && echo /dev/shm || \
		echo $${TMPDIR:-/tmp})/vfsfuzz.XXXXXX) || exit 1; \
	trap 'rm -rf "$$dir"' EXIT; start=$$(date +%s%N); bad=; \
	for seed in 1 2 3 4 5 6 7 8 9 10; do \
		case $$seed in \
		5|6) opts="--files 48 --snapshots 20" ;; \
		7) opts="--blockbits 10" ;; \
		8) opts="--blockbits 9 --size 64" ;; \
		9) opts="--files 64 --max-blocks 160 --snapshots 30" ;; \
		10) opts="--blockbits 16 --max-blocks 8" ;; \
		*) opts="" ;; \
		esac; \
		out=$$($(BUILD)/tests/vfsfuzz "$$dir/v.img" --seed $$seed \
			--ops $$(( $(VFS_OPS) / 10 )) --verify-every 1000 \
			$$opts); rc=$$?; \
		printf '%s\n' "$$out" | grep -v '^vfsfuzz: ops:'; \
		[ $$rc -eq 0 ] || { echo "fuzz-versions: vfsfuzz seed $$seed" \
			"($$opts) failed (exit $$rc)"; bad="$$bad $$seed"; }; \
	done; \
	end=$$(date +%s%N); \
	echo "fuzz-versions: vfsfuzz $(VFS_OPS) ops in $$(( (end - start) / 1000000 )) ms$${bad:+, seeds failed:$$bad}"; \
	[ -z "$$bad" ]

# The fsck damage campaign (issue 19, tests/fuzz/fsck_campaign.sh):
# FUZZ_FSCK_N random single-block and single-field mutations of volumes
# of every kind (populated at 4 KiB and 1 KiB blocks, small ones at 512 B,
# 16 KiB and 64 KiB, unified, log-only, with orphans, with snapshots),
# each checked with fsck.tux3 -fn, -fy, -fn; prints detected, repaired,
# gave up, violations, exit >= 8, signals, timeouts, sanitizer reports,
# the repair rate and a table per volume and damage kind.  Failing cases
# are kept in FUZZ_FSCK_KEEP (default $(BUILD)/fuzz-fsck-failures), each
# with its command (FUZZ_FSCK_CASE=KIND:SEED) to run it alone.
FUZZ_FSCK_N ?= 600
FUZZ_FSCK_SEED ?= 1
fuzz-fsck: $(BUILD)-all
	@FUZZ_FSCK_N=$(FUZZ_FSCK_N) FUZZ_FSCK_SEED=$(FUZZ_FSCK_SEED) \
		sh tests/fuzz/fsck_campaign.sh $(BUILD)

# tux3fuse's tests and workloads at full size (FUSE_FULL=1; make check
# runs them short); fails if any case failed
.PHONY: fuse
fuse: $(BUILD)-all
	@FUSE_FULL=1 sh tests/scripts/fuse.sh $(BUILD) | tee $(BUILD)/fuse.log
	@FUSE_FULL=1 sh tests/scripts/fuse_workloads.sh $(BUILD) | \
		tee -a $(BUILD)/fuse.log
	@echo "fuse: $$(grep -c '^PASS' $(BUILD)/fuse.log) passed," \
		"$$(grep -c '^FAIL' $(BUILD)/fuse.log) failed," \
		"$$(grep -c '^SKIP' $(BUILD)/fuse.log) skipped"
	@! grep -q '^FAIL' $(BUILD)/fuse.log

demo: $(BUILD)-all
	@sh scripts/demo.sh $(BUILD)

# mkfs.tux3 -d against mke2fs -d and mkfs.btrfs --rootdir (ratios)
bench: $(BUILD)-all
	@sh scripts/bench.sh $(BUILD)

install: $(BUILD)-all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)
	install -m 755 $(BUILD)/tux3debug $(DESTDIR)$(SBINDIR)/tux3debug
	install -m 755 $(BUILD)/mkfs.tux3 $(DESTDIR)$(SBINDIR)/mkfs.tux3
	install -m 755 $(BUILD)/fsck.tux3 $(DESTDIR)$(SBINDIR)/fsck.tux3
	install -m 755 $(BUILD)/tux3dot $(DESTDIR)$(SBINDIR)/tux3dot
	install -m 755 $(BUILD)/tux3image $(DESTDIR)$(SBINDIR)/tux3image
	install -m 755 $(BUILD)/tux3fuse $(DESTDIR)$(SBINDIR)/tux3fuse
	install -d $(DESTDIR)$(MOUNT_HELPER_DIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g' fuse/mount.tux3.sh > $(DESTDIR)$(MOUNT_HELPER_DIR)/mount.tux3
	chmod 755 $(DESTDIR)$(MOUNT_HELPER_DIR)/mount.tux3
	install -m 644 doc/*.8 $(DESTDIR)$(MANDIR)/

clean:
	rm -rf $(BUILD) build-asan build-cov

# Header dependencies, written by the compiler (-MMD) beside each object.
-include $(shell find $(BUILD) build-asan build-cov -name '*.d' 2>/dev/null)
