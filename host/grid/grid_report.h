/* A grid's summary: its rows and tables (grid_rows.h) written for people
 * and programs.  In DIR:
 *   summary.json   rows, table2, p_values, table4 and the studies, notes
 *   rows.csv, table2.csv, p_values.csv, table4.csv, table5.csv,
 *   table9.csv, feedback_study.csv, ref_heatmap.csv   the same lists
 *   tables.md      the paper's tables as Markdown, with their notes
 *   summary.html   the tables and the plots in one self-contained page
 *   plots/NAME.png fitness by iteration, feedback changes, reference heatmap
 *   summary.txt    what the command prints: Table II and its notes
 * See docs/grid.md. */
#ifndef PCG_GRID_REPORT_H
#define PCG_GRID_REPORT_H
#include "grid.h"
#include "grid_rows.h"
#include <jansson.h>

/* Read the cells, compute and write everything above; print summary.txt
 * unless quiet.  Returns the number of finished cells, or -1 (printed). */
int grid_report(const char *out, const grid_def *d, const grid_cell *cells, int n_cells, int value, int quiet);

/* The pieces, for tests. */
json_t *grid_summary_json(const grid_rows *R, const grid_tables *T);
/* "| a | b |" tables and their notes (malloc'd); full: every table, else
 * Table II only (what the command prints). */
char *grid_tables_markdown(const grid_rows *R, const grid_tables *T, int full);
/* The page, with the plots inline (malloc'd). */
char *grid_tables_html(const grid_rows *R, const grid_tables *T, const char *title);
/* The plots as DIR/plots/NAME.png, the names tables.md refers to.  0, or
 * -1 with err. */
int grid_write_plots(const char *out, const grid_rows *R, const grid_tables *T, char *err, int errlen);
/* A JSON array of flat objects as CSV with the given columns, in order
 * (malloc'd): numbers as JSON writes them, null as an empty field, strings
 * quoted when they need it. */
char *grid_csv(json_t *arr, const char *const *columns, int n_columns);

/* A method's label in the tables: "CoT", "ToT", "GoT", "GoT (best 1, worst 2)", "Human". */
void grid_key_label(const grid_key *k, int refs_vary, char *buf, size_t len);

#endif
