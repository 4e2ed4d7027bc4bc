build2/common/write/btree_edit.o: common/write/btree_edit.c \
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
