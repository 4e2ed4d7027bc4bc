build2/dump/image_write.o: dump/image_write.c dump/image.h common/tux3.h \
 common/format/endian.h
dump/image.h:
common/tux3.h:
common/format/endian.h:
