build2/mkfs/populate.o: mkfs/populate.c mkfs/populate.h common/tux3.h
mkfs/populate.h:
common/tux3.h:
