build2/common/namei.o: common/namei.c common/core.h \
 common/format/format.h common/io/io.h common/volume.h common/tux3.h \
 common/io/record.h common/format/endian.h
common/core.h:
common/format/format.h:
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
common/format/endian.h:
