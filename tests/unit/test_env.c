/* test_env.c - CUnit suite for env: the config file's syntax, precedence
 * (environment > NAME_FILE > file), secret files, and every error. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"

static char dir[] = "/tmp/idempay-test-env.XXXXXX";

static void write_file(const char *name, const char *text)
{
    char p[256];
    FILE *f;

    snprintf(p, sizeof(p), "%s/%s", dir, name);
    f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* Loads dir/name as the config file; returns env_config_load's result. */
static int load(const char *name, char *err, size_t errlen)
{
    char p[256];

    snprintf(p, sizeof(p), "%s/%s", dir, name);
    setenv("IDEMPAY_CONFIG", p, 1);
    env_config_reset();
    return env_config_load(err, errlen);
}

static void clear_env(void)
{
    unsetenv("IDEMPAY_TEST_A");
    unsetenv("IDEMPAY_TEST_KEY");
    unsetenv("IDEMPAY_TEST_KEY_FILE");
    unsetenv("IDEMPAY_TEST_PASSWORD");
    unsetenv("IDEMPAY_TEST_PASSWORD_FILE");
    unsetenv("IDEMPAY_LOG");
}

static void test_syntax(void)
{
    char err[512] = "";

    clear_env();
    write_file("a.conf",
               "# comment\n\n  IDEMPAY_TEST_A = 42  \nIDEMPAY_TEST_B=\"two words\"\n"
               "IDEMPAY_TEST_C='#not a comment'\nIDEMPAY_TEST_D=\nIDEMPAY_TEST_E=1.5\r\n");
    CU_ASSERT_EQUAL_FATAL(load("a.conf", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(env_int("IDEMPAY_TEST_A", 0), 42);
    CU_ASSERT_STRING_EQUAL(env_str("IDEMPAY_TEST_B", ""), "two words");
    CU_ASSERT_STRING_EQUAL(env_str("IDEMPAY_TEST_C", ""), "#not a comment");
    CU_ASSERT_STRING_EQUAL(env_str("IDEMPAY_TEST_D", "dflt"), "dflt"); /* empty = unset */
    CU_ASSERT_DOUBLE_EQUAL(env_double("IDEMPAY_TEST_E", 0), 1.5, 1e-9);
    CU_ASSERT_STRING_EQUAL(env_source("IDEMPAY_TEST_A"), "config file");
    CU_ASSERT_PTR_NULL(env_source("IDEMPAY_TEST_MISSING"));
    CU_ASSERT_STRING_EQUAL(env_config_key(0), "IDEMPAY_TEST_A");
    CU_ASSERT_PTR_NULL(env_config_key(5));
    CU_ASSERT_PTR_NOT_NULL(strstr(env_config_path(), "a.conf"));
}

static void test_environment_overrides_file(void)
{
    char err[512] = "";

    clear_env();
    write_file("b.conf", "IDEMPAY_TEST_A=1\n");
    setenv("IDEMPAY_TEST_A", "7", 1);
    CU_ASSERT_EQUAL_FATAL(load("b.conf", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(env_int("IDEMPAY_TEST_A", 0), 7);
    CU_ASSERT_STRING_EQUAL(env_source("IDEMPAY_TEST_A"), "environment");
    unsetenv("IDEMPAY_TEST_A");
    CU_ASSERT_EQUAL(env_int("IDEMPAY_TEST_A", 0), 1);
}

static void test_secret_files(void)
{
    char err[512] = "", conf[512];

    clear_env();
    write_file("key", "secret-from-file\n");
    write_file("key2", "  other-secret  \nsecond line ignored\n");
    snprintf(conf, sizeof(conf), "IDEMPAY_TEST_KEY_FILE=%s/key\n", dir);
    write_file("c.conf", conf);
    CU_ASSERT_EQUAL_FATAL(load("c.conf", err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(env_str("IDEMPAY_TEST_KEY", ""), "secret-from-file");
    CU_ASSERT_STRING_EQUAL(env_source("IDEMPAY_TEST_KEY"), "config file NAME_FILE");

    /* the environment's NAME_FILE beats the file's */
    snprintf(conf, sizeof(conf), "%s/key2", dir);
    setenv("IDEMPAY_TEST_KEY_FILE", conf, 1);
    CU_ASSERT_EQUAL_FATAL(load("c.conf", err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(env_str("IDEMPAY_TEST_KEY", ""), "other-secret");
    CU_ASSERT_STRING_EQUAL(env_source("IDEMPAY_TEST_KEY"), "environment NAME_FILE");

    /* and NAME in the environment beats both; its NAME_FILE is not read */
    setenv("IDEMPAY_TEST_KEY", "from-env", 1);
    setenv("IDEMPAY_TEST_KEY_FILE", "/nonexistent/key", 1);
    CU_ASSERT_EQUAL_FATAL(load("c.conf", err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(env_str("IDEMPAY_TEST_KEY", ""), "from-env");
    clear_env();

    /* IDEMPAY_LOG_FILE is a path, not the secret of IDEMPAY_LOG */
    write_file(
        "d.conf",
        "IDEMPAY_LOG_FILE=/nonexistent/idempay.log\nIDEMPAY_TEST_PASSWORD_FILE=/nonexistent/pw\n");
    CU_ASSERT_EQUAL(load("d.conf", err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/pw"));
    write_file("d.conf", "IDEMPAY_LOG_FILE=/nonexistent/idempay.log\n");
    CU_ASSERT_EQUAL_FATAL(load("d.conf", err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(env_str("IDEMPAY_LOG_FILE", ""), "/nonexistent/idempay.log");
    CU_ASSERT_PTR_NULL(env_str("IDEMPAY_LOG", NULL));
}

static void expect_error(const char *text, const char *needle)
{
    char err[512] = "";

    clear_env();
    write_file("bad.conf", text);
    CU_ASSERT_EQUAL(load("bad.conf", err, sizeof(err)), -1);
    if (!strstr(err, needle))
        fprintf(stderr, "\nerror \"%s\" lacks \"%s\"\n", err, needle);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, needle));
    /* a second call gives the same answer */
    CU_ASSERT_EQUAL(env_config_load(NULL, 0), -1);
}

static void test_errors(void)
{
    char err[512] = "";

    expect_error("IDEMPAY_TEST_A\n", "bad.conf:1: expected KEY=value");
    expect_error("\nPATH=/bin\n", "bad.conf:2: \"PATH\" is not an IDEMPAY_* setting");
    expect_error("idempay_x=1\n", "is not an IDEMPAY_* setting");
    expect_error("IDEMPAY_TEST_A=1\nIDEMPAY_TEST_A=2\n", "bad.conf:2: IDEMPAY_TEST_A is set twice");
    expect_error("IDEMPAY_TEST_KEY=a\nIDEMPAY_TEST_KEY_FILE=/x\n",
                 "both IDEMPAY_TEST_KEY and IDEMPAY_TEST_KEY_FILE");
    expect_error("IDEMPAY_TEST_KEY_FILE=/nonexistent/key\n", "cannot read /nonexistent/key");
    write_file("empty", "\n");
    {
        char conf[512];
        snprintf(conf, sizeof(conf), "IDEMPAY_TEST_KEY_FILE=%s/empty\n", dir);
        expect_error(conf, "is empty");
    }
    {
        static char longline[ENV_CONFIG_MAX_LINE + 100];
        memset(longline, 'x', sizeof(longline) - 2);
        memcpy(longline, "IDEMPAY_TEST_A=", 15);
        longline[sizeof(longline) - 2] = '\n';
        expect_error(longline, "longer than");
    }
    /* an explicit IDEMPAY_CONFIG that does not exist is an error */
    CU_ASSERT_EQUAL(load("missing.conf", err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "missing.conf"));
    /* "none": no file at all */
    setenv("IDEMPAY_CONFIG", "none", 1);
    env_config_reset();
    CU_ASSERT_EQUAL(env_config_load(err, sizeof(err)), 0);
    CU_ASSERT_PTR_NULL(env_config_path());
    CU_ASSERT_STRING_EQUAL(env_str("IDEMPAY_TEST_A", "d"), "d");
}

static void test_too_many_keys(void)
{
    static char text[ENV_CONFIG_MAX_KEYS * 32];
    size_t n = 0;

    for (int i = 0; i <= ENV_CONFIG_MAX_KEYS; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "IDEMPAY_K%d=%d\n", i, i);
    expect_error(text, "more than");
}

static int suite_init(void)
{
    return mkdtemp(dir) ? 0 : -1;
}

static int suite_clean(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    env_config_reset();
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    static const cu_test tests[] = {
        { "the file's KEY=value lines, comments, quotes and empty values are read", test_syntax },
        { "the environment overrides the file", test_environment_overrides_file },
        { "a NAME_FILE secret is read with its precedence", test_secret_files },
        { "every syntax and secret error names file and line", test_errors },
        { "a file with too many keys is refused", test_too_many_keys },
    };
    return CU_SUITE_RUN("env", suite_init, suite_clean, tests);
}
