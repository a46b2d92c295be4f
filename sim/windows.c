/* windows.c - the service's windows from the environment (see windows.h). */
#include "windows.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* A positive integer from the environment, or dflt; counts what was set. */
static long windows_env(const char *name, long dflt, int *set)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return dflt;
    errno = 0;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || n < 1)
        return dflt;
    (*set)++;
    return n;
}

static void windows_derive(sim_windows *w)
{
    long need = 2 * w->gateway_timeout_ms + 1000; /* pay.c: pay_claim_lease_ms */
    w->claim_ms = w->lease_ms > need ? w->lease_ms : need;
    w->notify_retry_ms = 1000;
}

void windows_defaults(sim_windows *w)
{
    w->gateway_timeout_ms = 3000;
    w->lease_ms = 10000;
    w->reconcile_ms = 2000;
    w->failed_recheck_ms = 60000;
    w->statement_ms = 300000;
    w->retry_after_s = 1;
    w->from_env = 0;
    windows_derive(w);
}

void windows_load(sim_windows *w)
{
    windows_defaults(w);
    int set = 0;
    w->gateway_timeout_ms = windows_env("IDEMPAY_GATEWAY_TIMEOUT_MS", w->gateway_timeout_ms, &set);
    w->lease_ms = windows_env("IDEMPAY_LEASE_MS", w->lease_ms, &set);
    w->reconcile_ms = windows_env("IDEMPAY_RECONCILE_INTERVAL_MS", w->reconcile_ms, &set);
    w->failed_recheck_ms = windows_env("IDEMPAY_FAILED_RECHECK_MS", w->failed_recheck_ms, &set);
    w->retry_after_s = windows_env("IDEMPAY_RETRY_AFTER", w->retry_after_s, &set);
    w->statement_ms = windows_env("IDEMPAY_STATEMENT_INTERVAL_MS", w->statement_ms, &set);
    w->from_env = set;
    windows_derive(w);
}

char *windows_describe(const sim_windows *w, char *out, size_t len)
{
    snprintf(out, len,
             "timeout=%ld lease=%ld reconcile=%ld recheck=%ld statement=%ld claim=%ld "
             "retry_after=%lds",
             w->gateway_timeout_ms, w->lease_ms, w->reconcile_ms, w->failed_recheck_ms,
             w->statement_ms, w->claim_ms, w->retry_after_s);
    return out;
}

long windows_settle_ms(const sim_windows *w)
{
    long recheck = w->lease_ms + w->failed_recheck_ms + 2 * w->reconcile_ms;
    long statement = w->statement_ms + 2 * w->reconcile_ms;
    return recheck > statement ? recheck : statement;
}
