build2/common/io/devcache.o: common/io/devcache.c common/io/io.h \
 common/volume.h common/tux3.h common/io/record.h
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
