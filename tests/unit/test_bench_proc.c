/* test_bench_proc.c - CUnit suite for the bench's /proc readers: one
 * variable of another process's environment (found, absent, a prefix of
 * another name, unreadable), this process's CPU time, the machine's. */
#include <CUnit/Basic.h>
#include "cu_suite.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

static pid_t child;

/* A child whose environment is exactly what the tests look up. */
static int start_child(void)
{
    char *const argv[] = { "sleep", "30", NULL };
    char *const envp[] = { "IDEMPAY_WX_KEY_OLD=not this one", "IDEMPAY_WX_KEY=k3y with = sign",
                           "OTHER=1", NULL };

    child = fork();
    if (child < 0)
        return -1;
    if (child == 0) {
        execve("/bin/sleep", argv, envp);
        _exit(127);
    }
    /* wait for the exec: the environment is the new program's from then on */
    for (int i = 0; i < 200; i++) {
        char exe[256] = "";
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/exe", (int)child);
        ssize_t n = readlink(path, exe, sizeof(exe) - 1);
        if (n > 0 && strstr(exe, "sleep") != NULL)
            return 0;
        usleep(10000);
    }
    return -1;
}

static int stop_child(void)
{
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
    return 0;
}

static void test_environ_lookup(void)
{
    char v[64];

    CU_ASSERT_EQUAL(proc_environ_get(child, "IDEMPAY_WX_KEY", v, sizeof(v)), 1);
    CU_ASSERT_STRING_EQUAL(v, "k3y with = sign");
    CU_ASSERT_EQUAL(proc_environ_get(child, "OTHER", v, sizeof(v)), 1);
    CU_ASSERT_STRING_EQUAL(v, "1");
    CU_ASSERT_EQUAL(proc_environ_get(child, "IDEMPAY_WX", v, sizeof(v)), 0); /* a prefix only */
    CU_ASSERT_EQUAL(proc_environ_get(child, "MISSING", v, sizeof(v)), 0);
    CU_ASSERT_EQUAL(proc_environ_get(child, "IDEMPAY_WX_KEY", v, 4), 1); /* cut to fit */
    CU_ASSERT_STRING_EQUAL(v, "k3y");
    CU_ASSERT_EQUAL(proc_environ_get(999999999, "IDEMPAY_WX_KEY", v, sizeof(v)), -1);
}

static void test_cpu_time(void)
{
    double t0 = proc_cpu_ms((int)getpid()), t1 = t0;
    proc_machine m;
    volatile double x = 0;
    time_t give_up = time(NULL) + 10;

    /* burn CPU until the clock-tick counters move (or give up) */
    while (t1 <= t0 && time(NULL) < give_up) {
        for (long i = 0; i < 1000000L; i++)
            x += (double)i;
        t1 = proc_cpu_ms((int)getpid());
    }
    CU_ASSERT(t0 >= 0);
    CU_ASSERT(t1 > t0);
    CU_ASSERT_EQUAL(proc_cpu_ms(999999999), -1);
    CU_ASSERT_EQUAL(proc_machine_cpu_ms(&m), 0);
    CU_ASSERT(m.busy_ms > 0 && m.total_ms >= m.busy_ms && m.busy_ms >= m.irq_ms && m.irq_ms >= 0);
    CU_ASSERT(proc_cpu_count() >= 1);
    CU_ASSERT(proc_peak_rss_kb((int)getpid()) > 0);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a variable is read from another process's environment", test_environ_lookup },
        { "CPU time is read for a process and for the machine", test_cpu_time },
    };
    if (start_child() != 0) {
        stop_child();
        return 2;
    }
    int rc = CU_SUITE_RUN("bench_proc", NULL, NULL, tests);
    stop_child();
    return rc;
}
