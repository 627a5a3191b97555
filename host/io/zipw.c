/* ZIP writer: see zipw.h.  Record layouts from APPNOTE 6.3, sections 4.3.7
 * (local file header), 4.3.12 (central directory header) and 4.3.16 (end
 * of central directory); all numbers little-endian. */
#include "zipw.h"
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* 1980-01-01 00:00 in MS-DOS date and time: the earliest a ZIP can say. */
#define DOS_TIME 0
#define DOS_DATE ((0 << 9) | (1 << 5) | 1)

void zip_init(zip_writer *z)
{
    memset(z, 0, sizeof *z);
}

void zip_free(zip_writer *z)
{
    free(z->buf);
    free(z->dir);
    memset(z, 0, sizeof *z);
}

static void grow_put(unsigned char **b, size_t *len, size_t *cap, int *oom, const void *p, size_t n)
{
    if (*oom) return;
    if (*len + n > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n) c *= 2;
        unsigned char *nb = realloc(*b, c);
        if (!nb) {
            *oom = 1;
            return;
        }
        *b = nb;
        *cap = c;
    }
    memcpy(*b + *len, p, n);
    *len += n;
}

/* little-endian fields into a scratch header */
static unsigned char *le16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    return p + 2;
}

static unsigned char *le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
    return p + 4;
}

int zip_add(zip_writer *z, const char *name, const void *data, size_t len)
{
    size_t nl = strlen(name);
    /* no ZIP64: every size and offset must fit in 32 bits */
    if (z->oom || nl == 0 || nl > 65535 || len > 0x7fffffffu || z->len > 0x7fffffffu - len - nl - 64 ||
        z->entries >= 65535) {
        z->oom = 1;
        return -1;
    }
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), data, (uInt)len);
    uint32_t offset = (uint32_t)z->len;
    unsigned char h[46], *p = h;
    p = le32(p, 0x04034b50); /* local file header */
    p = le16(p, 20);         /* version needed: 2.0 */
    p = le16(p, 0);          /* flags */
    p = le16(p, 0);          /* method: stored */
    p = le16(p, DOS_TIME);
    p = le16(p, DOS_DATE);
    p = le32(p, crc);
    p = le32(p, (uint32_t)len); /* compressed size */
    p = le32(p, (uint32_t)len); /* uncompressed size */
    p = le16(p, (unsigned)nl);
    p = le16(p, 0); /* extra field length */
    grow_put(&z->buf, &z->len, &z->cap, &z->oom, h, (size_t)(p - h));
    grow_put(&z->buf, &z->len, &z->cap, &z->oom, name, nl);
    grow_put(&z->buf, &z->len, &z->cap, &z->oom, data, len);
    p = h;
    p = le32(p, 0x02014b50);     /* central directory header */
    p = le16(p, (3 << 8) | 20);  /* made by: Unix, 2.0 (so the mode below is read) */
    p = le16(p, 20);
    p = le16(p, 0);
    p = le16(p, 0);
    p = le16(p, DOS_TIME);
    p = le16(p, DOS_DATE);
    p = le32(p, crc);
    p = le32(p, (uint32_t)len);
    p = le32(p, (uint32_t)len);
    p = le16(p, (unsigned)nl);
    p = le16(p, 0);                     /* extra */
    p = le16(p, 0);                     /* comment */
    p = le16(p, 0);                     /* disk number */
    p = le16(p, 0);                     /* internal attributes */
    p = le32(p, (uint32_t)0100644 << 16); /* external: a regular file, rw-r--r-- */
    p = le32(p, offset);
    grow_put(&z->dir, &z->dir_len, &z->dir_cap, &z->oom, h, (size_t)(p - h));
    grow_put(&z->dir, &z->dir_len, &z->dir_cap, &z->oom, name, nl);
    z->entries++;
    return z->oom ? -1 : 0;
}

int zip_finish(zip_writer *z, const unsigned char **out, size_t *len)
{
    if (z->oom || z->len > 0x7fffffffu - z->dir_len) return -1;
    uint32_t dir_offset = (uint32_t)z->len;
    grow_put(&z->buf, &z->len, &z->cap, &z->oom, z->dir, z->dir_len);
    unsigned char h[22], *p = h;
    p = le32(p, 0x06054b50); /* end of central directory */
    p = le16(p, 0);          /* this disk */
    p = le16(p, 0);          /* disk with the directory */
    p = le16(p, (unsigned)z->entries);
    p = le16(p, (unsigned)z->entries);
    p = le32(p, (uint32_t)z->dir_len);
    p = le32(p, dir_offset);
    p = le16(p, 0); /* comment length */
    grow_put(&z->buf, &z->len, &z->cap, &z->oom, h, (size_t)(p - h));
    if (z->oom) return -1;
    *out = z->buf;
    *len = z->len;
    return 0;
}
