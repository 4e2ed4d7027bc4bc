build2/common/version/vtable.o: common/version/vtable.c common/tux3.h \
 common/format/endian.h common/version/version.h
common/tux3.h:
common/format/endian.h:
common/version/version.h:
