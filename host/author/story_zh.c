/* Chinese words of a story as the English keywords the reader knows
 * (docs/offline-author.md, "Chinese and mixed stories").  A keyword reader
 * cannot parse Chinese; it can replace the words it has been given and
 * refuse the rest, so a word it does not know (a negation it would miss,
 * a tile it would drop) never becomes a wrong target. */
#include "story_read.h"
#include "util.h"
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *zh, *en;
} zh_word;

/* Longer words first where one begins another (不超过 before 不). */
static const zh_word words[] = {
    /* tiles and the route */
    {"玩家", "player"}, {"英雄", "hero"}, {"主角", "hero"}, {"起点", "start"}, {"钥匙", "key"},
    {"出口", "exit"}, {"门", "door"}, {"宝藏", "treasure"}, {"宝箱", "chest"}, {"敌人", "enemies"},
    {"怪物", "monsters"}, {"怪兽", "monsters"}, {"怪", "monster"}, {"蝙蝠", "bat"}, {"蝎子", "scorpion"},
    {"蜘蛛", "spider"}, {"路线", "route"}, {"路径", "path"}, {"路程", "route"}, {"路", "route"},
    {"步数", "steps"}, {"步", "steps"}, {"格子", "cells"}, {"格", "cells"}, {"关卡", "level"}, {"地图", "map"},
    {"大小", "size"}, {"尺寸", "size"}, {"长度", "length"}, {"长", "long"}, {"短", "short"},
    /* what the reader refuses by name */
    {"龙", "dragon"}, {"陷阱", "trap"}, {"岩浆", "lava"}, {"宝石", "gem"}, {"迷宫", "maze"}, {"美丽", "beautiful"},
    {"漂亮", "beautiful"}, {"第二", "second"}, {"第三", "third"},
    /* amounts and tolerances */
    {"总共", "total"}, {"一共", "total"}, {"总计", "total"}, {"全程", "total"}, {"总长", "total"}, {"共", "total"},
    {"恰好", "exactly"}, {"正好", "exactly"}, {"刚好", "exactly"}, {"精确", "exactly"}, {"大约", "about"},
    {"大概", "about"}, {"差不多", "about"}, {"约", "about"}, {"左右", "circa"}, {"至少", "at least"},
    {"最少", "at least"}, {"最多", "at most"}, {"至多", "at most"}, {"不超过", "at most"}, {"超过", "more than"},
    {"多于", "more than"}, {"少于", "less than"}, {"不到", "less than"}, {"以上", "or more"}, {"以下", "or less"},
    {"以内", "or less"}, {"一些", "some"}, {"一点", "some"}, {"若干", "several"}, {"几", "few"},
    {"随便", "whatever"}, {"随意", "whatever"}, {"任意", "whatever"}, {"方便", "convenient"}, {"自然", "natural"},
    {"感觉", "feels"}, {"合适", "suitable"}, {"适当", "suitable"}, {"一个", "a"},
    /* verbs, negation, joints */
    {"遇到", "meet"}, {"遇见", "meet"}, {"碰到", "meet"}, {"面对", "face"}, {"经过", "pass"}, {"打败", "defeat"},
    {"击败", "defeat"}, {"消灭", "defeat"}, {"避开", "avoid"}, {"躲开", "avoid"}, {"避免", "avoid"},
    {"远离", "avoid"}, {"绕开", "avoid"}, {"不要", "not"}, {"不能", "not"}, {"不会", "not"}, {"没有", "no"},
    {"不", "not"}, {"别", "not"}, {"无", "no"}, {"距离", "from"}, {"距", "from"}, {"离", "from"}, {"从", "from"},
    {"到达", "reach"}, {"走到", "reach"}, {"到", "to"}, {"之后", "after"}, {"以后", "after"}, {"后", "after"},
    {"之前", "before"}, {"以前", "before"}, {"前", "before"}, {"然后", "then"}, {"再", "then"}, {"和", "and"},
    {"与", "and"}, {"跟", "and"}, {"及", "and"}, {"并且", "and"}, {"并", "and"}, {"但是", "but"}, {"可是", "but"},
    {"不过", "but"}, {"但", "but"}, {"或者", "or"}, {"或", "or"}, {"拿到", "get"}, {"取得", "get"},
    {"获得", "get"}, {"找到", "find"}, {"拿", "get"}, {"打开", "open"}, {"离开", "leave"}, {"走", "walk"},
    {"生成", "make"}, {"设计", "make"}, {"制作", "make"}, {"创建", "make"}, {"做", "make"}, {"位于", "at"},
    /* words that carry nothing the reader measures */
    {"的", ""}, {"了", ""}, {"在", ""}, {"是", ""}, {"有", ""}, {"要", ""}, {"应该", ""}, {"需要", ""},
    {"必须", ""}, {"得", ""}, {"地", ""}, {"请", ""}, {"让", ""}, {"个", ""}, {"只", ""}, {"把", ""}, {"扇", ""},
    {"条", ""}, {"位", ""}, {"名", ""}, {"放置", ""}, {"放", ""}, {"远", ""}, {"这", ""}, {"那", ""}, {"它", ""},
    {"我们", ""}, {"我", ""}, {"你", ""}, {"希望", ""}, {"想", ""}, {"还", ""}, {"也", ""}, {"会", ""},
    {"处", ""}, {"里", ""}, {"上", ""}, {"中", ""}, {"吧", ""}, {"呢", ""}, {"啊", ""},
    /* punctuation */
    {"，", ","}, {"、", ","}, {"。", "."}, {"；", ";"}, {"！", "!"}, {"？", "?"}, {"：", ":"}, {"（", ""},
    {"）", ""}, {"“", ""}, {"”", ""}, {"《", ""}, {"》", ""}, {"×", "x"},
};

