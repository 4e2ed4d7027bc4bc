build2/common/format/log.o: common/format/log.c common/format/format.h \
 common/io/io.h common/volume.h common/tux3.h common/io/record.h \
 common/format/endian.h common/tux3_walk.h
common/format/format.h:
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
common/format/endian.h:
common/tux3_walk.h:
