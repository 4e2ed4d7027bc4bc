build2/common/logscan.o: common/logscan.c common/core.h \
 common/format/format.h common/io/io.h common/volume.h common/tux3.h \
 common/io/record.h common/format/endian.h common/tux3_walk.h
common/core.h:
common/format/format.h:
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
common/format/endian.h:
common/tux3_walk.h:
