/* Benchmarks behind `pcgrllm bench [WHAT]`; each prints one table. */
#ifndef PCG_BENCH_H
#define PCG_BENCH_H

int bench_env(int argc, char **argv);
int bench_eval(int argc, char **argv);
int bench_train(int argc, char **argv);
int bench_confine(int argc, char **argv);

#endif
