build2/common/version/velist.o: common/version/velist.c \
 common/version/version.h
common/version/version.h:
