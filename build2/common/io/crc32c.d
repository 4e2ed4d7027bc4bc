build2/common/io/crc32c.o: common/io/crc32c.c common/io/io.h \
 common/volume.h common/tux3.h common/io/record.h
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
