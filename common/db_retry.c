/* db_retry.c - the retry decision, the pause between tries and the loop. */
#include "db_retry.h"

#include <stdlib.h>
#include <string.h>

#include "clocks.h"
#include "db_conn.h"

/* May the failure of try number tries be cured by another? */
static bool db_retry_transient(const db_retry_policy *p, int tries, db_try_status status,
                               const db_try_report *r)
{
    if (status == DB_TRY_AGAIN)
        return true;
    if (r->lost || db_conn_lost(r->err_no))
        return !r->write_sent && tries < p->max_lost_tries;
    return p->retry_any || db_conn_retryable(r->err_no);
}

bool db_retry_next(const db_retry_policy *p, int tries, db_try_status status,
                   const db_try_report *report)
{
    long long ms;

    if (status == DB_TRY_DONE || tries >= p->max_tries ||
        !db_retry_transient(p, tries, status, report))
        return false;
    ms = p->pause_base_ms + (long long)p->pause_step_ms * tries;
    if (p->pause_jitter_ms > 0)
        ms += rand() % p->pause_jitter_ms; /* spreads colliding retries; not security relevant */
    if (ms > 0)
        (p->sleep_ms != NULL ? p->sleep_ms : clocks_sleep_ms)(ms);
    return true;
}

int db_run(const db_retry_policy *p, db_try_fn try_once, void *arg, db_try_report *last)
{
    db_try_report r;
    db_try_status s;
    int tries = 0;

    do {
        memset(&r, 0, sizeof(r));
        s = try_once(arg, &r);
        tries++;
    } while (db_retry_next(p, tries, s, &r));
    if (last != NULL)
        *last = r;
    return s == DB_TRY_DONE ? 0 : -1;
}
