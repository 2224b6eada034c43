#ifndef SEATLEDGER_CLIBPQ_SHIM_H
#define SEATLEDGER_CLIBPQ_SHIM_H
#include <libpq-fe.h>

/* The PG_DIAG_* field codes are character macros; these wrap the ones PostgresError reads. */
static inline const char *seatledger_pq_sqlstate(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SQLSTATE);
}
static inline const char *seatledger_pq_severity(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SEVERITY_NONLOCALIZED);
}
static inline const char *seatledger_pq_message_primary(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
}
static inline const char *seatledger_pq_message_detail(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL);
}
static inline const char *seatledger_pq_message_hint(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_MESSAGE_HINT);
}
static inline const char *seatledger_pq_statement_position(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_STATEMENT_POSITION);
}
static inline const char *seatledger_pq_constraint_name(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_CONSTRAINT_NAME);
}

/* libpq's default notice processor prints NOTICE/WARNING lines to stderr (e.g. for
   DROP TABLE IF EXISTS). A library must not write to the host's stderr: drop them. */
static inline void seatledger_pq_ignore_notice(void *argument, const char *message) {
    (void)argument;
    (void)message;
}
static inline void seatledger_pq_silence_notices(PGconn *connection) {
    PQsetNoticeProcessor(connection, seatledger_pq_ignore_notice, NULL);
}
#endif
