/* env - IDEMPAY_* settings: the environment over a KEY=value file, with
 * NAME_FILE secrets. Loaded once; entries are never changed afterwards. */
#include "env.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef IDEMPAY_DEFAULT_CONFIG
#define IDEMPAY_DEFAULT_CONFIG "/etc/idempay/idempay.conf"
#endif
#define SECRET_MAX 4096

typedef struct {
    char *key;
    char *value;
    const char *source; /* static text: see env_source */
} env_entry;

static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int env_loaded;
static int env_load_rc;
static char env_load_err[512];
static char *env_path;                           /* the file read, or NULL */
static env_entry file_keys[ENV_CONFIG_MAX_KEYS]; /* as written in the file */
static size_t n_file_keys;
static env_entry resolved[ENV_CONFIG_MAX_KEYS * 2]; /* effective non-environment values */
static size_t n_resolved;

static env_entry *find(env_entry *tab, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(tab[i].key, key))
            return &tab[i];
    return NULL;
}

static int valid_key(const char *k)
{
    if (strncmp(k, "IDEMPAY_", 8) || !k[8])
        return 0;
    for (const char *p = k; *p; p++)
        if (!(isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
            return 0;
    return 1;
}

static char *trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
        *--e = '\0';
    return s;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !strcmp(s + n - k, suffix);
}

/* 1 when k names a secret's file: NAME_FILE with NAME ending in _KEY or
 * _PASSWORD (IDEMPAY_WX_KEY_FILE, IDEMPAY_DB_PASSWORD_FILE), unlike
 * IDEMPAY_LOG_FILE or IDEMPAY_METRICS_FILE, which are paths themselves. */
static int ends_with_file(const char *k)
{
    char name[256];
    size_t n = strlen(k);

    if (n <= 5 || n - 5 >= sizeof(name) || !ends_with(k, "_FILE"))
        return 0;
    memcpy(name, k, n - 5);
    name[n - 5] = '\0';
    return ends_with(name, "_KEY") || ends_with(name, "_PASSWORD");
}

/* Reads the secret in path: its first line without trailing blanks. Returns
 * a malloc'd string, or NULL with err set. */
static char *read_secret(const char *path, const char *what, char *err, size_t errlen)
{
    char buf[SECRET_MAX + 2];
    FILE *f = fopen(path, "re");
    size_t n;
    char *nl;

    if (!f) {
        snprintf(err, errlen, "%s: cannot read %s: %s", what, path, strerror(errno));
        return NULL;
    }
    n = fread(buf, 1, SECRET_MAX + 1, f);
    fclose(f);
    if (n > SECRET_MAX) {
        snprintf(err, errlen, "%s: %s is longer than %d bytes", what, path, SECRET_MAX);
        return NULL;
    }
    buf[n] = '\0';
    nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
    nl = trim(buf);
    if (!*nl) {
        snprintf(err, errlen, "%s: %s is empty", what, path);
        return NULL;
    }
    return strdup(nl);
}

static int add(env_entry *tab, size_t *n, size_t cap, const char *key, char *value,
               const char *source)
{
    char *k = strdup(key);

    if (*n >= cap || !k) {
        free(k);
        free(value);
        return -1;
    }
    tab[*n].key = k;
    tab[*n].value = value;
    tab[*n].source = source;
    (*n)++;
    return 0;
}

/* Parses the file at path into file_keys. Returns 0, or -1 with err set. */
static int parse_file(FILE *f, const char *path, char *err, size_t errlen)
{
    char line[ENV_CONFIG_MAX_LINE + 2];
    int lineno = 0;

    while (fgets(line, sizeof(line), f)) {
        char *s, *eq, *key, *val;
        size_t vl;

        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%d: line longer than %d characters", path, lineno,
                     ENV_CONFIG_MAX_LINE);
            return -1;
        }
        s = trim(line);
        if (!*s || *s == '#')
            continue;
        eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected KEY=value", path, lineno);
            return -1;
        }
        *eq = '\0';
        key = trim(s);
        val = trim(eq + 1);
        if (!valid_key(key)) {
            snprintf(err, errlen, "%s:%d: \"%.64s\" is not an IDEMPAY_* setting", path, lineno,
                     key);
            return -1;
        }
        vl = strlen(val);
        if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) {
            val[vl - 1] = '\0';
            val++;
        }
        if (find(file_keys, n_file_keys, key)) {
            snprintf(err, errlen, "%s:%d: %s is set twice", path, lineno, key);
            return -1;
        }
        if (add(file_keys, &n_file_keys, ENV_CONFIG_MAX_KEYS, key, strdup(val), "config file") !=
            0) {
            snprintf(err, errlen, "%s:%d: more than %d settings, or out of memory", path, lineno,
                     ENV_CONFIG_MAX_KEYS);
            return -1;
        }
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        return -1;
    }
    return 0;
}

/* Builds `resolved` from the environment's NAME_FILE variables and the file. */
static int resolve(char *err, size_t errlen)
{
    extern char **environ;
    char name[256];

    /* NAME_FILE in the environment (unless NAME itself is set there) */
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t kl = eq ? (size_t)(eq - *e) : 0;
        char *secret;

        if (!eq || kl >= sizeof(name) || strncmp(*e, "IDEMPAY_", 8))
            continue;
        memcpy(name, *e, kl);
        name[kl] = '\0';
        if (!ends_with_file(name) || !eq[1])
            continue;
        name[kl - 5] = '\0';
        if (getenv(name) && *getenv(name))
            continue;
        {
            char what[300];
            snprintf(what, sizeof(what), "%s_FILE (environment)", name);
            secret = read_secret(eq + 1, what, err, errlen);
        }
        if (!secret || add(resolved, &n_resolved, ENV_CONFIG_MAX_KEYS * 2, name, secret,
                           "environment NAME_FILE") != 0)
            return -1;
    }
    /* the file's own settings */
    for (size_t i = 0; i < n_file_keys; i++) {
        const char *k = file_keys[i].key;
        char *v;

        if (ends_with_file(k)) {
            size_t kl = strlen(k) - 5;
            if (kl >= sizeof(name))
                continue;
            memcpy(name, k, kl);
            name[kl] = '\0';
            if (find(file_keys, n_file_keys, name)) {
                snprintf(err, errlen, "%s: both %s and %s are set", env_path, name, k);
                return -1;
            }
            if (find(resolved, n_resolved, name) || (getenv(name) && *getenv(name)) ||
                !file_keys[i].value[0])
                continue; /* the environment decides */
            {
                char what[300];
                snprintf(what, sizeof(what), "%s (%s)", k, env_path);
                v = read_secret(file_keys[i].value, what, err, errlen);
            }
            if (!v || add(resolved, &n_resolved, ENV_CONFIG_MAX_KEYS * 2, name, v,
                          "config file NAME_FILE") != 0)
                return -1;
        }
        if (find(resolved, n_resolved, k))
            continue;
        v = strdup(file_keys[i].value);
        if (!v || add(resolved, &n_resolved, ENV_CONFIG_MAX_KEYS * 2, k, v, "config file") != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

static int load_locked(char *err, size_t errlen)
{
    const char *path = getenv("IDEMPAY_CONFIG");
    int explicit = path && *path;
    FILE *f;

    if (!explicit)
        path = IDEMPAY_DEFAULT_CONFIG;
    if (!strcmp(path, "none"))
        return resolve(err, errlen);
    f = fopen(path, "re");
    if (!f) {
        if (!explicit && errno == ENOENT)
            return resolve(err, errlen); /* no file installed: environment only */
        snprintf(err, errlen, "config file %s: %s", path, strerror(errno));
        return -1;
    }
    env_path = strdup(path);
    if (!env_path || parse_file(f, path, err, errlen) != 0) {
        if (!env_path)
            snprintf(err, errlen, "out of memory");
        fclose(f);
        return -1;
    }
    fclose(f);
    return resolve(err, errlen);
}

int env_config_load(char *err, size_t errlen)
{
    if (!atomic_load(&env_loaded)) {
        pthread_mutex_lock(&env_lock);
        if (!atomic_load(&env_loaded)) {
            env_load_rc = load_locked(env_load_err, sizeof(env_load_err));
            atomic_store(&env_loaded, 1);
        }
        pthread_mutex_unlock(&env_lock);
    }
    if (env_load_rc != 0 && err && errlen)
        snprintf(err, errlen, "%s", env_load_err);
    return env_load_rc;
}

static void ensure_loaded(void)
{
    if (env_config_load(NULL, 0) != 0) {
        fprintf(stderr, "idempay: configuration: %s\n", env_load_err);
        exit(2);
    }
}

const char *env_config_path(void)
{
    ensure_loaded();
    return env_path;
}

const char *env_config_key(size_t i)
{
    ensure_loaded();
    return i < n_file_keys ? file_keys[i].key : NULL;
}

const char *env_source(const char *name)
{
    const char *v = getenv(name);
    env_entry *e;

    if (v && *v)
        return "environment";
    ensure_loaded();
    e = find(resolved, n_resolved, name);
    return e && e->value[0] ? e->source : NULL;
}

static const char *lookup(const char *name)
{
    const char *v = getenv(name);
    env_entry *e;

    if (v && *v)
        return v;
    ensure_loaded();
    e = find(resolved, n_resolved, name);
    return e && e->value[0] ? e->value : NULL;
}

void env_config_reset(void)
{
    for (size_t i = 0; i < n_file_keys; i++) {
        free(file_keys[i].key);
        free(file_keys[i].value);
    }
    for (size_t i = 0; i < n_resolved; i++) {
        free(resolved[i].key);
        free(resolved[i].value);
    }
    n_file_keys = n_resolved = 0;
    free(env_path);
    env_path = NULL;
    env_load_rc = 0;
    env_load_err[0] = '\0';
    atomic_store(&env_loaded, 0);
}

const char *env_str(const char *name, const char *dflt)
{
    const char *v = lookup(name);
    return v ? v : dflt;
}

long long env_int(const char *name, long long dflt)
{
    const char *v = lookup(name);
    char *end;
    long long n;

    if (!v)
        return dflt;
    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno || *end)
        return dflt;
    return n;
}

double env_double(const char *name, double dflt)
{
    const char *v = lookup(name);
    char *end;
    double d;

    if (!v)
        return dflt;
    errno = 0;
    d = strtod(v, &end);
    if (errno || *end)
        return dflt;
    return d;
}
