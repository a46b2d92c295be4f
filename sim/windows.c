/* windows.c - the service's windows as the service reads them (see
 * windows.h): common/service_windows, never a second copy of its defaults
 * (nor of the mock's retry step: common/mock_knobs). */
#include "windows.h"

#include <stdio.h>

#include "mock_knobs.h"
#include "service_windows.h"

static void windows_derive(sim_windows *w)
{
    w->claim_ms = service_windows_claim_ms(w->lease_ms, w->gateway_timeout_ms);
    w->service_call_ms = service_windows_call_ms(w->gateway_timeout_ms);
    w->notify_retry_ms = (long)mock_knob_of("notify_retry_ms")->dflt;
}

/* v when it is a usable window (>= 1), else the service's default dflt. */
static long windows_positive(long v, long dflt)
{
    return v >= 1 ? v : dflt;
}

static void windows_from(sim_windows *w, const service_windows *s, const service_windows *dflt)
{
    w->gateway_timeout_ms = windows_positive(s->gateway_timeout_ms, dflt->gateway_timeout_ms);
    w->lease_ms = windows_positive(s->lease_ms, dflt->lease_ms);
    w->reconcile_ms = windows_positive(s->reconcile_interval_ms, dflt->reconcile_interval_ms);
    w->failed_recheck_ms = windows_positive(s->failed_recheck_ms, dflt->failed_recheck_ms);
    w->statement_ms = windows_positive(s->statement_interval_ms, dflt->statement_interval_ms);
    w->retry_after_s = windows_positive(s->retry_after_s, dflt->retry_after_s);
    windows_derive(w);
}

void windows_defaults(sim_windows *w)
{
    service_windows dflt;

    service_windows_defaults(&dflt);
    windows_from(w, &dflt, &dflt);
    w->from_env = 0;
}

void windows_load(sim_windows *w)
{
    service_windows dflt, s;

    service_windows_defaults(&dflt);
    int set = service_windows_load(&s);
    windows_from(w, &s, &dflt);
    w->from_env = set;
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

long windows_recheck_settle_ms(const sim_windows *w)
{
    return w->lease_ms + w->failed_recheck_ms + 2 * w->reconcile_ms;
}

long windows_settle_ms(const sim_windows *w)
{
    long recheck = windows_recheck_settle_ms(w);
    long statement = w->statement_ms + 2 * w->reconcile_ms;
    return recheck > statement ? recheck : statement;
}
