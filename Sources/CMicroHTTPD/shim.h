#ifndef SEATLEDGER_CMICROHTTPD_SHIM_H
#define SEATLEDGER_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

/* libmicrohttpd's own unescaping of the URL and its arguments (MHD_http_unescape), except that a
   NUL it produces (from %00) becomes the byte 0xFF, which is never valid UTF-8. The handler gets
   the path and the arguments as C strings, so a NUL would cut them short: `limit=1%00junk` would
   read as `limit=1`, `/v1/members/a%00b` as `a`. With 0xFF the text reaches Swift repaired to
   U+FFFD, which no route takes: a 400 naming the parameter, or a 404 naming the whole path. */
static inline size_t seatledger_mhd_unescape(void *context, struct MHD_Connection *connection, char *text) {
    (void)context; (void)connection;
    size_t length = MHD_http_unescape(text);
    for (size_t index = 0; index < length; index++) {
        if (text[index] == '\0') text[index] = (char)0xFF;
    }
    return length;
}

/* libmicrohttpd's own messages (a port it cannot bind, a connection it drops) go to SeatLedger
   instead of stderr: each is formatted here and handed to `sink` with `context`. */
struct seatledger_mhd_logger {
    void (*sink)(void *context, const char *message);
    void *context;
};

static inline void seatledger_mhd_log(void *cls, const char *format, va_list arguments) {
    const struct seatledger_mhd_logger *logger = (const struct seatledger_mhd_logger *)cls;
    char message[512];
    vsnprintf(message, sizeof message, format, arguments);
    logger->sink(logger->context, message);
}

/* MHD_start_daemon and MHD_get_daemon_info are variadic, which Swift cannot call: these wrappers
   pass the options SeatLedger uses as plain arguments. */
static inline struct MHD_Daemon *seatledger_mhd_start(unsigned int flags, const struct sockaddr_in *address,
                                                      MHD_AccessHandlerCallback handler, void *handler_context,
                                                      MHD_RequestCompletedCallback completed, void *completed_context,
                                                      unsigned int threads, unsigned int connection_limit,
                                                      unsigned int timeout_seconds, size_t connection_memory_limit,
                                                      unsigned int listen_backlog, const struct seatledger_mhd_logger *logger) {
    return MHD_start_daemon(flags, ntohs(address->sin_port), NULL, NULL, handler, handler_context,
                            MHD_OPTION_EXTERNAL_LOGGER, seatledger_mhd_log, (void *)logger,
                            MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)address,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, listen_backlog,
                            MHD_OPTION_UNESCAPE_CALLBACK, seatledger_mhd_unescape, NULL,
                            MHD_OPTION_END);
}

/* The port the daemon listens on (the one the kernel chose when asked for port 0); 0 if unknown. */
static inline uint16_t seatledger_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/* The daemon flags SeatLedger starts with (enum values OR-ed: an expression Swift imports badly). */
static inline unsigned int seatledger_mhd_flags(void) {
    return MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
}

#endif
