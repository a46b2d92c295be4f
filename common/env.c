/* env - configuration from IDEMPAY_* environment variables. */
#include "env.h"

#include <errno.h>
#include <stdlib.h>

const char *env_str(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return (v && *v) ? v : dflt;
}

long long env_int(const char *name, long long dflt)
{
    const char *v = getenv(name);
    char *end;
    long long n;

    if (!v || !*v)
        return dflt;
    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno || *end)
        return dflt;
    return n;
}

double env_double(const char *name, double dflt)
{
    const char *v = getenv(name);
    char *end;
    double d;

    if (!v || !*v)
        return dflt;
    errno = 0;
    d = strtod(v, &end);
    if (errno || *end)
        return dflt;
    return d;
}
