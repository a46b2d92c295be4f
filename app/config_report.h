/* config_report - `idempay-fcgi --check-config`: the effective settings of
 * the service, each with where it came from (environment, config file,
 * secret file, default), secrets masked, and warnings about keys in the
 * config file that no idempay program reads. Knows nothing of FastCGI. */
#ifndef IDEMPAY_CONFIG_REPORT_H
#define IDEMPAY_CONFIG_REPORT_H

#include <stdio.h>
#include "config.h"

/* Writes one "KEY=value  # source" line per setting of c (already loaded and
 * valid) and of the database connection and logging into out, secrets
 * masked; warnings into err. drain_ms is the shutdown bound main uses.
 * Returns the number of warnings. */
int config_report_print(const app_config *c, long drain_ms, FILE *out, FILE *err);

/* "<masked, N characters>" for a secret into buf. Returns buf. */
char *config_report_mask(const char *secret, char *buf, size_t buflen);

#endif
