build2/common/write/xattr_write.o: common/write/xattr_write.c \
 common/write/write.h common/core.h common/format/format.h common/io/io.h \
 common/volume.h common/tux3.h common/io/record.h common/format/endian.h
common/write/write.h:
common/core.h:
common/format/format.h:
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
common/format/endian.h:
