build2/common/raw.o: common/raw.c common/core.h common/format/format.h \
 common/io/io.h common/volume.h common/tux3.h common/io/record.h \
 common/format/endian.h common/tux3_fields.h
common/core.h:
common/format/format.h:
common/io/io.h:
common/volume.h:
common/tux3.h:
common/io/record.h:
common/format/endian.h:
common/tux3_fields.h:
