/*
 * JSON output of tux3debug (--json): the btrfs-progs envelope
 *   {"__header": {"version": "1"}, "COMMAND": [ ... ]}
 * with raw numbers, two-space indentation, keys in a fixed order.
 * Strings are escaped as JSON requires; bytes that are not valid UTF-8
 * are written as \u00XX (the byte's value), so that the output is
 * always valid JSON.
 */
#include <inttypes.h>
#include <string.h>
#include "debugfs.h"

static void indent(struct json *j)
{
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* A comma before every element but the first of its container, then
 * the element on a line of its own. */
static void element(struct json *j)
{
	if (j->depth > 0 && j->depth <= JSON_MAX_DEPTH &&
	    j->count[j->depth - 1]++)
		fputc(',', j->f);
	indent(j);
}

/* Length of the valid UTF-8 sequence at p (max n bytes), 0 if none. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len;
	uint32_t min, c;
	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		len = 2, min = 0x80, c = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		len = 3, min = 0x800, c = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		len = 4, min = 0x10000, c = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

static void quoted(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		size_t len;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			i++;
		} else if (c == '\n') {
			fputs("\\n", f);
			i++;
		} else if (c == '\t') {
			fputs("\\t", f);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
		} else if ((len = utf8_len(p + i, n - i))) {
			fwrite(p + i, 1, len, f);
			i += len;
		} else {
			fprintf(f, "\\u%04x", c);	/* not UTF-8: the byte */
			i++;
		}
	}
	fputc('"', f);
}

void json_begin(struct json *j, FILE *f, const char *command)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	fputs("{\n  \"__header\": {\"version\": \"1\"},\n  ", f);
	quoted(f, command, strlen(command));
	fputs(": [", f);
	j->depth = 2;
}

void json_end(struct json *j)
{
	j->depth = 1;
	indent(j);
	fputs("]\n}\n", j->f);
}

void json_open(struct json *j, const char *key, char bracket)
{
	if (key)
		json_key(j, key);
	else
		element(j);
	fputc(bracket, j->f);
	if (j->depth < JSON_MAX_DEPTH)
		j->count[j->depth] = 0;
	j->depth++;
}

void json_close(struct json *j, char bracket)
{
	int empty = j->depth <= JSON_MAX_DEPTH && !j->count[j->depth - 1];
	j->depth--;
	if (!empty)
		indent(j);
	fputc(bracket, j->f);
}

void json_key(struct json *j, const char *key)
{
	element(j);
	quoted(j->f, key, strlen(key));
	fputs(": ", j->f);
}

void json_str(struct json *j, const char *key, const char *s)
{
	json_strn(j, key, s, strlen(s));
}

void json_strn(struct json *j, const char *key, const char *s, size_t n)
{
	if (key)
		json_key(j, key);
	else
		element(j);
	quoted(j->f, s, n);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	if (key)
		json_key(j, key);
	else
		element(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	if (key)
		json_key(j, key);
	else
		element(j);
	fprintf(j->f, "%" PRId64, v);
}

void json_bool(struct json *j, const char *key, int v)
{
	if (key)
		json_key(j, key);
	else
		element(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	if (key)
		json_key(j, key);
	else
		element(j);
	fputs("null", j->f);
}

void json_hex(struct json *j, const char *key, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	if (key)
		json_key(j, key);
	else
		element(j);
	fputc('"', j->f);
	for (size_t i = 0; i < n; i++)
		fprintf(j->f, "%02x", p[i]);
	fputc('"', j->f);
}
