/* dbstat.c - MariaDB global status counters (see dbstat.h). */
#include "dbstat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const dbstat_names[DBSTAT_COUNT] = {
    [DBSTAT_QUESTIONS] = "Questions",
    [DBSTAT_COM_SELECT] = "Com_select",
    [DBSTAT_COM_INSERT] = "Com_insert",
    [DBSTAT_COM_INSERT_SELECT] = "Com_insert_select",
    [DBSTAT_COM_UPDATE] = "Com_update",
    [DBSTAT_COM_DELETE] = "Com_delete",
    [DBSTAT_COM_BEGIN] = "Com_begin",
    [DBSTAT_COM_COMMIT] = "Com_commit",
    [DBSTAT_COM_ROLLBACK] = "Com_rollback",
    [DBSTAT_COM_STMT_EXECUTE] = "Com_stmt_execute",
    [DBSTAT_HANDLER_COMMIT] = "Handler_commit",
    [DBSTAT_LOG_WRITES] = "Innodb_log_writes",
    [DBSTAT_LOG_BYTES] = "Innodb_os_log_written",
    [DBSTAT_OS_LOG_FSYNCS] = "Innodb_os_log_fsyncs",
    [DBSTAT_DATA_FSYNCS] = "Innodb_data_fsyncs",
};

const char *dbstat_name(dbstat_counter c)
{
    return c < DBSTAT_COUNT ? dbstat_names[c] : "?";
}

int dbstat_read(MYSQL *db, dbstat *out)
{
    MYSQL_RES *res;
    MYSQL_ROW row;

    for (int i = 0; i < DBSTAT_COUNT; i++)
        out->v[i] = -1;
    if (mysql_query(db, "SHOW GLOBAL STATUS") != 0 || (res = mysql_store_result(db)) == NULL)
        return -1;
    while ((row = mysql_fetch_row(res)) != NULL) {
        if (row[0] == NULL || row[1] == NULL)
            continue;
        for (int i = 0; i < DBSTAT_COUNT; i++) {
            if (strcasecmp(row[0], dbstat_names[i]) == 0) {
                out->v[i] = strtoll(row[1], NULL, 10);
                break;
            }
        }
    }
    mysql_free_result(res);
    return 0;
}

long long dbstat_delta(const dbstat *before, const dbstat *after, dbstat_counter c)
{
    if (before->v[c] < 0 || after->v[c] < 0 || after->v[c] < before->v[c])
        return -1;
    return after->v[c] - before->v[c];
}
