build2/common/io/record.o: common/io/record.c common/io/record.h
common/io/record.h:
