/* The tile -> Minecraft block mapping: a plain text file the user edits,
 * shipped as minecraft/blocks.txt and found beside the binary like the
 * prompt templates (datadir.h; $PCGRLLM_MINECRAFT overrides).  The file
 * documents its own syntax; docs/minecraft.md explains each field. */
#ifndef PCG_MCBLOCKS_H
#define PCG_MCBLOCKS_H
#include "level.h"
#include <stddef.h>

#define MC_ID_MAX 160    /* a block state or entity id, as text */
#define MC_BODY_MAX 8    /* blocks stacked in one body */
#define MC_WALL_MAX 16

typedef struct {
    char floor[MC_ID_MAX];
    char body[MC_BODY_MAX][MC_ID_MAX]; /* bottom first; n_body 0 = nothing */
    int n_body;
    int fill;                /* the body covers the whole patch, up to wall_height */
    int solid;               /* the body stands in the player's way */
    char mob[MC_ID_MAX];     /* an entity id placed at the centre, "" none */
    char spawner[MC_ID_MAX]; /* the body is a spawner of this entity, "" none */
} mc_tile;

typedef struct {
    mc_tile tiles[N_TILES];  /* TILE_BORDER: the ring around the map */
    int wall_height;
    char ceiling[MC_ID_MAX]; /* "" for none */
    char source[512];        /* the file it came from, for messages */
} mc_blocks;

/* Parse a mapping; name is used in messages ("FILE:LINE: ...").  Every
 * tile must be given.  0, or -1 with one line in err. */
int mc_blocks_parse(const char *name, const char *text, mc_blocks *b, char *err, int errlen);
/* Read the mapping at path, or the shipped minecraft/blocks.txt when path
 * is NULL.  0, or -1 with one line in err. */
int mc_blocks_load(const char *path, mc_blocks *b, char *err, int errlen);

/* A block state "ns:name[k=v,...]" split for NBT: the name (with the
 * minecraft: namespace added when none is given) and up to 16 properties.
 * The text was checked by the parser; returns the property count. */
#define MC_PROPS_MAX 16
typedef struct {
    char name[MC_ID_MAX];
    char key[MC_PROPS_MAX][48], value[MC_PROPS_MAX][48];
} mc_state;
int mc_state_split(const char *text, mc_state *s);

#endif
