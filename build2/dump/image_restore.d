build2/dump/image_restore.o: dump/image_restore.c dump/image.h \
 common/tux3.h common/format/endian.h
dump/image.h:
common/tux3.h:
common/format/endian.h:
