build2/common/io/vol_io.o: common/io/vol_io.c common/io/io.h \
 common/volume.h common/tux3.h common/io/record.h
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
