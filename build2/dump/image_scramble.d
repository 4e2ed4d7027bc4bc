build2/dump/image_scramble.o: dump/image_scramble.c dump/image.h \
 common/tux3.h
dump/image.h:
common/tux3.h:
