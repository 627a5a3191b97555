/* Benchmarks behind `pcgrllm bench [WHAT]`; each prints one table. */
#ifndef PCG_BENCH_H
#define PCG_BENCH_H
#include <stddef.h>

int bench_env(int argc, char **argv);
int bench_eval(int argc, char **argv);
int bench_train(int argc, char **argv);
/* bench train --backend cuda-sim: the simulation's work counters and the
 * H200 model (bench/bench_model.c) */
int bench_train_model(int argc, char **argv);
/* 1 when the counting library loads and counts (else one line printed), so
 * that `pcgrllm bench --backend cuda-sim` fails before its CPU tables. */
int bench_model_ready(void);
/* The simulation library if it loads and counts kernel bytes, else NULL
 * and why (one line) in why[len]. */
struct pcg_cuda_api;
const struct pcg_cuda_api *bench_counting_api(char *why, size_t len);
/* bench env --backend cuda-sim: the environment steps with each human
 * reward on one H200 by a model of their counted work
 * (bench/bench_env_model.c) */
int bench_env_model(int argc, char **argv);
int bench_confine(int argc, char **argv);
/* the execution harness's benchmark (bench/bench_harness.c) */
int bench_harness(int argc, char **argv);

#endif
