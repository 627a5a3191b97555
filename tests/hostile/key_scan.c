/* Looks for the API key the way a reward could in a forked process: the
 * environment strings sit at the top of the stack.  If it finds the test's
 * marker it returns three bytes of the secret as its reward, so that they
 * would show in the statistics, the run files and the next prompt. */
float compute_reward(const level_t *prev, const level_t *curr)
{
    const char marker[] = "PCGRLLM_TEST_SECRET=";
    const char *p = marker;
    for (int i = 0; i < (1 << 22); i++, p++) {
        int k = 0;
        while (k < 20 && p[k] == marker[k]) k++;
        if (k == 20 && p != marker)
            return (float)((unsigned char)p[20] + 256 * (unsigned char)p[21] + 65536 * (unsigned char)p[22]);
    }
    return 0.0f;
}
