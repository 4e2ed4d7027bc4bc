build2/tests/vfsfuzz: tests/vfsfuzz.c common/tux3.h common/tux3_fsck.h \
 common/tux3.h
common/tux3.h:
common/tux3_fsck.h:
common/tux3.h:
