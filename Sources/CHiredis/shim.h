#ifndef SEATLEDGER_CHIREDIS_SHIM_H
#define SEATLEDGER_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>
#include <sys/time.h>

/* redisCommand is variadic; Swift uses redisCommandArgv. These wrap struct access and macros. */
static inline redisContext *seatledger_redis_connect(const char *host, int port, long timeout_ms) {
    struct timeval tv;
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    return redisConnectWithTimeout(host, port, tv);
}
static inline int seatledger_redis_set_timeout(redisContext *c, long timeout_ms) {
    struct timeval tv;
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    return redisSetTimeout(c, tv);
}
static inline redisReply *seatledger_redis_command_argv(redisContext *c, int argc, const char **argv, const size_t *argvlen) {
    return (redisReply *)redisCommandArgv(c, argc, argv, argvlen);
}
#endif
