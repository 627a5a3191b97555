#!/usr/bin/env python3
"""Expected values of tests/test_grid_tables.c, computed independently of
the engine with numpy and scipy (pip install numpy scipy).

The rows: scenarios 1 and 3, three seeds, CoT and GoT with the ablations
zs, sa, fb and full (fb and full over three iterations), and the Human row
(a given reward and its refinement).  As the grid reads them when it has
+FB and full cells, a method's zs and sa rows are iteration 1 of its own
fb and full cells; the Human row's zero-shot value is its first iteration.
One cell
(scenario 3, GoT, full, seed 2) did not finish: its first two iterations
exist, its final value does not.  Run it to print the rows as C and the
expected table cells; the test holds a copy of both."""
import numpy as np
from scipy import stats

SCEN = [1, 3]
R = 3
Y = 3


def spread(h, mult, mod, bonus):
    """A fitness in [0, 1] with two decimals from the hash h of a cell's
    coordinates, raised by bonus."""
    return round(min(1.0, (h * mult) % mod / 100.0 + bonus), 2)


def val(s, pe, abl, r, it):
    h = (s * 7 + {"cot": 1, "got": 2, "human": 3}[pe] * 13 + {"zs": 1, "sa": 2, "fb": 3, "full": 4}[abl] * 17
         + r * 29 + it * 31)
    # refinement helps in scenario 3
    return spread(h, 37, 101, 0.3 if s == 3 and abl in ("fb", "full") and it == Y else 0)


rows = []  # (scenario, pe, ablation, repeat, iteration, fitness, final)
for s in SCEN:
    for r in range(R):
        for pe in ("cot", "got"):
            for abl in ("fb", "full"):
                for it in range(1, Y + 1):
                    unfinished = s == 3 and pe == "got" and abl == "full" and r == 2
                    if unfinished and it == Y:
                        continue
                    rows.append((s, pe, abl, r, it, val(s, pe, abl, r, it), it == Y))
                    if it == 1:  # also the zs (sa) column of the method
                        rows.append((s, pe, {"fb": "zs", "full": "sa"}[abl], r, 1, val(s, pe, abl, r, 1), False))
        for it in range(1, Y + 1):
            rows.append((s, "human", "full", r, it, val(s, "human", "full", r, it), it == Y))
        rows.append((s, "human", "zs", r, 1, val(s, "human", "full", r, 1), True))

# random play's fitness at the defaults (30 levels, evaluation seed
# 20250101), as `pcgrllm levels --policy random` + `pcgrllm eval` measure it:
# 10 and 2 of the 30 levels score.  The floor of each scenario's
# normalisation; the test checks the engine computes the same.
FLOOR = {1: 10 / 30, 3: 2 / 30}


def norm(s, v):
    return (v - FLOOR[s]) / (1 - FLOOR[s])


def ident(s, v):
    return v


def per_repeat(s, one, scale):
    """The seeds' values: one(scenario, repeat) in scenario s > 0, or for
    s == 0 the mean over the scenarios of scale(s, x) (normalised, or raw
    with ident); seeds without a value left out."""
    out = []
    for r in range(R):
        if s > 0:
            out.append(one(s, r))
        else:
            v = [one(sc, r) for sc in SCEN]
            out.append(None if None in v else float(np.mean([scale(sc, x) for sc, x in zip(SCEN, v)])))
    return [x for x in out if x is not None]


def first_match(table, want):
    """The value (index 5) of the first row of table for which want holds."""
    return next((x[5] for x in table if want(x)), None)


def column(s, pe, abl, scale=norm):
    """Per repeat: the column's value (iteration 1 for zs and sa, else the
    last node)."""
    def one(sc, r):
        return first_match(rows, lambda x: x[0] == sc and x[1] == pe and x[2] == abl and x[3] == r and
                           (x[4] == 1 if abl in ("zs", "sa") else x[6]))
    return per_repeat(s, one, scale)


def by_iteration(pe, abl, it, scale=norm):
    out = []
    for r in range(R):
        v = []
        for sc in SCEN:
            m = [x[5] for x in rows if x[0] == sc and x[1] == pe and x[2] == abl and x[3] == r and x[4] == it]
            v.append(m[0] if m else None)
        out.append(None if None in v else float(np.mean([scale(sc, x) for sc, x in zip(SCEN, v)])))
    return out


