build2/common/format/fields.o: common/format/fields.c \
 common/format/format.h common/io/io.h common/volume.h common/tux3.h \
 common/io/record.h common/format/endian.h common/tux3_fields.h
common/format/format.h:
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
common/format/endian.h:
common/tux3_fields.h:
