/* results.c - the run folder and --check (see results.h). */
#include "results.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "report_html.h"

const char *results_base(const char *out_opt, char *buf, size_t len)
{
    const char *state = env_str("IDEMPAY_STATE_DIR", "");
    if (out_opt != NULL && *out_opt != '\0')
        snprintf(buf, len, "%s", out_opt);
    else if (*state != '\0')
        snprintf(buf, len, "%s/runs", state);
    else
        snprintf(buf, len, "%s", RESULTS_DEFAULT_BASE);
    return buf;
}

/* mkdir -p path. Returns 0 or -1 (errno). */
static int results_mkdirs(const char *path)
{
    char p[4096];
    if ((size_t)snprintf(p, sizeof(p), "%s", path) >= sizeof(p)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

int results_create(const char *base, uint64_t seed, char *dir, size_t dirlen, char *err,
                   size_t errlen)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
    if (results_mkdirs(base) < 0) {
        snprintf(err, errlen, "cannot create %s: %s", base, strerror(errno));
        return -1;
    }
    for (int n = 1; n < 1000; n++) {
        char suffix[16] = "";
        if (n > 1)
            snprintf(suffix, sizeof(suffix), "-%d", n);
        if ((size_t)snprintf(dir, dirlen, "%s/%s-seed%llu%s", base, stamp, (unsigned long long)seed,
                             suffix) >= dirlen) {
            snprintf(err, errlen, "the results path under %s is too long", base);
            return -1;
        }
        if (mkdir(dir, 0755) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
    return -1;
}

static int results_human(const char *dir, const sim_report *r, size_t max_witnesses)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/report.txt", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    report_human(r, f, max_witnesses);
    return fclose(f) == 0 ? 0 : -1;
}

int results_write(const char *dir, const sim_report *r, const saved_run_meta *m,
                  size_t max_witnesses, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        int (*write)(const sim_report *, const char *);
    } files[] = { { "report.json", report_json },
                  { "junit.xml", report_junit },
                  { "history.jsonl", report_history },
                  { "report.html", report_html_write } };
    char path[4096];
    if (results_human(dir, r, max_witnesses) < 0) {
        snprintf(err, errlen, "cannot write %s/report.txt: %s", dir, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
        if (files[i].write(r, path) < 0) {
            snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
            return -1;
        }
    }
    return saved_run_write(dir, r, m, err, errlen);
}

int results_link_latest(const char *base, const char *dir, char *err, size_t errlen)
{
    char link[4096], tmp[4096];
    const char *name = strrchr(dir, '/');
    name = name != NULL ? name + 1 : dir;
    snprintf(link, sizeof(link), "%s/latest", base);
    snprintf(tmp, sizeof(tmp), "%s/.latest.%ld", base, (long)getpid());
    unlink(tmp);
    if (symlink(name, tmp) < 0 || rename(tmp, link) < 0) {
        snprintf(err, errlen, "cannot link %s to %s: %s", link, name, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int results_save(const char *out_opt, const sim_report *r, const saved_run_meta *m,
                 size_t max_witnesses)
{
    char base[2048], dir[4096], err[1024];
    results_base(out_opt, base, sizeof(base));
    if (results_create(base, r->seed, dir, sizeof(dir), err, sizeof(err)) < 0 ||
        results_write(dir, r, m, max_witnesses, err, sizeof(err)) < 0 ||
        results_link_latest(base, dir, err, sizeof(err)) < 0) {
        fprintf(stderr, "idempay-sim: results: %s\n", err);
        return -1;
    }
    fprintf(stderr, "results: %s (report.html; idempay-sim --check %s judges it again)\n", dir,
            dir);
    return 0;
}

/* The exit status of a saved run judged again: as run.c decides it. */
static int results_verdict(saved_run *s, const chk_result *chk, int checked)
{
    static char msg[128];
    if (checked && chk->total > 0)
        return 1;
    if (s->error != NULL)
        return 2;
    if (checked && chk->unreadable > 0) {
        snprintf(msg, sizeof(msg), "%zu order(s) could not be read at the end", chk->unreadable);
        s->rep.error = msg;
        return 2;
    }
    if (!checked && s->rep.error == NULL)
        s->rep.error = "the run could not be carried out";
    return checked ? 0 : 2;
}

int results_check(const char *dir, size_t max_witnesses)
{
    char err[1024];
    chk_result chk;
    int rc = 2, checked = 0;
    memset(&chk, 0, sizeof(chk));
    saved_run *s = calloc(1, sizeof(*s));
    if (s == NULL || saved_run_load(dir, s, err, sizeof(err)) < 0) {
        fprintf(stderr, "idempay-sim: --check %s: %s\n", dir, s ? err : "out of memory");
        goto out;
    }
    printf("seed: %llu\n", (unsigned long long)s->sched.seed);
    printf("schedule digest: %s\n", s->digest);
    printf("checking the run saved in %s (offline: the schedule rebuilt, digest matches)\n", dir);
    if (s->judged) {
        checked = checker_run(&s->sched, &s->obs, &chk) == 0;
        s->rep.chk = &chk;
        if (!checked)
            s->rep.error = "out of memory while checking";
    }
    rc = results_verdict(s, &chk, checked);
    s->rep.exit_code = rc;
    report_human(&s->rep, stdout, max_witnesses);
    fflush(stdout);
out:
    checker_result_free(&chk);
    saved_run_free(s);
    free(s);
    return rc;
}
