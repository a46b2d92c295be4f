/* service_windows.c - the service's windows, defined once (see
 * service_windows.h): one table of setting, default and field. */
#include "service_windows.h"

#include <stddef.h>

#include "env.h"

static const struct {
    const char *name;
    long dflt;
    size_t offset;
} windows[] = {
    { "IDEMPAY_GATEWAY_TIMEOUT_MS", 3000, offsetof(service_windows, gateway_timeout_ms) },
    { "IDEMPAY_LEASE_MS", 10000, offsetof(service_windows, lease_ms) },
    { "IDEMPAY_RECONCILE_INTERVAL_MS", 2000, offsetof(service_windows, reconcile_interval_ms) },
    { "IDEMPAY_FAILED_RECHECK_MS", 60000, offsetof(service_windows, failed_recheck_ms) },
    { "IDEMPAY_STATEMENT_INTERVAL_MS", 300000, offsetof(service_windows, statement_interval_ms) },
    { "IDEMPAY_RETRY_AFTER", 1, offsetof(service_windows, retry_after_s) },
    { "IDEMPAY_PREPAY_TTL_MS", 7200000, offsetof(service_windows, prepay_ttl_ms) },
};
#define NWINDOWS (sizeof(windows) / sizeof(windows[0]))

static long *window_field(service_windows *w, size_t i)
{
    return (long *)(void *)((char *)w + windows[i].offset);
}

void service_windows_defaults(service_windows *w)
{
    for (size_t i = 0; i < NWINDOWS; i++)
        *window_field(w, i) = windows[i].dflt;
}

int service_windows_load(service_windows *w)
{
    int set = 0;

    for (size_t i = 0; i < NWINDOWS; i++) {
        *window_field(w, i) = (long)env_int(windows[i].name, windows[i].dflt);
        if (env_source(windows[i].name) != NULL)
            set++;
    }
    return set;
}

const char *service_windows_setting(int i)
{
    return i >= 0 && (size_t)i < NWINDOWS ? windows[i].name : NULL;
}

long service_windows_call_ms(long gateway_timeout_ms)
{
    return SERVICE_GATEWAY_CALLS_PER_REQUEST * gateway_timeout_ms + SERVICE_WINDOW_SLACK_MS;
}

long service_windows_claim_ms(long lease_ms, long gateway_timeout_ms)
{
    long need = service_windows_call_ms(gateway_timeout_ms);
    return lease_ms > need ? lease_ms : need;
}

long service_windows_lease_min_ms(long gateway_timeout_ms)
{
    return SERVICE_GATEWAY_CALLS_PER_LEASE * gateway_timeout_ms + SERVICE_WINDOW_SLACK_MS;
}
