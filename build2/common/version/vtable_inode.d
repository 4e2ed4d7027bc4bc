build2/common/version/vtable_inode.o: common/version/vtable_inode.c \
 common/version/vinode.h common/write/write.h common/core.h \
 common/format/format.h common/io/io.h common/volume.h common/tux3.h \
 common/io/record.h common/format/endian.h common/version/version.h
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
