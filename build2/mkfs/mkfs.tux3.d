build2/mkfs/mkfs.tux3.o: mkfs/mkfs.tux3.c /usr/include/blkid/blkid.h \
 /usr/include/uuid/uuid.h common/tux3.h mkfs/populate.h
/usr/include/blkid/blkid.h:
/usr/include/uuid/uuid.h:
common/tux3.h:
mkfs/populate.h:
