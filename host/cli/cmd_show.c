/* pcgrllm show / pcgrllm render: a level in the terminal, or as a PNG. */
#include "commands.h"
#include "levelio.h"
#include "render.h"
#include "util.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_show(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: pcgrllm show [--no-color] LEVEL...\n  Prints each level with a legend (colour on a terminal).\n");
        return argc < 2 ? 2 : 0;
    }
    int colour = stdout_is_tty() && !getenv("NO_COLOR"), rc = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-color")) {
            colour = 0;
            continue;
        }
        unsigned char tiles[PCG_MAX_CELLS];
        level_t l;
        char err[512];
        if (level_read(argv[i], &l, tiles, err, sizeof err)) {
            die_msg("%s", err);
            rc = 1;
            continue;
        }
        printf("%s (%dx%d)\n", argv[i], l.h, l.w);
        level_print(stdout, &l, colour);
    }
    return rc;
}

int cmd_render(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"cell", required_argument, 0, 'c'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *out = NULL;
    long px = 32;
    int c;
    optind = 1;
    while ((c = getopt_full(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'c':
            if (parse_int(optarg, 4, 128, &px)) return die_msg("render: --cell must be 4..128 pixels"), 2;
            break;
        case 'h':
            printf("usage: pcgrllm render LEVEL -o OUT.png [--cell PX]\n"
                   "  Draws the level as a PNG: one coloured, labelled square per tile and a legend.\n");
            return 0;
        default: return 2;
        }
    }
    if (optind != argc - 1 || !out) {
        die_msg("render: usage: pcgrllm render LEVEL -o OUT.png");
        return 2;
    }
    unsigned char tiles[PCG_MAX_CELLS];
    level_t l;
    char err[512];
    if (level_read(argv[optind], &l, tiles, err, sizeof err)) return die_msg("%s", err), 1;
    if (level_render_png(&l, out, (int)px)) return die_msg("render: %s", write_error()), 1;
    printf("wrote %s\n", out);
    return 0;
}