static int utf8_len(unsigned char c)
{
    return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
}

static unsigned codepoint(const unsigned char *p, int n)
{
    if (n == 2) return (unsigned)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
    if (n == 3) return (unsigned)(p[0] & 0x0f) << 12 | (unsigned)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
    if (n == 4)
        return (unsigned)(p[0] & 0x07) << 18 | (unsigned)(p[1] & 0x3f) << 12 | (unsigned)(p[2] & 0x3f) << 6 |
               (p[3] & 0x3f);
    return p[0];
}

static int is_cjk(unsigned c)
{
    return (c >= 0x2e80 && c <= 0x9fff) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xff00 && c <= 0xffef);
}

/* A Chinese numeral (一 .. 九, 两, 十, 百): its value and its bytes, or 0. */
static int numeral(const char *p, int *value)
{
    static const char *const digit[] = {"零", "一", "二", "三", "四", "五", "六", "七", "八", "九"};
    int total = 0, cur = 0, n = 0;
    for (;;) {
        int d = -1;
        for (int k = 0; k < 10; k++)
            if (!strncmp(p + n, digit[k], 3)) d = k;
        if (!strncmp(p + n, "两", 3)) d = 2;
        if (d >= 0) cur = d;
        else if (!strncmp(p + n, "十", 3)) total += (cur ? cur : 1) * 10, cur = 0;
        else if (!strncmp(p + n, "百", 3)) total += (cur ? cur : 1) * 100, cur = 0;
        else break;
        n += 3;
    }
    *value = total + cur;
    return n;
}

static const zh_word *word_at(const char *p)
{
    const zh_word *best = NULL;
    size_t best_len = 0;
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        size_t l = strlen(words[k].zh);
        if (l > best_len && !strncmp(p, words[k].zh, l)) best = &words[k], best_len = l;
    }
    return best;
}

int story_normalize(const char *story, char *out, int outlen, int strict, char *reason, int len)
{
    int o = 0;
    const char *p = story;
    while (*p) {
        char piece[32];
        int used;
        const zh_word *w = word_at(p);
        int value;
        if (w) {
            const char *sp = strcmp(w->en, "x") ? " " : ""; /* 20×20 stays one word */
            snprintf(piece, sizeof piece, "%s%s%s", sp, w->en, sp);
            used = (int)strlen(w->zh);
        } else if ((used = numeral(p, &value)) > 0) {
            snprintf(piece, sizeof piece, " %d ", value);
        } else {
            used = utf8_len((unsigned char)*p);
            for (int k = 1; k < used; k++)
                if (!p[k]) used = k;
            unsigned c = codepoint((const unsigned char *)p, used);
            if (is_cjk(c) && !strict) {
                snprintf(piece, sizeof piece, " ");
            } else if (is_cjk(c)) {
                say_to(reason, len,
                       "unsupported: the offline reader does not know the word '%.*s' (it reads a fixed list of "
                       "Chinese keywords); rephrase it, or read the story with a language model",
                       used, p);
                return -1;
            } else
                snprintf(piece, sizeof piece, "%.*s", used, p);
        }
        int pl = (int)strlen(piece);
        if (o + pl + 1 > outlen) break; /* longer than any story is allowed to be */
        memcpy(out + o, piece, (size_t)pl);
        o += pl;
        p += used;
    }
    out[o] = 0;
    return 0;
}
