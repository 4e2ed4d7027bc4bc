build2/common/io/overlay.o: common/io/overlay.c common/io/io.h \
 common/volume.h common/tux3.h common/io/record.h
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
