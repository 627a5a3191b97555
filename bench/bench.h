/* Benchmarks behind `pcgrllm bench [WHAT]`; each prints one table. */
#ifndef PCG_BENCH_H
#define PCG_BENCH_H

int bench_env(int argc, char **argv);
int bench_eval(int argc, char **argv);
int bench_train(int argc, char **argv);
/* bench train --backend cuda-sim: the simulation's work counters and the
 * H200 model (bench/bench_model.c) */
int bench_train_model(int argc, char **argv);
/* 1 when the counting library loads and counts (else one line printed), so
 * that `pcgrllm bench --backend cuda-sim` fails before its CPU tables. */
int bench_model_ready(void);
int bench_confine(int argc, char **argv);
/* the execution harness's benchmark (bench/bench_harness.c) */
int bench_harness(int argc, char **argv);

#endif
