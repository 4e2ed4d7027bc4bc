build2/common/version/vtree.o: common/version/vtree.c \
 common/version/version.h
common/version/version.h:
