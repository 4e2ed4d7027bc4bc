build2/tests/unit/test_version: tests/unit/test_version.c \
 tests/unit/harness.h common/tux3.h common/format/endian.h \
 common/version/version.h
tests/unit/harness.h:
common/tux3.h:
common/format/endian.h:
common/version/version.h:
