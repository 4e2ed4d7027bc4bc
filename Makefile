# tux3-tools: libtux3 and the offline tools for the Tux3 filesystem.
#
#   make            build everything (installs the missing Debian packages
#                   the build needs first: scripts/deps.sh build);
#                   CC=clang, WERROR=1, STATIC=1 (tools link libtux3.a)
#   make check      build, then run every test (normal and sanitizer builds;
#                   WERROR=1, and the tests' packages: deps.sh test)
#                   TESTS=fsck,crash runs those groups only, TEST_JOBS=N
#                   jobs at once, logs in BUILD/tests/log (doc/testing.md)
#   make check-asan run the tests on the AddressSanitizer + UBSan build only
#   make coverage   a gcov build (build-cov) through the tests, then line and
#                   branch coverage per folder and the least-covered files
#   make demo       the main job on a default image
#   make soak       long random runs of the write-path model (SOAK=N)
#   make crash      the crash simulator's large set (tests/crash/large.sh)
#   make crash-asan the same on the sanitizer build
#   make fuzz-versions  the versioned-pointer fuzz test, 10 million steps
#   make fuzz-fsck  the fsck damage campaign: FUZZ_FSCK_N (600) mutations of
#                   volumes of every kind, seed FUZZ_FSCK_SEED (1), a summary
#   make bench      mkfs.tux3 -d against mke2fs -d and mkfs.btrfs --rootdir,
#                   the checks against e2fsck/btrfs check, version costs,
#                   cp -a through tux3fuse against ext4 on loop and tmpfs,
#                   and bench-scale's 100,000-file row
#   make bench-scale  100k, 1M and 10M small files (and one directory of
#                   1M entries) through populate, fsck, tux3dot, tux3image,
#                   manifest and rdump beside mke2fs -d, e2fsck, e2image
#                   and debugfs: time, peak memory, growth per 10x
#                   (SCALE_SIZES, SCALE_FLAT, SCALE_DIR); then one tree on
#                   64 GiB to 1 PiB volumes (BENCH_SCALE_SIZES, _DIR)
#   make fuse       tux3fuse's tests and workloads at full size
#   make install    PREFIX=/usr/local DESTDIR= LIBDIR= (the tools, libtux3,
#                   its headers and tux3.pc, man pages, bash completion,
#                   the udev rule in UDEV_RULES_DIR)
#   make uninstall  the same variables: removes what install installed
#   make contrib-blkid  util-linux's blkid with contrib/libblkid's Tux3
#                   prober, and its test (tests/scripts/blkid_prober.sh)
#   make deps       install the build's and the tests' Debian packages
#                   (DEPS=0: never look; debian/rules sets it)

.DEFAULT_GOAL := all
# Build on every core unless the caller chose (-j N).
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif

PREFIX  ?= /usr/local
DESTDIR ?=
SBINDIR  = $(PREFIX)/sbin
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR   = $(PREFIX)/share/man
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
# mount(8) looks for helpers in /sbin, whatever the PREFIX
MOUNT_HELPER_DIR ?= /sbin

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
# WERROR=1 turns warnings into errors: `make check` and .ci/run set it; a
# plain build only warns, so that a newer compiler's new warning does not
# stop a user's build.
WERROR  ?=
WARN    = -Wall -Wextra -Wmissing-prototypes -Wshadow -Wstrict-prototypes \
	$(if $(filter 1,$(WERROR)),-Werror)
# CPPFLAGS, CFLAGS and LDFLAGS are the caller's (a packager's hardening
# flags), added after ours.
CFLAGS_BASE = -std=gnu11 $(OPT) -g $(WARN) -D_GNU_SOURCE \
	-D_FILE_OFFSET_BITS=64 -Icommon -MMD -MP $(CPPFLAGS) $(CFLAGS)
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined

# libtux3's shared library: the soname's number is the interface version
# (TUX3_LIBRARY_VERSION in common/tux3.h); common/libtux3.map exports the
# public tux3_* API only.  The tools link it, and find it in the build
# tree through their run path ($ORIGIN); the copies `make install`
# installs ($(BUILD)/inst/) carry no run path.  STATIC=1 links the tools
# with libtux3.a instead.
LIBTUX3_SOVERSION = 1
# the release, as tux3_version() gives it (common/top/volume.c)
TUX3_RELEASE := $(shell sed -n 's/^\#define TUX3_VERSION "\(.*\)"/\1/p' common/top/volume.c)
LIBTUX3_SONAME = libtux3.so.$(LIBTUX3_SOVERSION)
STATIC  ?=
RPATH_HERE = -Wl,-rpath,'$$ORIGIN'

PKGS_DEBUG = readline libcrypto uuid
PKGS_MKFS  = blkid uuid
PKGS_DOT   = libcgraph libgvc
PKGS_FUSE  = fuse3 liburing

LIB_SRC   = $(wildcard common/*.c common/*/*.c)
PUBLIC_H  = common/tux3.h common/tux3_walk.h common/tux3_fsck.h \
	common/tux3_fields.h
DEBUG_SRC = $(wildcard debugfs/*.c)
MKFS_SRC  = mkfs/mkfs.tux3.c mkfs/populate.c mkfs/prefetch.c mkfs/mounted.c \
	mkfs/uuid_arg.c
TUNE_SRC  = mkfs/tux3tune.c mkfs/mounted.c mkfs/uuid_arg.c
PROBE_SRC = mkfs/tux3probe.c
FSCK_SRC  = $(wildcard fsck/*.c)
UNIT_SRC  = $(wildcard tests/unit/*.c)
DOT_SRC   = $(wildcard dump/tux3dot.c dump/dot_*.c)
IMAGE_SRC = $(wildcard dump/tux3image.c dump/image_*.c)
FUSE_SRC  = $(wildcard fuse/*.c)
# udev's rules for packages; 59- runs before 60-persistent-storage.rules
UDEV_RULES_DIR ?= /usr/lib/udev/rules.d
DUMP_H    = $(wildcard dump/*.h)
TOOLS     = tux3debug mkfs.tux3 fsck.tux3 tux3tune tux3probe tux3dot \
	tux3image tux3fuse
# What a tool links for libtux3, in build tree $(1)
libtux3_for = $(if $(filter 1,$(STATIC)),$(1)/libtux3.a,$(1)/$(LIBTUX3_SONAME))

# FORCE when TREE/.cflags ($(1)) holds other flags than $(2)
space := $() $()
squash = x$(subst $(space),_,$(strip $(1)))
cflags_changed = $(if $(filter $(call squash,$(file <$(1)/.cflags)),$(call squash,$(2))),,FORCE)

# $(call tool,TREE,FLAGS,PROGRAM,SOURCES,PKG-CONFIG NAMES): the program in
# TREE (run path $ORIGIN) and, for the installed copy, in TREE/inst.
define tool
$(1)/$(3): $$(patsubst %.c,$(1)/%.o,$(4)) $$(call libtux3_for,$(1))
	$$(CC) $(2) $$(LDFLAGS) -o $$@ $$^ $$(RPATH_HERE) $(if $(5),$$$$(pkg-config --libs $(5)))
$(1)/inst/$(3): $$(patsubst %.c,$(1)/%.o,$(4)) $$(call libtux3_for,$(1))
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) $$(LDFLAGS) -o $$@ $$^ $(if $(5),$$$$(pkg-config --libs $(5)))
endef

# One build tree per flavour: $(BUILD) normal, build-asan sanitized.
# TREE/.cflags holds the compiler and the flags that change the code
# (not the warnings): when they change, every object is rebuilt.
define flavour
$(1)/.cflags: $$(call cflags_changed,$(1),$$(CC) $$(OPT) $$(CPPFLAGS) $$(CFLAGS) $(2) -fPIC)
	@mkdir -p $(1)
	@echo '$$(CC) $$(OPT) $$(CPPFLAGS) $$(CFLAGS) $(2) -fPIC' > $$@
$(1)/common/%.o: common/%.c $(1)/.cflags | deps-build
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -fPIC -c $$< -o $$@
$(1)/debugfs/%.o: debugfs/%.c $(1)/.cflags debugfs/*.h | deps-build
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) $$$$(pkg-config --cflags $$(PKGS_DEBUG)) -c $$< -o $$@
$(1)/mkfs/%.o: mkfs/%.c $(1)/.cflags | deps-build
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) $$$$(pkg-config --cflags $$(PKGS_MKFS)) -c $$< -o $$@
$(1)/fsck/%.o: fsck/%.c $(1)/.cflags | deps-build
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -c $$< -o $$@
$(1)/dump/%.o: dump/%.c $(1)/.cflags $$(DUMP_H) | deps-build
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) $$$$(pkg-config --cflags $$(PKGS_DOT)) -c $$< -o $$@
$(1)/fuse/%.o: fuse/%.c $(1)/.cflags fuse/*.h | deps-build
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) $$$$(pkg-config --cflags $$(PKGS_FUSE)) -c $$< -o $$@
$(1)/mount.tux3: fuse/mount.tux3.sh
	@mkdir -p $$(dir $$@)
	sed 's|@SBINDIR@|$$(SBINDIR)|g' $$< > $$@ && chmod 755 $$@
$(1)/59-tux3.rules: mkfs/59-tux3.rules.in
	@mkdir -p $$(dir $$@)
	sed 's|@SBINDIR@|$$(SBINDIR)|g' $$< > $$@
$(1)/tests/dotcount: tests/dotcount.c $(1)/libtux3.a | deps-build
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) $$$$(pkg-config --cflags $$(PKGS_DOT)) -o $$@ $$< $(1)/libtux3.a $$$$(pkg-config --libs $$(PKGS_DOT))
$(1)/libtux3.a: $$(patsubst %.c,$(1)/%.o,$$(LIB_SRC))
	rm -f $$@
	ar rcs $$@ $$^
$(1)/$(LIBTUX3_SONAME): $$(patsubst %.c,$(1)/%.o,$$(LIB_SRC)) common/libtux3.map
	$$(CC) $(2) -shared $$(LDFLAGS) -Wl,-soname,$(LIBTUX3_SONAME) \
		-Wl,--version-script,common/libtux3.map -Wl,-z,defs \
		-o $$@ $$(filter %.o,$$^)
$(eval $(call tool,$(1),$(2),tux3debug,$(DEBUG_SRC),$(PKGS_DEBUG)))
$(eval $(call tool,$(1),$(2),mkfs.tux3,$(MKFS_SRC),$(PKGS_MKFS)))
$(eval $(call tool,$(1),$(2),fsck.tux3,$(FSCK_SRC),))
$(eval $(call tool,$(1),$(2),tux3dot,$(DOT_SRC),$(PKGS_DOT)))
$(eval $(call tool,$(1),$(2),tux3image,$(IMAGE_SRC),))
$(eval $(call tool,$(1),$(2),tux3fuse,$(FUSE_SRC),$(PKGS_FUSE)))
$(eval $(call tool,$(1),$(2),tux3tune,$(TUNE_SRC),uuid))
$(eval $(call tool,$(1),$(2),tux3probe,$(PROBE_SRC),$(PKGS_MKFS)))
$(1)/tests/unit/%: tests/unit/%.c tests/unit/*.h $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -Itests/unit -o $$@ $$< $(1)/libtux3.a
$(1)/tests/corrupt: tests/corrupt.c $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$< $(1)/libtux3.a
$(1)/tests/vbench: tests/vbench.c $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$< $(1)/libtux3.a
$(1)/tests/dirbench: tests/dirbench.c $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$< $(1)/libtux3.a
$(1)/tests/mkvtable: tests/mkvtable.c $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$< $(1)/libtux3.a
$(1)/tests/vfsfuzz: tests/vfsfuzz.c $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$< $(1)/libtux3.a
$(1)/tests/fuse_posix: tests/fuse_posix.c | deps-build
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$<
$(1)/tests/fuse_roundtrip: tests/fuse_roundtrip.c | deps-build
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$<
$(1)/tests/crash/crashsim: tests/crash/crashsim.c $(1)/libtux3.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $(2) -o $$@ $$< $(1)/libtux3.a
# The library and the programs (what `make install` takes from)
$(1)-progs: $(1)/libtux3.a $(1)/$(LIBTUX3_SONAME) \
	$$(patsubst %,$(1)/%,$$(TOOLS)) $(1)/mount.tux3 \
	$(1)/59-tux3.rules
$(1)-all: $(1)-progs \
	$$(patsubst tests/unit/%.c,$(1)/tests/unit/%,$$(UNIT_SRC)) \
	$$(if $$(wildcard tests/corrupt.c),$(1)/tests/corrupt) \
	$$(if $$(wildcard tests/mkvtable.c),$(1)/tests/mkvtable) \
	$$(if $$(wildcard tests/vfsfuzz.c),$(1)/tests/vfsfuzz) \
	$$(if $$(wildcard tests/vbench.c),$(1)/tests/vbench) \
	$$(if $$(wildcard tests/dirbench.c),$(1)/tests/dirbench) \
	$$(if $$(wildcard tests/fuse_posix.c),$(1)/tests/fuse_posix) \
	$$(if $$(wildcard tests/fuse_roundtrip.c),$(1)/tests/fuse_roundtrip) \
	$$(if $$(wildcard tests/crash/crashsim.c),$(1)/tests/crash/crashsim) \
	$$(if $$(wildcard tests/dotcount.c),$(1)/tests/dotcount)
endef

$(eval $(call flavour,$(BUILD),))
$(eval $(call flavour,build-asan,$(SAN_FLAGS)))
# gcov counters; atomic updates because tux3fuse and the tests run threads
COV_FLAGS = --coverage -fprofile-update=atomic
$(eval $(call flavour,build-cov,$(COV_FLAGS)))

.PHONY: FORCE all deps deps-build deps-test check check-asan check-fast soak crash crash-asan fuzz-versions fuzz-fsck bench bench-scale demo install uninstall clean $(BUILD)-all build-asan-all $(BUILD)-progs build-asan-progs coverage build-cov-all

all: $(BUILD)-all
FORCE:

# What the build needs (compiler, pkg-config, the libraries), what the
# tests add (their programs), and both (scripts/deps.sh).  DEPS=0 skips
# the first two: a package build (debian/rules) has its Build-Depends.
DEPS ?= 1
deps-build:
	$(if $(filter 0,$(DEPS)),@true,@CC='$(CC)' sh scripts/deps.sh build)
deps-test: deps-build
	$(if $(filter 0,$(DEPS)),@true,@sh scripts/deps.sh test)
deps:
	@CC='$(CC)' sh scripts/deps.sh all

# The checks build with -Werror and ensure the test programs first.
check check-fast check-asan: WERROR = 1
check check-fast check-asan: | deps-test

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

# The same on the sanitizer build (make check samples its crash set there)
crash-asan: build-asan-all
	@sh tests/crash/large.sh build-asan

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

# The libblkid prober of contrib/libblkid (optional, issue 21): util-linux's
# blkid and libblkid built with it from Debian's source package (fetched
# with private apt lists; needs autoconf, automake, libtool, autopoint),
# then tests/scripts/blkid_prober.sh against it; fails if any case failed
.PHONY: contrib-blkid
contrib-blkid: $(BUILD)-all
	@sh contrib/libblkid/build.sh $(BUILD)/contrib-blkid
	@TUX3_BLKID_BUILD=$(BUILD)/contrib-blkid \
		sh tests/scripts/blkid_prober.sh $(BUILD) | \
		tee $(BUILD)/contrib-blkid/test.log
	@! grep -q '^FAIL' $(BUILD)/contrib-blkid/test.log

demo: $(BUILD)-all
	@sh scripts/demo.sh $(BUILD)

# mkfs.tux3 -d against mke2fs -d and mkfs.btrfs --rootdir (ratios)
bench: $(BUILD)-all
	@sh scripts/bench.sh $(BUILD)

# files (scripts/bench_scale.sh), then volume sizes (scripts/bench_volsize.sh)
bench-scale: $(BUILD)-all
	@sh scripts/bench_scale.sh $(BUILD)
	@sh scripts/bench_volsize.sh $(BUILD)

# What `make install` installs, below DESTDIR (tests/install.list holds
# the list for PREFIX=/usr/local, tests/scripts/install.sh checks it):
# the programs and the mount helper, libtux3 (shared and static), its
# public headers in include/tux3, tux3.pc, the man pages, and the bash
# completion (one file, named for each tool, as bash-completion looks).
MAN8 = $(wildcard doc/*.8)
MAN3 = $(wildcard doc/*.3)
INSTALL_PROGS = $(patsubst %,$(BUILD)/inst/%,$(TOOLS))
$(BUILD)/tux3.bash: scripts/completion.sh debugfs/table.c
	@mkdir -p $(dir $@)
	sh scripts/completion.sh debugfs/table.c > $@

install: $(INSTALL_PROGS) $(BUILD)/$(LIBTUX3_SONAME) $(BUILD)/libtux3.a \
		$(BUILD)/tux3.bash $(BUILD)/59-tux3.rules
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MOUNT_HELPER_DIR) \
		$(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/tux3 \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(COMPLETIONDIR) \
		$(DESTDIR)$(UDEV_RULES_DIR)
	install -m 755 $(INSTALL_PROGS) $(DESTDIR)$(SBINDIR)/
	sed 's|@SBINDIR@|$(SBINDIR)|g' fuse/mount.tux3.sh > $(DESTDIR)$(MOUNT_HELPER_DIR)/mount.tux3
	chmod 755 $(DESTDIR)$(MOUNT_HELPER_DIR)/mount.tux3
	install -m 644 $(BUILD)/$(LIBTUX3_SONAME) $(DESTDIR)$(LIBDIR)/
	ln -sf $(LIBTUX3_SONAME) $(DESTDIR)$(LIBDIR)/libtux3.so
	install -m 644 $(BUILD)/libtux3.a $(DESTDIR)$(LIBDIR)/
	install -m 644 $(PUBLIC_H) $(DESTDIR)$(INCLUDEDIR)/tux3/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(TUX3_RELEASE)|g' \
		common/tux3.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/tux3.pc
	install -m 644 $(MAN8) $(DESTDIR)$(MANDIR)/man8/
	install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/
	install -m 644 $(BUILD)/59-tux3.rules $(DESTDIR)$(UDEV_RULES_DIR)/
	install -m 644 $(BUILD)/tux3.bash $(DESTDIR)$(COMPLETIONDIR)/tux3debug
	for t in $(filter-out tux3debug,$(TOOLS)); do \
		ln -sf tux3debug $(DESTDIR)$(COMPLETIONDIR)/$$t || exit 1; done

# Exactly what install installed; of the directories, only include/tux3.
uninstall:
	rm -f $(patsubst %,$(DESTDIR)$(SBINDIR)/%,$(TOOLS)) \
		$(DESTDIR)$(MOUNT_HELPER_DIR)/mount.tux3 \
		$(DESTDIR)$(LIBDIR)/$(LIBTUX3_SONAME) \
		$(DESTDIR)$(LIBDIR)/libtux3.so $(DESTDIR)$(LIBDIR)/libtux3.a \
		$(patsubst common/%,$(DESTDIR)$(INCLUDEDIR)/tux3/%,$(PUBLIC_H)) \
		$(DESTDIR)$(PKGCONFIGDIR)/tux3.pc \
		$(patsubst doc/%,$(DESTDIR)$(MANDIR)/man8/%,$(MAN8)) \
		$(patsubst doc/%,$(DESTDIR)$(MANDIR)/man3/%,$(MAN3)) \
		$(patsubst %,$(DESTDIR)$(COMPLETIONDIR)/%,$(TOOLS)) \
		$(DESTDIR)$(UDEV_RULES_DIR)/59-tux3.rules
	-rmdir $(DESTDIR)$(INCLUDEDIR)/tux3

clean:
	rm -rf $(BUILD) build-asan build-clang build-cov

# Header dependencies, written by the compiler (-MMD) beside each object.
-include $(shell find $(BUILD) build-asan build-cov -name '*.d' 2>/dev/null)
