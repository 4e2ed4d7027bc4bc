build2/common/format/superext.o: common/format/superext.c \
 common/format/format.h common/io/io.h common/volume.h common/tux3.h \
 common/io/record.h common/format/endian.h
common/format/format.h:
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
common/format/endian.h:
