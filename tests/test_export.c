/* The Minecraft export (docs/minecraft.md): the NBT and ZIP writers, the
 * block mapping, the scaling check against the evaluator's routes, and
 * the command, whose output is read back by tests/mc_check.py with
 * readers that share no code with the writers. */
#include "harness.h"
#include "mcblocks.h"
#include "minecraft.h"
#include "nbt.h"
#include "util.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* ---- NBT writer ---- */

static size_t gunzip(const unsigned char *in, size_t n, unsigned char *out, size_t cap)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
    zs.next_in = (unsigned char *)in;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t got = zs.total_out;
    inflateEnd(&zs);
    return got;
}

static void export_nbt_bytes(void **state)
{
    (void)state;
    nbt_writer w;
    nbt_init(&w);
    nbt_begin_compound(&w, "");
    nbt_int(&w, "a", 258);
    nbt_begin_list(&w, "l", NBT_BYTE, 2);
    nbt_byte(&w, NULL, -1);
    nbt_byte(&w, NULL, 5);
    nbt_end_list(&w);
    nbt_double(&w, "d", 1.0);
    nbt_string(&w, "s", "hi");
    nbt_end_compound(&w);
    unsigned char *gz, raw[256];
    size_t n;
    char err[256];
    assert_int_equal(nbt_gzip(&w, &gz, &n, err, sizeof err), 0);
    /* big-endian: compound "" { int "a" 258, list "l" of 2 bytes, double "d" 1.0, string "s" "hi" } */
    static const unsigned char want[] = {10, 0, 0,                                        /* root */
                                         3,  0, 1, 'a', 0, 0, 1, 2,                      /* int */
                                         9,  0, 1, 'l', 1, 0, 0, 0, 2, 0xff, 5,          /* list */
                                         6,  0, 1, 'd', 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,    /* double */
                                         8,  0, 1, 's', 0, 2, 'h', 'i',                  /* string */
                                         0};
    assert_int_equal(gunzip(gz, n, raw, sizeof raw), sizeof want);
    assert_memory_equal(raw, want, sizeof want);
    /* the gzip header has no time: the same tags give the same bytes */
    unsigned char *gz2;
    size_t n2;
    assert_int_equal(nbt_gzip(&w, &gz2, &n2, err, sizeof err), 0);
    assert_true(n == n2 && !memcmp(gz, gz2, n));
    assert_true(gz[4] == 0 && gz[5] == 0 && gz[6] == 0 && gz[7] == 0);
    free(gz);
    free(gz2);
    nbt_free(&w);
}

static void export_nbt_misuse(void **state)
{
    (void)state;
    char err[256];
    unsigned char *gz;
    size_t n;
    nbt_writer w;
    /* a named element in a list */
    nbt_init(&w);
    nbt_begin_compound(&w, "");
    nbt_begin_list(&w, "l", NBT_INT, 1);
    nbt_int(&w, "x", 1);
    assert_int_equal(nbt_gzip(&w, &gz, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "list element named"));
    nbt_free(&w);
    /* fewer elements than the count */
    nbt_init(&w);
    nbt_begin_compound(&w, "");
    nbt_begin_list(&w, "l", NBT_INT, 2);
    nbt_int(&w, NULL, 1);
    nbt_end_list(&w);
    nbt_end_compound(&w);
    assert_int_equal(nbt_gzip(&w, &gz, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "1 elements missing"));
    nbt_free(&w);
    /* a string Java would read differently, and an unclosed document */
    nbt_init(&w);
    nbt_begin_compound(&w, "");
    nbt_string(&w, "s", "caf\xc3\xa9");
    assert_int_equal(nbt_gzip(&w, &gz, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "non-ASCII"));
    nbt_free(&w);
    nbt_init(&w);
    nbt_begin_compound(&w, "");
    assert_int_equal(nbt_gzip(&w, &gz, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "not one closed compound"));
    nbt_free(&w);
}

/* ---- the block mapping ---- */

static const char *const base_mapping =
    "wall_height 3\nceiling none\n"
    "BORDER floor=stone body=bedrock fill=yes solid=yes\n"
    "EMPTY floor=stone\n"
    "WALL floor=stone body=cobblestone fill=yes solid=yes\n"
    "PLAYER floor=emerald_block\n"
    "BAT floor=stone mob=bat\n"
    "SCORPION floor=stone mob=cave_spider\n"
    "KEY floor=gold_block\n"
    "DOOR floor=stone body=oak_door[half=lower]/oak_door[half=upper]\n"
    "TREASURE floor=stone body=chest[facing=south] solid=yes\n";

/* base_mapping plus a SPIDER line. */
static void mapping_with(mc_blocks *b, const char *spider)
{
    char text[2048], err[512];
    snprintf(text, sizeof text, "%sSPIDER %s\n", base_mapping, spider);
    if (mc_blocks_parse("test.txt", text, b, err, sizeof err)) fail_msg("mapping: %s", err);
}

static void export_blocks_parse(void **state)
{
    (void)state;
    mc_blocks b;
    mapping_with(&b, "floor=stone spawner=minecraft:spider");
    assert_int_equal(b.wall_height, 3);
    assert_string_equal(b.tiles[TILE_WALL].body[0], "minecraft:cobblestone");
    assert_true(b.tiles[TILE_WALL].fill && b.tiles[TILE_WALL].solid);
    assert_int_equal(b.tiles[TILE_DOOR].n_body, 2);
    assert_false(b.tiles[TILE_DOOR].solid);
    assert_string_equal(b.tiles[TILE_BAT].mob, "minecraft:bat");
    /* a spawner is the body, and solid */
    assert_string_equal(b.tiles[TILE_SPIDER].body[0], "minecraft:spawner");
    assert_true(b.tiles[TILE_SPIDER].solid);
    assert_string_equal(b.tiles[TILE_SPIDER].spawner, "minecraft:spider");
    mc_state st;
    assert_int_equal(mc_state_split("minecraft:oak_door[half=lower,facing=south]", &st), 2);
    assert_string_equal(st.name, "minecraft:oak_door");
    assert_true(!strcmp(st.key[1], "facing") && !strcmp(st.value[1], "south"));

    /* each mistake is one line naming the file and line */
    static const struct {
        const char *spider, *want;
    } bad[] = {
        {"floor=stone colour=red", "test.txt:12: unknown key 'colour'"},
        {"floor=Stone", "floor=Stone: expected a name of lower-case letters"},
        {"floor=stone body=a[b]", "properties written [key=value"},
        {"floor=stone mob=spider[x=1]", "an entity id, not a block"},
        {"floor=stone body=a/b/c/d", "body is 4 blocks tall, above wall_height 3"},
        {"floor=stone fill=yes", "fill=yes needs body=BLOCK"},
        {"floor=stone spawner=spider solid=no", "a spawner is a solid block"},
        {"floor=stone mob=bat spawner=spider", "mob= or spawner=, not both"},
        {"body=stone", "SPIDER needs floor=BLOCK"},
        {"floor=stone solid=maybe", "expected yes or no"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[2048], err[512];
        snprintf(text, sizeof text, "%sSPIDER %s\n", base_mapping, bad[i].spider);
        assert_int_equal(mc_blocks_parse("test.txt", text, &b, err, sizeof err), -1);
        if (!strstr(err, bad[i].want)) fail_msg("'%s': got \"%s\", expected \"%s\"", bad[i].spider, err, bad[i].want);
    }
    char err[512];
    assert_int_equal(mc_blocks_parse("m.txt", base_mapping, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "m.txt: no line for SPIDER"));
    char twice[2048];
    snprintf(twice, sizeof twice, "%sSPIDER floor=stone\nBAT floor=stone\n", base_mapping);
    assert_int_equal(mc_blocks_parse("m.txt", twice, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "m.txt:13: BAT is given twice (first on line 7)"));
    assert_int_equal(mc_blocks_parse("m.txt", "wall_height 1\n", &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "wall_height takes one number, 2..16"));
    assert_int_equal(mc_blocks_parse("m.txt", "GOBLIN floor=stone\n", &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown word 'GOBLIN'"));
    /* the shipped mapping reads */
    char path[PATH_MAX];
    assert_non_null(getcwd(path, sizeof path - 32));
    strcat(path, "/minecraft/blocks.txt");
    assert_int_equal(mc_blocks_load(path, &b, err, sizeof err), 0);
    assert_int_equal(mc_blocks_load(NULL, &b, err, sizeof err), 0);
}

/* ---- scaling keeps the evaluator's routes ---- */

typedef pcg_test_grid grid_t;
#define GRID PCG_GRID

static int routes_ok(const grid_t *g, int scenario, const mc_blocks *b, int scale, char *why)
{
    const eval_scenario_t *s = eval_scenario(scenario);
    return mc_check_routes(&g->l, &s, 1, b, scale, why, 1024);
}

static void export_scaling_keeps_routes(void **state)
{
    (void)state;
    mc_blocks b;
    grid_t g;
    char why[1024];
    /* a one-tile corridor through a spider to the key and on to the door */
    GRID(g, "#######",
            "@.x.k.D",
            "#######");
    /* as a mob the spider is no obstacle, whatever the scale */
    mapping_with(&b, "floor=stone mob=spider");
    for (int k = 1; k <= 3; k++) assert_int_equal(routes_ok(&g, 1, &b, k, why), 0);
    /* as a spawner it fills the corridor at scale 1; at 2 the corridor is
     * two blocks wide and the spawner takes one */
    mapping_with(&b, "floor=stone spawner=spider");
    assert_int_equal(routes_ok(&g, 1, &b, 1, why), 1);
    assert_non_null(strstr(why, "scenario 1: the route player -> door from (1,0) to (1,6) would be blocked at scale 1"));
    assert_non_null(strstr(why, "SPIDER at (1,2) has a solid body (minecraft:spawner) in its centre"));
    assert_non_null(strstr(why, "use --scale 2"));
    assert_int_equal(routes_ok(&g, 1, &b, 2, why), 0);
    assert_int_equal(routes_ok(&g, 1, &b, 3, why), 0);
    /* a solid body filling its patch blocks at every scale */
    mapping_with(&b, "floor=stone body=stone fill=yes solid=yes");
    for (int k = 1; k <= 4; k++) {
        assert_int_equal(routes_ok(&g, 2, &b, k, why), 1);
        assert_non_null(strstr(why, "filling its patch"));
    }
    /* a solid target (the chest) is reached by standing next to it */
    mapping_with(&b, "floor=stone mob=spider");
    GRID(g, "#########",
            "@.k.D.T.#",
            "#########");
    assert_int_equal(eval_scenario(3)->kind, EVAL_KEYDOOR);
    for (int k = 1; k <= 3; k++) assert_int_equal(routes_ok(&g, 3, &b, k, why), 0);
    /* but a chest on the way is not walked through at scale 1 */
    GRID(g, "#########",
            "@.T.k.D.#",
            "#########");
    assert_int_equal(routes_ok(&g, 1, &b, 1, why), 1);
    assert_non_null(strstr(why, "TREASURE at (1,2)"));
    assert_int_equal(routes_ok(&g, 1, &b, 2, why), 0);
    /* too large to check */
    assert_int_equal(routes_ok(&g, 1, &b, 9, why), -1);
}

/* ---- the command ---- */

static const char *write_file_in(const char *name, const char *text)
{
    static char paths[8][PATH_MAX];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, PATH_MAX, "%s/%s", pcg_test_tmpdir(), name);
    assert_int_equal(write_file_atomic(p, text, strlen(text)), 0);
    return p;
}

/* Every tile, a treasure room behind a door, mobs of each kind. */
static const char *const all_tiles =
    "# every tile\n"
    "3 1 4 1 2 1 1 1\n"
    "1 2 1 5 2 7 1 6\n"
    "1 2 1 1 2 1 1 1\n"
    "1 1 1 6 2 2 8 2\n"
    "7 2 1 1 2 1 9 2\n";

static void export_cli_roundtrip(void **state)
{
    (void)state;
    const char *lv = write_file_in("mc_all.txt", all_tiles);
    char out[8192], dir[PATH_MAX], cmd[PATH_MAX * 3];
    snprintf(dir, sizeof dir, "%s/mc_out", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "rm -rf %s && %s export --minecraft --scale 2 --name test_pack --out %s %s",
                         dir, pcg_test_binary(), dir, lv);
    if (rc) fail_msg("export failed (%d): %s", rc, out);
    assert_non_null(strstr(out, "/function test_pack:mc_all"));
    char zip[PATH_MAX + 32], nbt_file[PATH_MAX + 32];
    snprintf(zip, sizeof zip, "%s/test_pack.zip", dir);
    snprintf(nbt_file, sizeof nbt_file, "%s/mc_all.nbt", dir);
    assert_true(pcg_test_exists(zip) && pcg_test_exists(nbt_file));
    /* the same inputs give the same bytes */
    uint64_t a, b2;
    char err[512];
    assert_int_equal(file_fnv1a64(zip, &a, err, sizeof err), 0);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s export --minecraft --scale 2 --name test_pack --out %s %s",
                                 pcg_test_binary(), dir, lv), 0);
    assert_int_equal(file_fnv1a64(zip, &b2, err, sizeof err), 0);
    assert_true(a == b2);
    /* read back independently: zipfile, json and the NBT package */
    for (int k = 1; k <= 3; k++) {
        assert_int_equal(pcg_test_sh(out, sizeof out, "%s export --minecraft --scale %d --name test_pack --out %s %s",
                                     pcg_test_binary(), k, dir, lv), 0);
        snprintf(cmd, sizeof cmd, "python3 tests/mc_check.py --zip %s --ns test_pack --scale %d --nbt-dir %s mc_all=%s",
                 zip, k, dir, lv);
        rc = pcg_test_sh(out, sizeof out, "%s", cmd);
        if (rc == 77) {
            printf("%s", out);
            skip();
        }
        if (rc) fail_msg("%s\n%s", cmd, out);
        assert_non_null(strstr(out, "mc_check: ok, 1 levels"));
    }
}

