/* env - the programs' settings: IDEMPAY_* environment variables over a
 * KEY=value configuration file (/etc/idempay/idempay.conf by default).
 *
 * Precedence, highest first: the environment variable NAME; the file named by
 * the environment variable NAME_FILE (a secret kept out of the config file,
 * e.g. IDEMPAY_WX_KEY_FILE); NAME in the configuration file; the file named
 * by NAME_FILE in the configuration file; the caller's default. Secrets are
 * the settings whose NAME ends in _KEY or _PASSWORD; other *_FILE settings
 * (IDEMPAY_LOG_FILE, IDEMPAY_METRICS_FILE) are plain paths.
 *
 * The configuration file is IDEMPAY_CONFIG when set ("none": no file), else
 * IDEMPAY_DEFAULT_CONFIG (sysconfdir/idempay/idempay.conf), which may be
 * absent. Its syntax: one KEY=value per line, KEY an IDEMPAY_* name, blank
 * lines and lines starting with '#' ignored, spaces around KEY and value
 * trimmed, a value in matching single or double quotes taken literally. A
 * key set twice, a line without '=', a key that is not IDEMPAY_*, both NAME
 * and NAME_FILE set, or an unreadable secret file is an error.
 *
 * The file is read once, by env_config_load or by the first env_* call; the
 * values returned stay valid for the life of the process. */
#ifndef IDEMPAY_ENV_H
#define IDEMPAY_ENV_H

#include <stddef.h>

#define ENV_CONFIG_MAX_KEYS 256
#define ENV_CONFIG_MAX_LINE 4096

/* The variable's value, or dflt when unset or empty. */
const char *env_str(const char *name, const char *dflt);
/* The variable as a decimal integer, or dflt when unset, empty or not a number. */
long long env_int(const char *name, long long dflt);
/* The variable as a number, or dflt when unset, empty or not a number. */
double env_double(const char *name, double dflt);

/* Reads the configuration file and the secret files once (later calls return
 * the first result). Returns 0, or -1 with the reason (file:line: what) in
 * err. The env_* getters call it themselves; when it fails there, the message
 * goes to stderr and the process exits with status 2: a payment program must
 * not run on half a configuration. Thread-safe. */
int env_config_load(char *err, size_t errlen);
/* The configuration file that was read, or NULL when none was. */
const char *env_config_path(void);
/* Where name's effective value comes from: "environment", "environment
 * NAME_FILE", "config file", "config file NAME_FILE", or NULL (unset: the
 * caller's default applies). */
const char *env_source(const char *name);
/* The keys set in the configuration file, in file order: the i-th, or NULL
 * past the end. For --check-config's warnings about unknown keys. */
const char *env_config_key(size_t i);
/* Forgets everything loaded, so the next call reads IDEMPAY_CONFIG again.
 * For unit tests only: not thread-safe, and invalidates returned values. */
void env_config_reset(void);

#endif
