/* main.c - idempay-sim: parses the command line (args.c) and runs the
 * simulator once (run.c: schedule -> preflight -> traffic -> settle ->
 * judge -> report), or, with --soak MINUTES, again and again with new seeds
 * until a run finds a violation or the time is up. Exit 0 every invariant
 * held, 1 a violation, 2 a run could not be carried out. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "clocks.h"
#include "profile.h"
#include "report.h"
#include "results.h"
#include "run.h"
#include "scenario_file.h"

static void sim_on_signal(int sig)
{
    (void)sig;
    sim_stop = 1;
}

/* Whether argv[*i] is a flag the replay command leaves out (--soak, and
 * --seed when soaking: each run prints its own); skips its value too. */
static int sim_replay_skip(int argc, char **argv, int *i, const sim_args *a)
{
    const char *s = argv[*i];
    int seed = a->soak_min > 0 && strncmp(s, "--seed", 6) == 0 && (s[6] == '\0' || s[6] == '=');
    int soak = strncmp(s, "--soak", 6) == 0 && (s[6] == '\0' || s[6] == '=');
    if (!seed && !soak)
        return 0;
    if (s[6] == '\0' && *i + 1 < argc)
        (*i)++;
    return 1;
}

static void sim_quote(FILE *f, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        if (strchr(" \t\n'\"\\$`*?[]{}()<>|&;!#~", *p))
            plain = 0;
    if (plain) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", f);
        else
            fputc(*p, f);
    }
    fputc('\'', f);
}

/* The command line that replays this run: argv (without --soak) plus
 * --seed when it was not given. malloc'd, NULL on OOM. */
static char *sim_replay_cmd(int argc, char **argv, const sim_args *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return NULL;
    for (int i = 0; i < argc; i++) {
        if (sim_replay_skip(argc, argv, &i, a))
            continue;
        if (i > 0)
            fputc(' ', f);
        sim_quote(f, argv[i]);
    }
    if (!a->seed_given || a->soak_min > 0)
        fprintf(f, " --seed %llu", (unsigned long long)a->seed);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int sim_run_once(sim_args *a, int argc, char **argv)
{
    char *replay = sim_replay_cmd(argc, argv, a);
    a->replay_cmd = replay;
    int rc = sim_run(a);
    a->replay_cmd = NULL;
    free(replay);
    return rc;
}

/* --soak: runs with new seeds (the first one --seed's, when given) until
 * one does not pass or the time is up. */
static int sim_soak(sim_args *a, int argc, char **argv)
{
    double t0 = clocks_mono_s();
    for (int n = 1;; n++) {
        if (n > 1) { /* the first run keeps the parsed (or given) seed and prefix */
            a->seed = args_entropy() >> 1;
            args_make_prefix(a->prefix);
        }
        fprintf(a->human, "soak: run %d, seed %llu\n", n, (unsigned long long)a->seed);
        fflush(a->human);
        int rc = sim_run_once(a, argc, argv);
        double min = (clocks_mono_s() - t0) / 60.0;
        if (rc != 0 || sim_stop) {
            fprintf(a->human, "soak: run %d (seed %llu) %s after %.1f min\n", n,
                    (unsigned long long)a->seed,
                    rc == 1   ? "found a violation"
                    : rc == 3 ? "failed a threshold"
                              : "could not be carried out",
                    min);
            return rc != 0 ? rc : 2;
        }
        if (min >= a->soak_min) {
            fprintf(a->human, "soak: %d run(s), every invariant held, %.1f min\n", n, min);
            return 0;
        }
    }
}

int main(int argc, char **argv)
{
    sim_args a;
    args_result parsed = args_parse(argc, argv, &a);
    if (parsed == ARGS_BAD) /* CI reads the verdict of a run that could not start too */
        report_result_line(args_stdout_reports(argc, argv) ? stderr : stdout, 2, NULL);
    if (parsed != ARGS_RUN)
        return parsed == ARGS_DONE ? 0 : 2;
    int rc;
    if (a.check_dir != NULL) { /* a saved run, judged again offline */
        rc = results_check(a.check_dir, a.max_witnesses);
        goto done;
    }
    /* the merchant door's caller (./stack writes its secret file) */
    if (profile_request_sign_from_env() < 0) {
        report_result_line(args_stdout_reports(argc, argv) ? stderr : stdout, 2, NULL);
        rc = 2;
        goto done;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = sim_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = a.soak_min > 0 ? sim_soak(&a, argc, argv) : sim_run_once(&a, argc, argv);
done:
    profile_free(a.profile);
    scenario_file_free(a.scenario_file);
    return rc;
}
