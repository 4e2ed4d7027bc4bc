build2/common/version/vfilemap_write.o: common/version/vfilemap_write.c \
 common/version/vinode.h common/write/write.h common/core.h \
 common/format/format.h common/io/io.h common/volume.h common/tux3.h \
 common/io/record.h common/format/endian.h common/version/version.h \
 common/version/vleaf.h common/version/vfilemap.h
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
common/version/vleaf.h:
common/version/vfilemap.h:
