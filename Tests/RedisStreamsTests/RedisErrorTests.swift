@testable import RedisStreams
import Testing

/// Which Redis replies a consumer waits out instead of exiting.
@Suite("Redis replies")
struct RedisErrorTests {
    @Test("replies of a server that is restarting or failing over are transient; others are not",
          arguments: [("LOADING Redis is loading the dataset in memory", true), ("BUSY Redis is busy running a script", true),
                      ("TRYAGAIN Multiple keys request during rehashing", true), ("MASTERDOWN Link with MASTER is down", true),
                      ("NOGROUP No such key 'notes' or consumer group 'sl'", false), ("ERR unknown command", false),
                      ("WRONGTYPE Operation against a key holding the wrong kind of value", false)])
    func transientReplies(message: String, transient: Bool) {
        let error = RedisError(isConnectionError: false, message: message, command: "XREADGROUP")
        #expect(error.isTransient == transient)
    }
}
