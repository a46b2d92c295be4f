/* proc.c - the stack's processes, their CPU time and environment, read
 * from /proc (see proc.h). */
#include "proc.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const proc_role_names[PROC_ROLE_COUNT] = { "service", "lighttpd", "mariadb",
                                                              "mock",    "redis",    "bench" };

const char *proc_role_name(proc_role r)
{
    return r < PROC_ROLE_COUNT ? proc_role_names[r] : "?";
}

static void proc_add(proc_set *set, proc_role r, int pid)
{
    if (pid > 0 && set->n[r] < PROC_MAX_PER_ROLE)
        set->pid[r][set->n[r]++] = pid;
}

/* The live pid recorded in state_dir/run/name.pid, or 0. */
static int proc_pid_file(const char *state_dir, const char *name)
{
    char path[1024], proc_dir[64];
    FILE *f;
    int pid = 0;

    snprintf(path, sizeof(path), "%s/run/%s.pid", state_dir, name);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    if (fscanf(f, "%d", &pid) != 1)
        pid = 0;
    fclose(f);
    snprintf(proc_dir, sizeof(proc_dir), "/proc/%d", pid);
    return pid > 0 && access(proc_dir, F_OK) == 0 ? pid : 0;
}

/* The fields of /proc/pid/stat after "(comm)": *rest points at the state
 * letter. Returns 0 or -1. comm may hold spaces and parentheses, so the
 * last ')' ends it. */
static int proc_stat_line(int pid, char *buf, size_t cap, const char **rest)
{
    char path[64];
    FILE *f;
    size_t n;
    char *close;

    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    close = strrchr(buf, ')');
    if (close == NULL || close[1] != ' ')
        return -1;
    *rest = close + 2;
    return 0;
}

/* The basename of pid's argv[0] into out[cap]; "" when unreadable. */
static void proc_program(int pid, char *out, size_t cap)
{
    char path[64], buf[512];
    FILE *f;
    size_t n;
    const char *base;

    out[0] = '\0';
    snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    base = strrchr(buf, '/');
    snprintf(out, cap, "%.*s", (int)cap - 1, base ? base + 1 : buf);
}

void proc_discover(const char *state_dir, proc_set *set)
{
    int lighttpd;
    DIR *d;
    struct dirent *e;

    memset(set, 0, sizeof(*set));
    lighttpd = proc_pid_file(state_dir, "lighttpd");
    proc_add(set, PROC_LIGHTTPD, lighttpd);
    proc_add(set, PROC_MARIADB, proc_pid_file(state_dir, "mariadb"));
    proc_add(set, PROC_REDIS, proc_pid_file(state_dir, "redis"));
    proc_add(set, PROC_BENCH, (int)getpid());
    if (lighttpd == 0)
        return;
    d = opendir("/proc");
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        char buf[1024], prog[256];
        const char *rest;
        int pid, ppid;
        char state;

        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid = atoi(e->d_name);
        if (proc_stat_line(pid, buf, sizeof(buf), &rest) != 0 ||
            sscanf(rest, "%c %d", &state, &ppid) != 2 || ppid != lighttpd)
            continue;
        proc_program(pid, prog, sizeof(prog));
        if (strcmp(prog, "idempay-fcgi") == 0)
            proc_add(set, PROC_SERVICE, pid);
        else if (strcmp(prog, "idempay-gateway-mock") == 0)
            proc_add(set, PROC_MOCK, pid);
    }
    closedir(d);
}

double proc_cpu_ms(int pid)
{
    char buf[1024];
    const char *rest;
    unsigned long utime, stime;
    long hz = sysconf(_SC_CLK_TCK);

    if (proc_stat_line(pid, buf, sizeof(buf), &rest) != 0 || hz <= 0)
        return -1;
    /* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
     * cmajflt utime stime */
    if (sscanf(rest, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
        return -1;
    return (double)(utime + stime) * 1000.0 / (double)hz;
}

int proc_environ_get(int pid, const char *name, char *out, size_t cap)
{
    char path[64];
    char *buf = NULL;
    size_t len = 0, name_len = strlen(name);
    FILE *f;
    int found = 0;

    snprintf(path, sizeof(path), "/proc/%d/environ", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    /* NUL-separated NAME=value entries; read it whole (bounded). */
    buf = malloc(1 << 20);
    if (buf == NULL) {
        fclose(f);
        return -1;
    }
    len = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[len] = '\0';
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
        if (strncmp(buf + i, name, name_len) == 0 && buf[i + name_len] == '=') {
            snprintf(out, cap, "%s", buf + i + name_len + 1);
            found = 1;
            break;
        }
    }
    /* the buffer may hold secrets: do not leave them in freed memory */
    memset(buf, 0, len);
    free(buf);
    return found;
}

long proc_peak_rss_kb(int pid)
{
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

int proc_machine_cpu_ms(proc_machine *out)
{
    unsigned long long v[8] = { 0 }, total = 0;
    long hz = sysconf(_SC_CLK_TCK);
    FILE *f = fopen("/proc/stat", "r");
    int n;

    if (f == NULL || hz <= 0) {
        if (f)
            fclose(f);
        return -1;
    }
    n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 5)
        return -1;
    for (int i = 0; i < 8; i++)
        total += v[i];
    /* user nice system idle iowait irq softirq steal */
    out->total_ms = (double)total * 1000.0 / (double)hz;
    out->busy_ms = (double)(total - v[3] - v[4]) * 1000.0 / (double)hz;
    out->irq_ms = (double)(v[5] + v[6]) * 1000.0 / (double)hz;
    return 0;
}

double proc_loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");

    if (f == NULL)
        return -1;
    if (fscanf(f, "%lf", &l) != 1)
        l = -1;
    fclose(f);
    return l;
}

int proc_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
