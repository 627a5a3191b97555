/* NBT writer: see nbt.h for the format. */
#include "nbt.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

void nbt_init(nbt_writer *w)
{
    memset(w, 0, sizeof *w);
}

void nbt_free(nbt_writer *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}

static void fault(nbt_writer *w, const char *fmt, ...)
{
    if (w->fault[0]) return; /* the first fault is the one that explains */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->fault, sizeof w->fault, fmt, ap);
    va_end(ap);
}

/* Record a fault and leave the calling function. */
#define FAULT_RETURN(...)   \
    do {                    \
        fault(__VA_ARGS__); \
        return;             \
    } while (0)

static void put(nbt_writer *w, const void *p, size_t n)
{
    if (w->fault[0]) return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n) cap *= 2;
        unsigned char *b = realloc(w->buf, cap);
        if (!b) FAULT_RETURN(w, "out of memory");
        w->buf = b;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

static void put_u8(nbt_writer *w, unsigned v)
{
    unsigned char b = (unsigned char)v;
    put(w, &b, 1);
}

static void put_be(nbt_writer *w, uint64_t v, int bytes)
{
    unsigned char b[8];
    for (int i = 0; i < bytes; i++) b[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    put(w, b, (size_t)bytes);
}

/* Java's modified UTF-8 equals ASCII for bytes 1..127; the export only
 * writes identifiers, so anything else is a fault rather than an encoder. */
static void put_string(nbt_writer *w, const char *s)
{
    size_t n = strlen(s);
    if (n > 65535) FAULT_RETURN(w, "string of %zu bytes (at most 65535)", n);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 128) FAULT_RETURN(w, "non-ASCII byte in string \"%.40s\"", s);
    put_be(w, n, 2);
    put(w, s, n);
}

/* The header of a tag of type t: its type and name inside a compound; in
 * a list, a check that t is the list's type and that room is left. */
static void header(nbt_writer *w, int t, const char *name)
{
    if (w->depth == 0) {
        if (t != NBT_COMPOUND || w->roots) FAULT_RETURN(w, "the document must be one compound");
        w->roots++;
    } else if (w->stack[w->depth - 1].list) {
        if (name) FAULT_RETURN(w, "list element named \"%.40s\"", name);
        if (t != w->stack[w->depth - 1].type) FAULT_RETURN(w, "type %d in a list of type %d", t, w->stack[w->depth - 1].type);
        if (w->stack[w->depth - 1].left-- <= 0) FAULT_RETURN(w, "more elements than the list's count");
        return;
    }
    if (!name) FAULT_RETURN(w, "unnamed tag in a compound");
    put_u8(w, (unsigned)t);
    put_string(w, name);
}

static void push(nbt_writer *w, int list, int type, int32_t count)
{
    if (w->depth >= NBT_MAX_DEPTH) FAULT_RETURN(w, "nesting deeper than %d", NBT_MAX_DEPTH);
    w->stack[w->depth].list = list;
    w->stack[w->depth].type = type;
    w->stack[w->depth].left = count;
    w->depth++;
}

void nbt_begin_compound(nbt_writer *w, const char *name)
{
    header(w, NBT_COMPOUND, name);
    push(w, 0, NBT_COMPOUND, 0);
}

void nbt_end_compound(nbt_writer *w)
{
    if (w->depth == 0 || w->stack[w->depth - 1].list) FAULT_RETURN(w, "end of a compound that is not open");
    put_u8(w, NBT_END);
    w->depth--;
}

void nbt_begin_list(nbt_writer *w, const char *name, int elem, int32_t count)
{
    if (count < 0 || elem <= NBT_END || elem > NBT_COMPOUND) FAULT_RETURN(w, "bad list (type %d, count %d)", elem, count);
    header(w, NBT_LIST, name);
    put_u8(w, (unsigned)elem);
    put_be(w, (uint32_t)count, 4);
    push(w, 1, elem, count);
}

void nbt_end_list(nbt_writer *w)
{
    if (w->depth == 0 || !w->stack[w->depth - 1].list) FAULT_RETURN(w, "end of a list that is not open");
    if (w->stack[w->depth - 1].left != 0) FAULT_RETURN(w, "list ended with %d elements missing", w->stack[w->depth - 1].left);
    w->depth--;
}

void nbt_byte(nbt_writer *w, const char *name, int8_t v)
{
    header(w, NBT_BYTE, name);
    put_u8(w, (uint8_t)v);
}

void nbt_int(nbt_writer *w, const char *name, int32_t v)
{
    header(w, NBT_INT, name);
    put_be(w, (uint32_t)v, 4);
}

void nbt_double(nbt_writer *w, const char *name, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits); /* IEEE 754 binary64, sent big-endian */
    header(w, NBT_DOUBLE, name);
    put_be(w, bits, 8);
}

void nbt_string(nbt_writer *w, const char *name, const char *s)
{
    header(w, NBT_STRING, name);
    put_string(w, s);
}

int nbt_gzip(const nbt_writer *w, unsigned char **out, size_t *outlen, char *err, int errlen)
{
    *out = NULL;
    *outlen = 0;
    if (w->fault[0]) return snprintf(err, (size_t)errlen, "NBT writer: %s", w->fault), -1;
    if (w->depth != 0 || w->roots != 1)
        return snprintf(err, (size_t)errlen, "NBT writer: the document is not one closed compound"), -1;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    /* windowBits 15 + 16: a gzip wrapper with a zeroed header (no mtime) */
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return snprintf(err, (size_t)errlen, "NBT writer: zlib cannot start"), -1;
    uLong bound = deflateBound(&zs, (uLong)w->len) + 32;
    unsigned char *buf = malloc(bound);
    if (!buf) {
        deflateEnd(&zs);
        return snprintf(err, (size_t)errlen, "NBT writer: out of memory"), -1;
    }
    zs.next_in = w->buf;
    zs.avail_in = (uInt)w->len;
    zs.next_out = buf;
    zs.avail_out = (uInt)bound;
    int rc = deflate(&zs, Z_FINISH);
    size_t n = zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        free(buf);
        return snprintf(err, (size_t)errlen, "NBT writer: zlib failed to compress (%d)", rc), -1;
    }
    *out = buf;
    *outlen = n;
    return 0;
}
