/* A grid's summary.json checked against its own rows: every Table II
 * entry and p-value, and every Table V entry, recomputed from the "rows"
 * list with the formulas of
 * docs/grid.md (no p-value where a column has one or two seeds), written
 * again here rather than taken from the engine. */
#ifndef PCG_TEST_GRID_CHECK_H
#define PCG_TEST_GRID_CHECK_H

/* Fails the test on any difference; also checks that cells_finished is
 * want_finished and that summary.html, tables.md and rows.csv exist. */
void grid_check_summary(const char *dir, int want_finished);

#endif
