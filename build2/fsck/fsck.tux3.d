build2/fsck/fsck.tux3.o: fsck/fsck.tux3.c common/tux3.h \
 common/tux3_fsck.h common/tux3.h
common/tux3.h:
common/tux3_fsck.h:
common/tux3.h:
