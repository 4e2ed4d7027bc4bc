/*
 * A directory read in batches (tux3_readdir_from): a walker holds at most
 * DIR_BATCH entries of each directory on its path, so find and rdump of a
 * directory of a million entries take the memory of one batch, not of
 * the directory.  Each batch after the first costs a load of the
 * directory's inode and one read of the block it resumes in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "debugfs.h"

void dir_batch_init(struct dir_batch *b, tux3_ino_t dir)
{
	memset(b, 0, sizeof(*b));
	b->dir = dir;
}

void dir_batch_free(struct dir_batch *b)
{
	free(b->names);
	b->names = NULL;
	b->namecap = 0;
}

static int batch_add(void *ctx, const char *name, unsigned len,
		     tux3_ino_t ino, unsigned type, uint64_t pos)
{
	struct dir_batch *b = ctx;
	if (b->used + len + 1 > b->namecap) {
		size_t cap = b->namecap ? b->namecap : 4096;
		while (cap < b->used + len + 1)
			cap *= 2;
		char *n = realloc(b->names, cap);
		if (!n)
			return -ENOMEM;
		b->names = n;
		b->namecap = cap;
	}
	memcpy(b->names + b->used, name, len);
	b->names[b->used + len] = 0;
	b->e[b->count++] = (struct dir_batch_entry){
		.ino = ino, .name = (uint32_t)b->used, .type = type };
	b->used += len + 1;
	b->resume = pos + 1;
	return b->count == DIR_BATCH;	/* full: stop here, resume later */
}

static void batch_fill(struct tux3_volume *vol, struct dir_batch *b)
{
	b->count = b->next = 0;
	b->used = 0;
	int r = tux3_readdir_from(vol, b->dir, b->resume, batch_add, b);
	if (r < 0) {
		b->err = r;	/* what was read before it is still passed on */
		const struct tux3_error *e = tux3_last_error(vol);
		b->err_text[0] = 0;
		if (e && e->err)
			tux3_error_text(vol, b->err_text, sizeof(b->err_text));
		tux3_clear_error(vol);
	}
	if (r <= 0)
		b->done = 1;
}

int dir_batch_report(struct shell *sh, const struct dir_batch *b,
		     const char *path, int err)
{
	return sh_err(sh, "%s: %s", path,
		      b->err_text[0] ? b->err_text : strerror(-err));
}

int dir_batch_next(struct tux3_volume *vol, struct dir_batch *b,
		   struct dir_entry_ref *out)
{
	if (b->next == b->count) {
		if (b->done) {
			int err = b->err;
			b->err = 0;
			return err;
		}
		batch_fill(vol, b);
		if (b->next == b->count)
			return dir_batch_next(vol, b, out);
	}
	const struct dir_batch_entry *e = &b->e[b->next++];
	out->name = b->names + e->name;
	out->ino = e->ino;
	out->type = e->type;
	return 1;
}
