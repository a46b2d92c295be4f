/* env - configuration from IDEMPAY_* environment variables. */
#ifndef IDEMPAY_ENV_H
#define IDEMPAY_ENV_H

/* The variable's value, or dflt when unset or empty. */
const char *env_str(const char *name, const char *dflt);
/* The variable as a decimal integer, or dflt when unset, empty or not a number. */
long long env_int(const char *name, long long dflt);
/* The variable as a number, or dflt when unset, empty or not a number. */
double env_double(const char *name, double dflt);

#endif
