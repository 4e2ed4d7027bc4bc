build2/tests/unit/test_dleaf: tests/unit/test_dleaf.c \
 tests/unit/fixtures.h tests/unit/harness.h common/internal.h \
 common/version/vinode.h common/write/write.h common/core.h \
 common/format/format.h common/io/io.h common/volume.h common/tux3.h \
 common/io/record.h common/format/endian.h common/version/version.h \
 common/version/vfilemap.h common/version/vinode.h common/version/vleaf.h \
 common/tux3_fsck.h
tests/unit/fixtures.h:
tests/unit/harness.h:
common/internal.h:
common/version/vinode.h:
common/write/write.h:
common/core.h:
common/format/format.h:
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
common/format/endian.h:
common/version/version.h:
common/version/vfilemap.h:
common/version/vinode.h:
common/version/vleaf.h:
common/tux3_fsck.h:
