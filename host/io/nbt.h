/* A small writer of NBT (Named Binary Tag), the binary format of Minecraft:
 * Java Edition's structure files.  No Debian package offers a C library for
 * it, and the export needs only to write a few tag types, so this is a
 * writer and nothing more.
 *
 * The format (Java Edition, big-endian throughout):
 *   tag      = type:u8  name:string  payload      (inside a compound)
 *            = payload                            (an element of a list)
 *   string   = length:u16  bytes (modified UTF-8; here ASCII only)
 *   BYTE i8, SHORT i16, INT i32, LONG i64, FLOAT f32, DOUBLE f64 (IEEE 754)
 *   LIST     = element type:u8  count:i32  count payloads
 *   COMPOUND = tags ... END (type 0, no name, no payload)
 * A file is one named COMPOUND (the root, usually named ""), gzip-compressed.
 *
 * Usage: nbt_begin_compound(w, "") ... nbt_end_compound(w), then
 * nbt_gzip().  Inside a compound every call names its tag; inside a list
 * the name is NULL and the type must be the list's.  A misuse (wrong
 * nesting, a count that does not match, a non-ASCII string) marks the
 * writer bad and nbt_gzip refuses it, naming the first fault. */
#ifndef PCG_NBT_H
#define PCG_NBT_H
#include <stddef.h>
#include <stdint.h>

enum {
    NBT_END = 0,
    NBT_BYTE = 1,
    NBT_SHORT = 2,
    NBT_INT = 3,
    NBT_LONG = 4,
    NBT_FLOAT = 5,
    NBT_DOUBLE = 6,
    NBT_BYTE_ARRAY = 7,
    NBT_STRING = 8,
    NBT_LIST = 9,
    NBT_COMPOUND = 10,
};

#define NBT_MAX_DEPTH 16

typedef struct {
    unsigned char *buf;
    size_t len, cap;
    int depth;
    struct {
        int list;      /* 1: a list, 0: a compound */
        int type;      /* a list's element type */
        int32_t left;  /* a list's elements still to write */
    } stack[NBT_MAX_DEPTH];
    int roots;         /* root compounds written */
    char fault[128];   /* the first misuse, "" while sound */
} nbt_writer;

void nbt_init(nbt_writer *w);
void nbt_free(nbt_writer *w);

void nbt_begin_compound(nbt_writer *w, const char *name);
void nbt_end_compound(nbt_writer *w);
/* A list of count elements of type elem (an empty list may name any
 * element type); close it with nbt_end_list after the count elements. */
void nbt_begin_list(nbt_writer *w, const char *name, int elem, int32_t count);
void nbt_end_list(nbt_writer *w);
void nbt_byte(nbt_writer *w, const char *name, int8_t v);
void nbt_int(nbt_writer *w, const char *name, int32_t v);
void nbt_double(nbt_writer *w, const char *name, double v);
void nbt_string(nbt_writer *w, const char *name, const char *s);

/* The finished document gzip-compressed into a malloc'd buffer (*out,
 * *outlen).  The gzip header carries no time or name, so the same tags give
 * the same bytes.  0, or -1 with one line in err. */
int nbt_gzip(const nbt_writer *w, unsigned char **out, size_t *outlen, char *err, int errlen);

#endif
