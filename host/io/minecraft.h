/* Levels as Minecraft: Java Edition structures and datapacks
 * (docs/minecraft.md).
 *
 * Each tile becomes a K x K patch (K = the scale), Word2Minecraft's idea of
 * scaling a 2D layout up to a walkable world, built from the tile -> block
 * mapping (mcblocks.h).  The structure is one layer of floor, wall_height
 * layers above it (walls, bodies, mobs; air elsewhere, so that placing it
 * clears the ground it lands on), and an optional ceiling; a one-block ring
 * of BORDER surrounds the map.  North is row 0: map rows run along +z,
 * columns along +x.
 *
 * Target: Minecraft Java Edition 1.21.1 (structure DataVersion 3955, data
 * pack format 48, also declared compatible up to format 81, 1.21.8). */
#ifndef PCG_MINECRAFT_H
#define PCG_MINECRAFT_H
#include "eval.h"
#include "mcblocks.h"
#include <stddef.h>

#define MC_DATA_VERSION 3955 /* Java Edition 1.21.1 */
#define MC_PACK_FORMAT 48    /* data packs of 1.21 and 1.21.1 */
#define MC_PACK_FORMAT_MAX 81 /* 1.21.8: the last that reads pack_format alone */
#define MC_SCALE_MAX 8
#define MC_DEFAULT_SCALE 2

/* The structure's size in blocks (x, y, z) for an h x w level. */
void mc_size(const mc_blocks *b, int h, int w, int scale, int size[3]);

/* Does scaling keep every route the evaluator walks on l (eval_routes, for
 * each of the n scenarios) walkable?  Each leg is searched again on the
 * scaled map with the same BFS (host/core/level.h), through the patches of its
 * own tiles only, the solid bodies of the mapping blocking; a leg's end is
 * reached when the player can stand next to its body.  0 when every leg
 * is kept, 1 with one line in why naming the first blocked leg and the
 * tile in the way, -1 with why when the scaled map is too large. */
int mc_check_routes(const level_t *l, const eval_scenario_t *const *scenarios, int n, const mc_blocks *b, int scale,
                    char *why, int whylen);

/* The structure file of one level: gzip-compressed NBT, malloc'd into
 * *out.  0, or -1 with one line in err. */
int mc_structure(const level_t *l, const mc_blocks *b, int scale, unsigned char **out, size_t *len, char *err,
                 int errlen);

/* A data pack of n levels as a ZIP file in memory (malloc'd): pack.mcmeta,
 * data/NS/structure/NAME.nbt and data/NS/function/NAME.mcfunction, which
 * builds the level next to the player and moves them onto its PLAYER tile.
 * ns and names are resource names ([a-z0-9_.-]; mc_resource_name makes
 * one).  0, or -1 with one line in err. */
typedef struct {
    const char *name;
    const level_t *level;
} mc_level;
int mc_datapack(const char *ns, const mc_level *levels, int n, const mc_blocks *b, int scale, unsigned char **zip,
                size_t *len, char *err, int errlen);

/* A resource name from any text: lower case, other characters '_', at
 * most len - 1 bytes; "level" when nothing is left. */
void mc_resource_name(const char *text, char *out, size_t len);

#endif
