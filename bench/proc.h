/* proc - what the bench reads from /proc about the stack it measures: the
 * running programs (from ./stack's pid files and lighttpd's children), their
 * CPU time, one variable of their environment (the merchant key the service
 * really uses), peak memory, and the whole machine's CPU and load.
 *
 * Nothing here writes anywhere; a value that cannot be read is reported as
 * such (-1 or 0 found), never guessed. */
#ifndef IDEMPAY_BENCH_PROC_H
#define IDEMPAY_BENCH_PROC_H

#include <stddef.h>

/* The processes whose CPU the bench charges to each request. */
typedef enum {
    PROC_SERVICE = 0, /* idempay-fcgi, every FastCGI process of the service */
    PROC_LIGHTTPD,    /* the one lighttpd serving both fronts (service and mock) */
    PROC_MARIADB,
    PROC_MOCK, /* idempay-gateway-mock */
    PROC_REDIS,
    PROC_BENCH, /* this program */
    PROC_ROLE_COUNT
} proc_role;

#define PROC_MAX_PER_ROLE 16

typedef struct {
    int pid[PROC_ROLE_COUNT][PROC_MAX_PER_ROLE];
    int n[PROC_ROLE_COUNT];
} proc_set;

/* The role's short name ("service", "lighttpd", ...). */
const char *proc_role_name(proc_role r);

/* Fills *set with the stack's processes: lighttpd, mariadb and redis from
 * the pid files in state_dir/run, the service and the mock among
 * lighttpd's children, and this process. A component that is not running
 * has n == 0. Never fails. */
void proc_discover(const char *state_dir, proc_set *set);

/* CPU time (user + system, all threads) of pid in milliseconds, or -1
 * when the process is gone or unreadable. */
double proc_cpu_ms(int pid);

/* Looks up name in /proc/pid/environ. Returns 1 with the value in
 * out[cap] (cut to fit), 0 when the process has no such variable, -1 when
 * its environment cannot be read. */
int proc_environ_get(int pid, const char *name, char *out, size_t cap);

/* VmHWM of pid in KiB, or -1. */
long proc_peak_rss_kb(int pid);

/* CPU time of the whole machine since boot, in milliseconds (all CPUs):
 * busy (everything but idle and iowait), of which irq (hardware and soft
 * interrupts: loopback networking, disk completions - work done for
 * whichever process, charged to none), and total. 0 or -1. */
typedef struct {
    double busy_ms, irq_ms, total_ms;
} proc_machine;
int proc_machine_cpu_ms(proc_machine *out);

/* The 1-minute load average, or -1. */
double proc_loadavg(void);

/* Online CPUs. */
int proc_cpu_count(void);

#endif
