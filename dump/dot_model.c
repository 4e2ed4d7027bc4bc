/*
 * tux3dot: the model (nodes, parents, labels) and label text handling.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "dot.h"

static const struct {
	const char *prefix, *one, *many;
	int has_id;
} kinds[DK_NKINDS] = {
	[DK_SB] = { "sb", "superblock", "superblocks", 0 },
	[DK_LOG] = { "log", "log block", "log blocks", 1 },
	[DK_BNODE] = { "bnode", "bnode", "bnodes", 1 },
	[DK_ILEAF] = { "ileaf", "ileaf", "ileaves", 1 },
	[DK_OLEAF] = { "oleaf", "oleaf", "oleaves", 1 },
	[DK_DLEAF] = { "dleaf", "dleaf", "dleaves", 1 },
	[DK_INODE] = { "inode", "inode", "inodes", 1 },
	[DK_DIR] = { "dir", "directory", "directories", 1 },
	[DK_ORPHANS] = { "orphans", "orphan list", "orphan lists", 0 },
	[DK_ATOMS] = { "atoms", "atom table", "atom tables", 0 },
	[DK_BITMAP] = { "bitmap", "bitmap block", "bitmap blocks", 1 },
	[DK_VERSION] = { "version", "version", "versions", 1 },
	[DK_ERROR] = { "error", "error", "errors", 1 },
};

const char *dot_kind_prefix(enum dot_kind kind)
{
	return kinds[kind].prefix;
}

const char *dot_kind_noun(enum dot_kind kind, uint64_t count)
{
	return count == 1 ? kinds[kind].one : kinds[kind].many;
}

int dot_kind_has_id(enum dot_kind kind)
{
	return kinds[kind].has_id;
}

const char *dot_thousands(char *buf, size_t len, uint64_t n)
{
	char digits[32];
	int nd = snprintf(digits, sizeof(digits), "%" PRIu64, n);
	size_t o = 0;
	for (int i = 0; i < nd && o + 2 < len; i++) {
		if (i && (nd - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

void dot_model_init(struct dot_model *m)
{
	memset(m, 0, sizeof(*m));
	m->max_level = -1;
}

void dot_model_limit(struct dot_model *m, unsigned budget, int max_level)
{
	m->budget = budget;
	m->max_level = max_level;
}

void dot_model_free(struct dot_model *m)
{
	for (unsigned i = 0; i < m->count; i++)
		free(m->node[i].text.buf);
	free(m->node);
	free(m->hash);
	free(m->seen);
	memset(m, 0, sizeof(*m));
}

static unsigned hash_key(enum dot_kind kind, uint64_t id, unsigned size)
{
	uint64_t h = (id ^ ((uint64_t)kind << 56)) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 29;
	return (unsigned)(h & (size - 1));
}

static void hash_put(struct dot_model *m, int index)
{
	const struct dot_node *n = &m->node[index];
	unsigned h = hash_key(n->kind, n->id, m->hash_size);
	while (m->hash[h])
		h = (h + 1) & (m->hash_size - 1);
	m->hash[h] = index + 1;
}

static int hash_grow(struct dot_model *m)
{
	unsigned size = m->hash_size ? m->hash_size * 2 : 1024;
	int *hash = calloc(size, sizeof(*hash));
	if (!hash)
		return -1;
	free(m->hash);
	m->hash = hash;
	m->hash_size = size;
	for (unsigned i = 0; i < m->count; i++)
		hash_put(m, (int)i);
	return 0;
}

int dot_find(const struct dot_model *m, enum dot_kind kind, uint64_t id)
{
	if (!m->hash_size)
		return -1;
	unsigned h = hash_key(kind, id, m->hash_size);
	int found = -1;
	for (; m->hash[h]; h = (h + 1) & (m->hash_size - 1)) {
		const struct dot_node *n = &m->node[m->hash[h] - 1];
		/* the first one added (a block met twice keeps its name) */
		if (n->kind == kind && n->id == id &&
		    (found < 0 || m->hash[h] - 1 < found))
			found = m->hash[h] - 1;
	}
	return found;
}

/* Kinds whose count does not grow with the files: always kept, and not
 * counted against the budget (which only makes the choice of what to
 * keep more generous than the final one). */
static int always_kept(enum dot_kind kind)
{
	return kind == DK_SB || kind == DK_LOG || kind == DK_VERSION ||
	       kind == DK_ERROR || kind == DK_ATOMS || kind == DK_ORPHANS;
}

/* The node counts in the budget at depth: whether it can still be drawn
 * (the nodes met above it and before it at its depth are fewer than the
 * budget: a lower bound of those the choice will take before it). */
static int may_draw(struct dot_model *m, int depth)
{
	if ((unsigned)depth >= m->seen_depths) {
		unsigned n = (unsigned)depth + 16;
		unsigned *seen = realloc(m->seen, n * sizeof(*seen));
		if (!seen) {
			m->nomem = 1;
			return 0;
		}
		memset(seen + m->seen_depths, 0,
		       (n - m->seen_depths) * sizeof(*seen));
		m->seen = seen;
		m->seen_depths = n;
	}
	uint64_t before = 0;
	for (int d = 0; d <= depth; d++)
		before += m->seen[d];
	if (before >= m->budget)
		return 0;
	m->seen[depth]++;
	return 1;
}

/* Count a node not kept in anchor (-1: no node) */
static int drop(struct dot_model *m, enum dot_kind kind, int anchor)
{
	if (anchor >= 0)
		m->node[anchor].hidden[kind]++;
	else
		m->hidden[kind]++;
	return DOT_HIDDEN(anchor);
}

int dot_add(struct dot_model *m, enum dot_kind kind, uint64_t id, int parent,
	    int level)
{
	if (m->nomem)
		return -1;
	m->walked++;
	if (DOT_IS_HIDDEN(parent)) {
		if (!always_kept(kind))
			return drop(m, kind, DOT_ANCHOR(parent));
		parent = DOT_ANCHOR(parent);
	}
	int depth = parent >= 0 ? m->node[parent].depth + 1 : 0;
	if (m->budget && !always_kept(kind)) {
		if (m->max_level >= 0 && level > m->max_level)
			return drop(m, kind, parent);
		if (!may_draw(m, depth))
			return m->nomem ? -1 : drop(m, kind, parent);
	}
	if (m->count == m->cap) {
		unsigned cap = m->cap ? m->cap * 2 : 256;
		struct dot_node *node = realloc(m->node, cap * sizeof(*node));
		if (!node)
			goto nomem;
		m->node = node;
		m->cap = cap;
	}
	if ((m->count + 1) * 2 > m->hash_size && hash_grow(m))
		goto nomem;
	int index = (int)m->count++;
	m->node[index] = (struct dot_node){ .kind = kind, .id = id,
					    .parent = parent, .level = level,
					    .depth = depth };
	hash_put(m, index);
	if (kind == DK_ERROR)
		m->errors++;
	return index;
nomem:
	m->nomem = 1;
	return -1;
}

/* Length of the UTF-8 sequence at s (n bytes left), 0 if invalid. */
static unsigned utf8_len(const unsigned char *s, size_t n)
{
	unsigned len;
	uint32_t c;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		c = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (unsigned i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) ||
	    (len == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

void dot_escape(char *out, size_t outlen, const char *in, size_t inlen)
{
	static const char ellipsis[] = "\xe2\x80\xa6";	/* U+2026 */
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, i = 0;
	unsigned chars = 0;

	if (!outlen)
		return;
	while (i < inlen) {
		/* room for the longest piece and an ellipsis */
		if (o + 8 >= outlen || chars >= DOT_LINE_CHARS) {
			if (o + 4 <= outlen) {
				memcpy(out + o, ellipsis, 3);
				o += 3;
			}
			break;
		}
		unsigned len = utf8_len(s + i, inlen - i);
		if (!len || s[i] < 0x20 || s[i] == 0x7f) {
			out[o++] = '?';	/* control or invalid byte */
			i++;
		} else if (s[i] == '\\') {
			out[o++] = '\\';
			out[o++] = '\\';
			i++;
		} else {
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
		}
		chars++;
	}
	out[o] = 0;
}

static void text_append(struct dot_model *m, struct dot_text *t,
			const char *s, size_t len)
{
	if (t->len + len + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 128;
		while (cap < t->len + len + 1)
			cap *= 2;
		char *buf = realloc(t->buf, cap);
		if (!buf) {
			m->nomem = 1;
			return;
		}
		t->buf = buf;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, len);
	t->len += len;
	t->buf[t->len] = 0;
}

static void vline(struct dot_model *m, int node, int force, const char *fmt,
		  va_list ap)
{
	char raw[1024], esc[DOT_LINE_CHARS * 4 + 16];
	if (node < 0 || m->nomem)
		return;
	struct dot_text *t = &m->node[node].text;
	/* keep one line and some bytes for "... N more" */
	if (!force && (t->more || t->lines + 1 >= DOT_LABEL_LINES ||
		       t->len + sizeof(esc) + 80 > DOT_LABEL_BYTES)) {
		t->more++;
		return;
	}
	int n = vsnprintf(raw, sizeof(raw), fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(raw))
		n = sizeof(raw) - 1;
	dot_escape(esc, sizeof(esc), raw, (size_t)n);
	text_append(m, t, esc, strlen(esc));
	text_append(m, t, "\\l", 2);
	t->lines++;
}

void dot_line(struct dot_model *m, int node, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(m, node, 0, fmt, ap);
	va_end(ap);
}

void dot_head(struct dot_model *m, int node, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(m, node, 1, fmt, ap);
	va_end(ap);
}

void dot_more_what(struct dot_model *m, int node, const char *what)
{
	if (node >= 0)
		m->node[node].text.more_what = what;
}

const char *dot_label(struct dot_model *m, int node)
{
	static char *buf;
	static size_t cap;
	const struct dot_text *t = &m->node[node].text;
	char num[32];
	size_t need = t->len + 128;

	if (need > cap) {
		char *b = realloc(buf, need);
		if (!b)
			return t->buf ? t->buf : "";
		buf = b;
		cap = need;
	}
	memcpy(buf, t->buf ? t->buf : "", t->len);
	buf[t->len] = 0;
	if (t->more)
		snprintf(buf + t->len, cap - t->len,
			 "\xe2\x80\xa6 %s more %s\\l",
			 dot_thousands(num, sizeof(num), t->more),
			 t->more_what ? t->more_what : "lines");
	return buf;
}
