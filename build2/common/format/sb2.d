build2/common/format/sb2.o: common/format/sb2.c common/format/format.h \
 common/io/io.h common/volume.h common/tux3.h common/io/record.h \
 common/format/endian.h common/tux3_fsck.h
common/format/format.h:
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
common/format/endian.h:
common/tux3_fsck.h:
