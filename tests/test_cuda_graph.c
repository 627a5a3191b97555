/* The device trainer's minibatches as CUDA graphs (cuda/graph.cu): the same
 * bits as the host launching every kernel, the graph's launches counted as
 * a graph's, and PCGRLLM_CUDA_GRAPHS refused outside 0 and 1 (and passed
 * to workers). */
#include "harness.h"
#include "cuda_check.h"
#include "nn.h"
#include "ppo.h"
#include "worker.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pcg_cuda_work *entry(const pcg_cuda_api *api, const char *name)
{
    int n = 0;
    const pcg_cuda_work *w = api->work_counters(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(w[i].name, name)) return &w[i];
    return NULL;
}

typedef struct {
    ppo_config cfg;
    nn_t nn;
} graph_case;

static void case_init(graph_case *c)
{
    ppo_config_default(&c->cfg);
    c->cfg.n_envs = 16, c->cfg.n_steps = 8, c->cfg.n_epochs = 2, c->cfg.n_minibatches = 2, c->cfg.seed = 5;
    snprintf(c->cfg.preset, sizeof c->cfg.preset, "small");
    nn_config nc;
    assert_int_equal(nn_preset_config("small", 2 * c->cfg.map_h - 1, 2 * c->cfg.map_w - 1, 6, &nc), 0);
    assert_int_equal(nn_alloc(&c->nn, &nc), 0);
    nn_init(&c->nn, 7, c->cfg.conv_init);
}

/* Two rollouts and updates of a device trainer with graphs on (graphs) or
 * off, the first in fp32, the second in bf16 (a graph captured again, its
 * packed weights scratch taken during the capture), each 64-sample
 * minibatch in two passes (PCGRLLM_CUDA_PASS_MOST 50); the parameters after
 * them into params, the last update's metrics into m; the last update's
 * counters checked for how it launched. */
static void train_twice(const pcg_cuda_api *api, const graph_case *c, int graphs, float *params, ppo_metrics *m)
{
    if (graphs) unsetenv("PCGRLLM_CUDA_GRAPHS");
    else setenv("PCGRLLM_CUDA_GRAPHS", "0", 1);
    size_t mark = api->arena_mark();
    setenv("PCGRLLM_CUDA_PASS_MOST", "50", 1);
    pcg_cuda_ppo *p = api->ppo_init(&c->cfg, &c->nn.cfg, c->nn.off, c->nn.n_params, c->nn.params, NULL);
    unsetenv("PCGRLLM_CUDA_GRAPHS");
    unsetenv("PCGRLLM_CUDA_PASS_MOST");
    if (!p) fail_msg("device ppo_init: %s", api->last_error());
    for (int u = 0; u < 2; u++) {
        if (api->ppo_rollout(p, m)) fail_msg("device rollout: %s", api->last_error());
        api->work_reset();
        assert_int_equal(api->blas_set_math(u ? PCG_MATH_BF16 : PCG_MATH_FP32), 0);
        if (api->ppo_update(p, m)) fail_msg("device update: %s", api->last_error());
    }
    assert_int_equal(api->blas_set_math(PCG_MATH_FP32), 0);
    int minibatches = c->cfg.n_epochs * c->cfg.n_minibatches;
    const pcg_cuda_work *launch = entry(api, PCG_WORK_GRAPH), *adam = entry(api, "adam_kernel");
    assert_non_null(adam);
    assert_int_equal(adam->launches, minibatches);
    assert_int_equal(adam->graph_launches, graphs ? minibatches : 0);
    const pcg_cuda_work *loss = entry(api, "ppo_loss_kernel"); /* once a pass */
    assert_non_null(loss);
    assert_int_equal(loss->launches, 2 * minibatches);
    if (graphs) {
        assert_non_null(launch);
        assert_int_equal(launch->launches, minibatches);
    } else {
        assert_null(launch);
    }
    pcg_cuda_ppo_state st;
    memset(&st, 0, sizeof st);
    st.params = params;
    assert_int_equal(api->ppo_get_state(p, &st), 0);
    assert_int_equal(st.adam_t, 2 * minibatches);
    api->ppo_free(p);
    api->arena_release(mark);
}

static void cuda_ppo_graphs_match_launches(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_device_or_skip("cuda_ppo_graphs_match_launches");
    graph_case c;
    case_init(&c);
    size_t P = c.nn.n_params;
    float *with = malloc(P * sizeof(float)), *without = malloc(P * sizeof(float));
    assert_true(with && without);
    ppo_metrics mw, mo;
    memset(&mw, 0, sizeof mw);
    memset(&mo, 0, sizeof mo);
    train_twice(api, &c, 1, with, &mw);
    train_twice(api, &c, 0, without, &mo);
    assert_memory_equal(with, without, P * sizeof(float));
    assert_true(mw.loss == mo.loss && mw.policy_loss == mo.policy_loss && mw.value_loss == mo.value_loss);
    assert_true(mw.grad_norm == mo.grad_norm && mw.entropy == mo.entropy);
    /* the update moved the parameters: the comparison compared something */
    assert_memory_not_equal(with, c.nn.params, P * sizeof(float));
    free(with);
    free(without);
    nn_free(&c.nn);
}

static void cuda_graphs_env_refused(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_device_or_skip("cuda_graphs_env_refused");
    graph_case c;
    case_init(&c);
    static const char *const bad[] = {"2", "yes", "01", " 1", "1\n0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("PCGRLLM_CUDA_GRAPHS", bad[i], 1);
        pcg_cuda_ppo *p = api->ppo_init(&c.cfg, &c.nn.cfg, c.nn.off, c.nn.n_params, c.nn.params, NULL);
        unsetenv("PCGRLLM_CUDA_GRAPHS");
        assert_null(p);
        assert_true(cuda_one_line(api->last_error()));
        assert_non_null(strstr(api->last_error(), "PCGRLLM_CUDA_GRAPHS="));
    }
    /* the passes' most samples: a whole number from 1 to PCG_PASS_MOST */
    static const char *const bad_most[] = {"0",  "8193", "abc",  "12x", "-4", "+5", " 5", "0100", "99999999999999999999",
                                           "5\n6"};
    for (size_t i = 0; i < sizeof bad_most / sizeof bad_most[0]; i++) {
        setenv("PCGRLLM_CUDA_PASS_MOST", bad_most[i], 1);
        pcg_cuda_ppo *p = api->ppo_init(&c.cfg, &c.nn.cfg, c.nn.off, c.nn.n_params, c.nn.params, NULL);
        unsetenv("PCGRLLM_CUDA_PASS_MOST");
        if (p) fail_msg("PCGRLLM_CUDA_PASS_MOST=%s was taken", bad_most[i]);
        assert_true(cuda_one_line(api->last_error()));
        assert_non_null(strstr(api->last_error(), "PCGRLLM_CUDA_PASS_MOST="));
    }
    nn_free(&c.nn);
    /* the worker that trains is given the variables */
    setenv("PCGRLLM_CUDA_GRAPHS", "0", 1);
    setenv("PCGRLLM_CUDA_PASS_MOST", "1", 1);
    int seen = 0;
    for (char *const *e = worker_environment(); *e; e++)
        seen += !strcmp(*e, "PCGRLLM_CUDA_GRAPHS=0") + !strcmp(*e, "PCGRLLM_CUDA_PASS_MOST=1");
    unsetenv("PCGRLLM_CUDA_GRAPHS");
    unsetenv("PCGRLLM_CUDA_PASS_MOST");
    assert_int_equal(seen, 2);
}

PCG_TESTS(cuda_graph, cmocka_unit_test(cuda_ppo_graphs_match_launches), cmocka_unit_test(cuda_graphs_env_refused))
