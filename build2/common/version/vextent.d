build2/common/version/vextent.o: common/version/vextent.c \
 common/version/version.h
common/version/version.h:
