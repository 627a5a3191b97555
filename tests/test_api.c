/* The shared library's human rewards (host/api/human_native.h): compiled
 * by the C compiler, they must give what libtcc's build of the same source
 * gives, the build `pcgrllm bench env` and training use. */
#include "harness.h"
#include "env.h"
#include "eval.h"
#include "human_native.h"
#include "reward_jit.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

/* Every transition of a random-play stretch of n envs scored by both. */
static void compare_on_play(int scenario, reward_prog *jit, reward_fn native)
{
    env_t e;
    assert_int_equal(env_alloc(&e, 8, 16, 16, eval_scenario(scenario)->variant, 21), 0);
    unsigned char prev[8 * 256];
    int act[8], nonzero = 0;
    for (int t = 0; t < 400; t++) {
        memcpy(prev, e.maps, sizeof prev);
        env_random_actions(&e, 5, (uint64_t)t, act);
        env_step(&e, act);
        for (int i = 0; i < 8; i++) {
            level_t p = {16, 16, prev + i * 256}, c = env_level(&e, i);
            float a = reward_prog_call(&p, &c, jit), b = native(&p, &c, NULL);
            assert_memory_equal(&a, &b, sizeof a);
            nonzero += a != 0.0f;
        }
    }
    assert_true(nonzero > 0); /* the play reached transitions the reward scores */
    env_free(&e);
}

static void api_human_rewards_match_libtcc(void **state)
{
    (void)state;
    for (int s = 1; s <= HUMAN_NATIVE_SCENARIOS; s++) {
        char path[64], err[1024];
        snprintf(path, sizeof path, "rewards/human/scenario%d.c", s);
        long len;
        char *src = read_file(path, REWARD_MAX_SOURCE, &len, err, sizeof err);
        assert_non_null(src);
        reward_prog *jit = reward_compile_cpu(src, err, sizeof err);
        free(src);
        assert_non_null(jit);
        reward_fn native = human_native_reward(s);
        assert_non_null(native);
        compare_on_play(s, jit, native);
        reward_prog_free(jit);
    }
    assert_null(human_native_reward(0));
    assert_null(human_native_reward(HUMAN_NATIVE_SCENARIOS + 1));
}

PCG_TESTS(api, cmocka_unit_test(api_human_rewards_match_libtcc))