if __name__ == "__main__":
    print("/* rows: scenario, pe, ablation, repeat, iteration, fitness, final */")
    for x in rows:
        print('    {%d, "%s", "%s", %d, %d, %.2f, %d},' % (x[0], x[1], x[2], x[3], x[4], x[5], x[6]))
    print("/* expected: scenario, pe, ablation, mean, sd, n */")
    for s in SCEN + [0]:
        for pe in ("cot", "got", "human"):
            for abl in ("zs", "sa", "fb", "full"):
                if pe == "human" and abl in ("sa", "fb"):
                    continue
                v = column(s, pe, abl)
                sd = float(np.std(v, ddof=1)) if len(v) > 1 else float("nan")
                print('    {%d, "%s", "%s", %.15g, %.15g, %d},' % (s, pe, abl, np.mean(v), sd, len(v)))
    print("/* the Mean rows of the raw values: pe, ablation, mean, sd, n */")
    for pe in ("cot", "got", "human"):
        for abl in ("zs", "sa", "fb", "full"):
            if pe == "human" and abl in ("sa", "fb"):
                continue
            v = column(0, pe, abl, ident)
            sd = float(np.std(v, ddof=1)) if len(v) > 1 else float("nan")
            print('    {"%s", "%s", %.15g, %.15g, %d},' % (pe, abl, np.mean(v), sd, len(v)))
    print("/* p-values: scenario, pe, p(ZS), p(SA) */")
    for s in SCEN + [0]:
        for pe in ("cot", "got"):
            f, z, a = column(s, pe, "full"), column(s, pe, "zs"), column(s, pe, "sa")
            pz = stats.ttest_ind(f, z, equal_var=False).pvalue
            pa = stats.ttest_ind(f, a, equal_var=False).pvalue
            print('    {%d, "%s", %.15g, %.15g},' % (s, pe, pz, pa))
    print("/* by iteration (CoT full, GoT full): mean, sd, n; then the change to the next */")
    for pe in ("cot", "got"):
        prev = None
        for it in range(1, Y + 1):
            v = by_iteration(pe, "full", it)
            f = [x for x in v if x is not None]
            line = '    {"%s", %d, %.15g, %.15g, %d' % (pe, it, np.mean(f), np.std(f, ddof=1), len(f))
            if prev is not None:
                d = [b - a for a, b in zip(prev, v) if a is not None and b is not None]
                line += ', /* dy %d->%d */ %.15g, %.15g, %d' % (it - 1, it, np.mean(d), np.std(d, ddof=1), len(d))
            print(line + "},")
            prev = v


# ---- Table V as the paper's: +FB cells of ToT and GoT whose search the
# heuristic or the model's scores steered; the heuristic fitness of
# iteration 1 (Base) and of the last iteration (+FB), and Welch's p of the
# last iteration steered by the model against steered by the heuristic.
# One cell (scenario 3, GoT, steered by the model, seed 2) did not finish.

def val5(s, pe, fit, r, it):
    h = s * 11 + {"tot": 1, "got": 2}[pe] * 19 + {"heuristic": 1, "llm": 2}[fit] * 23 + r * 41 + it * 43
    return spread(h, 53, 97, 0.2 if fit == "heuristic" and it == Y else 0)  # the oracle steers better


rows5 = []  # (scenario, pe, fitness, repeat, iteration, value, final)
for s in SCEN:
    for r in range(R):
        for pe in ("tot", "got"):
            for fit in ("heuristic", "llm"):
                for it in range(1, Y + 1):
                    if s == 3 and pe == "got" and fit == "llm" and r == 2 and it == Y:
                        continue
                    rows5.append((s, pe, fit, r, it, val5(s, pe, fit, r, it), it == Y))


def t5_values(s, pe, fit, last, scale=norm):
    def one(sc, r):
        return first_match(rows5, lambda x: x[0] == sc and x[1] == pe and x[2] == fit and x[3] == r and
                           (x[6] if last else x[4] == 1))
    return per_repeat(s, one, scale)


def stat(v):
    return float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else float("nan"), len(v)


if __name__ == "__main__":
    print("/* Table V rows: scenario, pe, fitness, repeat, iteration, value, final */")
    for x in rows5:
        print('    {%d, "%s", "%s", %d, %d, %.2f, %d},' % x)
    print("/* Table V: scenario, pe, then (mean, sd, n) of heuristic Base, +FB, model Base, +FB; p */")
    for s in SCEN + [0]:
        for pe in ("tot", "got"):
            cols = [stat(t5_values(s, pe, fit, last)) for fit in ("heuristic", "llm") for last in (False, True)]
            lh, ll = t5_values(s, pe, "heuristic", True), t5_values(s, pe, "llm", True)
            p = stats.ttest_ind(ll, lh, equal_var=False).pvalue
            print('    {%d, "%s", {%s}, %.15g},' % (s, pe, ", ".join("{%.15g, %.15g, %d}" % c for c in cols), p))
    print("/* Table V, the Mean rows of the raw values: pe, then the means of the four columns */")
    for pe in ("tot", "got"):
        m = [np.mean(t5_values(0, pe, fit, last, ident)) for fit in ("heuristic", "llm") for last in (False, True)]
        print('    {"%s", {%s}},' % (pe, ", ".join("%.15g" % x for x in m)))
