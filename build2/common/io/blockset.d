build2/common/io/blockset.o: common/io/blockset.c common/io/io.h \
 common/volume.h common/tux3.h common/io/record.h
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
