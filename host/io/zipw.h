/* A small in-memory writer of ZIP archives (PKWARE APPNOTE 6.3), enough for
 * a Minecraft datapack: regular files, stored without compression (the
 * structure files inside are already gzip-compressed and the rest is a few
 * lines of text), CRC-32 from zlib.  Every entry carries the same fixed
 * time (1980-01-01 00:00), so the same files give the same archive. */
#ifndef PCG_ZIPW_H
#define PCG_ZIPW_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    unsigned char *buf;     /* local headers and data, then the directory */
    size_t len, cap;
    unsigned char *dir;     /* the central directory, built alongside */
    size_t dir_len, dir_cap;
    int entries;
    int oom;
} zip_writer;

void zip_init(zip_writer *z);
void zip_free(zip_writer *z);
/* Add a file; name uses '/' between folders (folders need no entry of
 * their own).  0, or -1 (out of memory, or more than 65535 entries). */
int zip_add(zip_writer *z, const char *name, const void *data, size_t len);
/* Close the archive: *out and *len point into z (valid until zip_free).
 * 0, or -1 when an earlier add failed. */
int zip_finish(zip_writer *z, const unsigned char **out, size_t *len);

#endif
