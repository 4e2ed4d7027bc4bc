/* The -U argument of mkfs.tux3 and tux3tune, as mke2fs and tune2fs
 * read theirs. */
#ifndef TUX3_MKFS_UUID_ARG_H
#define TUX3_MKFS_UUID_ARG_H

#include <stdint.h>

/* "random", "time", "clear" (all zero) or a UUID in the 8-4-4-4-12
 * form: 0 with uuid set, -1 for anything else. */
int uuid_from_arg(const char *arg, uint8_t uuid[16]);

#endif
