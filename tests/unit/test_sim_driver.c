/* test_sim_driver.c - CUnit suite for the simulator's driver: parsing the
 * service's order bodies (the checker's final reads), the worker pool
 * running every index of a job exactly once, and a driver that runs a
 * segment without a reachable target records every client operation with
 * an unknown outcome and finishes (no hang, no crash). */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>

#include "driver.h"
#include "pool.h"
#include "readback.h"
#include "http_client.h"
#include "rng.h"
#include "schedule.h"

static void test_parse_order(void)
{
    sim_row r;
    const char *paid =
        "{\"order_no\":\"x\",\"user_id\":42,\"amount\":\"12.30\",\"status\":\"PAID\","
        "\"transaction_id\":\"T9\",\"created_at\":\"a\",\"updated_at\":\"b\"}";
    CU_ASSERT_EQUAL(readback_parse_order(paid, strlen(paid), &r), 0);
    CU_ASSERT_EQUAL(r.state, ROW_PRESENT);
    CU_ASSERT_EQUAL(r.status, OST_PAID);
    CU_ASSERT_EQUAL(r.user_id, 42);
    CU_ASSERT_EQUAL(r.amount_fen, 1230);
    CU_ASSERT_STRING_EQUAL(r.transaction_id, "T9");
    CU_ASSERT_STRING_EQUAL(r.updated_at, "b");
    const char *pending =
        "{\"user_id\":9223372036854775807,\"amount\":\"0.01\",\"status\":\"PROCESSING\","
        "\"transaction_id\":null}";
    CU_ASSERT_EQUAL(readback_parse_order(pending, strlen(pending), &r), 0);
    CU_ASSERT_EQUAL(r.status, OST_PROCESSING);
    CU_ASSERT_EQUAL(r.user_id, INT64_MAX);
    CU_ASSERT_EQUAL(r.amount_fen, 1);
    CU_ASSERT_STRING_EQUAL(r.transaction_id, "");
    const char *bad[] = { "", "[]", "{\"status\":\"WEIRD\"}", "{\"amount\":\"1\"}", "{" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CU_ASSERT_EQUAL(readback_parse_order(bad[i], strlen(bad[i]), &r), -1);
        CU_ASSERT_EQUAL(r.state, ROW_ERROR);
    }
    /* An unparseable amount is kept as unknown (-1), not as zero. */
    const char *odd = "{\"user_id\":1,\"amount\":\"12.345\",\"status\":\"FAILED\"}";
    CU_ASSERT_EQUAL(readback_parse_order(odd, strlen(odd), &r), 0);
    CU_ASSERT_EQUAL(r.amount_fen, -1);
}

#define POOL_N 5000
#define POOL_WORKERS 4

typedef struct {
    atomic_int runs[POOL_N];
    atomic_int bad_worker;
} pool_job;

static void pool_count(int worker, size_t i, void *arg)
{
    pool_job *job = arg;
    if (worker < 0 || worker >= POOL_WORKERS)
        atomic_fetch_add(&job->bad_worker, 1);
    atomic_fetch_add(&job->runs[i], 1);
}

/* Every index of each job runs once, on a worker of the pool, and a job
 * is over when pool_run returns; an empty job returns at once. */
static void test_pool_every_index_once(void)
{
    static pool_job job;
    char err[128];
    sim_pool *p = pool_new(POOL_WORKERS, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(pool_size(p), POOL_WORKERS);
    for (int round = 1; round <= 3; round++) {
        pool_run(p, POOL_N, pool_count, &job);
        int wrong = 0;
        for (size_t i = 0; i < POOL_N; i++)
            wrong += atomic_load(&job.runs[i]) != round;
        CU_ASSERT_EQUAL(wrong, 0);
    }
    pool_run(p, 0, pool_count, &job);
    CU_ASSERT_EQUAL(atomic_load(&job.runs[0]), 3);
    CU_ASSERT_EQUAL(atomic_load(&job.bad_worker), 0);
    pool_free(p);
    pool_free(NULL);
}

static int phases_seen;

static int on_phase(void *arg, size_t phase)
{
    (void)arg;
    (void)phase;
    phases_seen++;
    return 0;
}

static void test_segment_against_nothing(void)
{
    rng_t r;
    rng_seed(&r, 1);
    sim_schedule s;
    sched_init(&s, 1);
    CU_ASSERT_EQUAL_FATAL(sched_begin_phase(&s, SC_DOUBLE_CLICK, "a", "{}", 50, 0), 0);
    for (int i = 0; i < 6; i++) {
        int o = sched_add_order(&s, &r, SC_DOUBLE_CLICK, 1 + i, 100 + i, AMT_SHORT, 0);
        sched_task *t = sched_add_task(&s, TASK_PAY);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        t->order = o;
        t->max_attempts = 2;
        t->timeout_ms = 500;
        t->backoff_ms = 1;
        t->patience_ms = 1000;
        t->start_ms = (uint32_t)i * 5;
    }
    CU_ASSERT_EQUAL_FATAL(sched_begin_phase(&s, SC_DOUBLE_CLICK, "b", "{}", 50, 0), 0);
    sched_add_token(&s, SC_DOUBLE_CLICK, 7);
    sched_mark_barriers(&s);
    CU_ASSERT_EQUAL_FATAL(http_client_global_init(), 0);
    char err[256];
    volatile int stop = 0;
    driver_config cfg = { .target = "http://127.0.0.1:1",
                          .prefix = "u",
                          .sched = &s,
                          .workers = 3,
                          .appid = "a",
                          .mch_id = "m",
                          .key = "k",
                          .stop = &stop };
    driver *d = driver_new(&cfg, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    phases_seen = 0;
    driver_run_segment(d, 0, 2, on_phase, NULL);
    CU_ASSERT_EQUAL(phases_seen, 2);
    CU_ASSERT(driver_phase_start_us(d, 1) >= driver_phase_start_us(d, 0));
    sim_history h;
    history_init(&h);
    sim_report rep;
    report_init(&rep);
    CU_ASSERT_EQUAL(driver_collect(d, &h, &rep), 0);
    /* 6 orders x 2 POSTs, and 3 token attempts: all without an answer. */
    size_t pays = 0, tokens = 0;
    for (size_t i = 0; i < h.n; i++) {
        CU_ASSERT_EQUAL(h.op[i].outcome, OUT_UNKNOWN);
        CU_ASSERT_EQUAL(h.op[i].http_code, 0);
        CU_ASSERT(h.op[i].end_us >= h.op[i].start_us);
        pays += h.op[i].kind == OP_PAY;
        tokens += h.op[i].kind == OP_TOKEN;
    }
    CU_ASSERT_EQUAL(pays, 12);
    CU_ASSERT_EQUAL(tokens, 3);
    CU_ASSERT_EQUAL(rep.requests[SC_DOUBLE_CLICK][OP_PAY][OUT_UNKNOWN], 12);
    CU_ASSERT_EQUAL(rep.latency[OP_PAY].count, 12);
    driver_progress_t p;
    driver_progress(d, &p);
    CU_ASSERT_EQUAL(p.tasks_done, 6);
    CU_ASSERT_EQUAL(p.tasks_total, 6);
    history_free(&h);
    driver_free(d);
    sched_free(&s);
}

int main(void)
{
    static const cu_test tests[] = {
        { "order bodies parse into what the client saw", test_parse_order },
        { "pool runs every index once", test_pool_every_index_once },
        { "a segment against a closed port records refusals", test_segment_against_nothing },
    };
    return CU_SUITE_RUN("sim_driver", NULL, NULL, tests);
}