static void export_cli_refusals(void **state)
{
    (void)state;
    char out[8192], dir[PATH_MAX], mapping[4096];
    snprintf(dir, sizeof dir, "%s/mc_refused", pcg_test_tmpdir());
    snprintf(mapping, sizeof mapping, "%sSPIDER floor=stone spawner=spider\n", base_mapping);
    const char *blocks = write_file_in("mc_spawners.txt", mapping);
    const char *lv = write_file_in("mc_corridor.txt", "2 2 2 2 2 2 2\n3 1 6 1 7 1 8\n2 2 2 2 2 2 2\n");
    const char *bin = pcg_test_binary();
    /* scaling would block the corridor: refused, one line, nothing written */
    int rc = pcg_test_sh(out, sizeof out, "rm -rf %s; %s export --minecraft --scale 1 --blocks %s --out %s %s", dir, bin,
                         blocks, dir, lv);
    assert_int_equal(rc, 3);
    assert_non_null(strstr(out, "mc_corridor: scenario 1: the route player -> door"));
    assert_non_null(strstr(out, "SPIDER at (1,2)"));
    assert_non_null(strstr(out, "refused: scaling would block a route in 1 of 1 level"));
    assert_false(pcg_test_exists(dir));
    /* only the scenario asked for is checked; --force writes and still says it */
    rc = pcg_test_sh(out, sizeof out, "%s export --minecraft --scale 1 --blocks %s --force --out %s %s", bin, blocks, dir, lv);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "warning: mc_corridor"));
    char zip[PATH_MAX + 32];
    snprintf(zip, sizeof zip, "%s/pcgrllm.zip", dir);
    assert_true(pcg_test_exists(zip));
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s export --minecraft --scale 2 --blocks %s --out %s %s", bin, blocks,
                                 dir, lv), 0);
    /* usage errors: exit 2 with one line */
    static const char *const usage[] = {"--out D L", "--minecraft L", "--minecraft --out D", "--minecraft --scale 0 --out D L",
                                        "--minecraft --scale 9 --out D L", "--minecraft --name 'My Pack' --out D L",
                                        "--minecraft --scenario 5 --out D L", "--minecraft --scenario 1 --target '{}' --out D L"};
    char abs_bin[PATH_MAX];
    assert_non_null(realpath(bin, abs_bin));
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        rc = pcg_test_sh(out, sizeof out, "cd %s && %s export %s", pcg_test_tmpdir(), abs_bin, usage[i]);
        if (rc != 2) fail_msg("export %s: exit %d, expected 2: %s", usage[i], rc, out);
        assert_non_null(strstr(out, "export: "));
    }
    /* a bad mapping names its file and line; an input FIFO and an output
     * FIFO are refused and left alone */
    const char *bad = write_file_in("mc_bad.txt", "wall_height 3\nEMPTY floor=stone colour=red\n");
    rc = pcg_test_sh(out, sizeof out, "%s export --minecraft --blocks %s --out %s %s", bin, bad, dir, lv);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "mc_bad.txt:2: unknown key 'colour'"));
    rc = pcg_test_sh(out, sizeof out, "f=%s/mc_fifo.txt; rm -f $f; mkfifo $f && %s export --minecraft --out %s $f", pcg_test_tmpdir(),
                     bin, dir);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "FIFO"));
    rc = pcg_test_sh(out, sizeof out, "rm -f %s && mkfifo %s && %s export --minecraft --out %s %s; r=$?; test -p %s && exit $r",
                     zip, zip, bin, dir, lv, zip);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "FIFO"));
    pcg_test_sh(NULL, 0, "rm -f %s", zip);
}

PCG_TESTS(export, cmocka_unit_test(export_nbt_bytes), cmocka_unit_test(export_nbt_misuse),
          cmocka_unit_test(export_blocks_parse), cmocka_unit_test(export_scaling_keeps_routes),
          cmocka_unit_test(export_cli_roundtrip), cmocka_unit_test(export_cli_refusals))
