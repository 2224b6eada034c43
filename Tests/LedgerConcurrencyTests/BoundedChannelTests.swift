import Foundation
import LedgerConcurrency
import Synchronization
import Testing

/// Starts `body` on a thread of its own and returns a result that is set when it ends.
func onThread<T: Sendable>(_ name: String = "test", _ body: @escaping @Sendable () -> T) -> OneShot<T> {
    let done = OneShot<T>()
    let thread = Thread { done.set(body()) }
    thread.name = name
    thread.start()
    return done
}

/// A flag one thread raises and another reads.
final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)
    func raise() { raised.store(true, ordering: .releasing) }
    var isRaised: Bool { raised.load(ordering: .acquiring) }
}

/// A counter shared by threads and tasks.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

@Suite("BoundedChannel")
struct BoundedChannelTests {
    @Test("one producer, one consumer: every value once, in order, through a small buffer")
    func order() throws {
        let channel = BoundedChannel<Int>(capacity: 3)
        let producer = onThread {
            for value in 0..<10_000 { guard channel.send(value) else { return false } }
            channel.close()
            return true
        }
        var received: [Int] = []
        while let value = try channel.receive() { received.append(value) }
        #expect(producer.wait())
        #expect(received == Array(0..<10_000))
    }

    @Test("send waits while the buffer is at capacity")
    func backpressure() throws {
        let channel = BoundedChannel<Int>(capacity: 2)
        #expect(channel.send(1))
        #expect(channel.send(2))
        #expect(channel.trySend(3) == .full)
        let sent = Flag()
        let producer = onThread {
            let ok = channel.send(3)
            sent.raise()
            return ok
        }
        // The producer stays blocked while the buffer is full: nothing else can unblock it.
        #expect(producer.wait(timeout: .milliseconds(200)) == nil)
        let sentEarly = sent.isRaised
        #expect(!sentEarly)
        #expect(try channel.receive() == 1)
        #expect(producer.wait(timeout: .seconds(10)) == true)
        #expect(channel.count == 2)
    }

    @Test("weighted capacity: a value heavier than the capacity passes an empty buffer")
    func weighted() throws {
        let channel = BoundedChannel<[UInt8]>(capacity: 10, weight: { $0.count })
        #expect(channel.trySend([UInt8](repeating: 0, count: 25)) == .sent)
        #expect(channel.trySend([1]) == .full)
        #expect(try channel.receive()?.count == 25)
        #expect(channel.trySend([1, 2, 3]) == .sent)
        #expect(channel.trySend([4]) == .sent)
        #expect(try channel.receive(upTo: 10) == [[1, 2, 3], [4]])
    }

    @Test("close: consumers drain the buffer, then get nil or the producer's error; later sends are refused")
    func closing() throws {
        struct ProducerFailed: Error, Equatable {}
        let channel = BoundedChannel<Int>(capacity: 10)
        channel.send(1)
        channel.send(2)
        channel.close(throwing: ProducerFailed())
        #expect(!channel.send(3))
        #expect(channel.trySend(3) == .closed)
        #expect(try channel.receive() == 1)
        #expect(try channel.receive() == 2)
        #expect(throws: ProducerFailed.self) { try channel.receive() }
        #expect(throws: ProducerFailed.self) { try channel.receive(upTo: 5) }

        let clean = BoundedChannel<Int>(capacity: 1)
        clean.close()
        #expect(try clean.receive() == nil)
        #expect(try clean.receive(upTo: 4) == nil)
    }

    @Test("close wakes a consumer blocked on an empty channel")
    func closeWakesConsumer() throws {
        let channel = BoundedChannel<Int>(capacity: 1)
        let consumer = onThread { (try? channel.receive()) ?? -1 }
        #expect(consumer.wait(timeout: .milliseconds(100)) == nil)
        channel.close()
        #expect(consumer.wait(timeout: .seconds(10)) == -1)
    }

    @Test("cancel: a blocked producer gets false, the buffer is dropped, receive returns nil")
    func cancelling() throws {
        let channel = BoundedChannel<Int>(capacity: 1)
        channel.send(1)
        let producer = onThread {
            let blocked = channel.send(2)
            channel.close()
            return blocked
        }
        #expect(producer.wait(timeout: .milliseconds(100)) == nil)
        channel.cancel()
        #expect(producer.wait(timeout: .seconds(10)) == false)
        channel.waitUntilClosed()
        #expect(try channel.receive() == nil)
        #expect(channel.count == 0)
    }

    @Test("many producers and consumers: every value delivered exactly once", arguments: [(1, 8), (8, 1), (6, 6)])
    func manyToMany(producers: Int, consumers: Int) throws {
        let perProducer = 5_000
        let channel = BoundedChannel<Int>(capacity: 7)
        let producing = (0..<producers).map { p in
            onThread { for i in 0..<perProducer { channel.send(p * perProducer + i) } }
        }
        let consuming = (0..<consumers).map { c in
            onThread { () -> [Int] in
                var got: [Int] = []
                // Alternate single and bulk receives to cover both.
                while true {
                    if c % 2 == 0 {
                        guard let value = try? channel.receive() else { return got }
                        got.append(value)
                    } else {
                        guard let values = try? channel.receive(upTo: 3) else { return got }
                        #expect(values.count <= 3 && !values.isEmpty)
                        got.append(contentsOf: values)
                    }
                }
            }
        }
        for done in producing { done.wait() }
        channel.close()
        let all = consuming.map { $0.wait() }
        // Each consumer sees a producer's values in the order it sent them.
        for got in all {
            var last: [Int: Int] = [:]
            for value in got {
                let producer = value / perProducer
                #expect(value > last[producer, default: -1])
                last[producer] = value
            }
        }
        let merged = all.flatMap { $0 }.sorted()
        #expect(merged == Array(0..<(producers * perProducer)))
    }

    @Test("receive with a deadline: the values sent, an empty array once the deadline passes with none, nil after close")
    func receiveWithDeadline() throws {
        let channel = BoundedChannel<Int>(capacity: 4)
        #expect(channel.send(1) && channel.send(2))
        #expect(try channel.receive(upTo: 8, deadline: MonotonicInstant.now.advanced(by: .seconds(5))) == [1, 2])
        let start = MonotonicInstant.now
        #expect(try channel.receive(upTo: 8, deadline: start.advanced(by: .milliseconds(30))) == [])
        #expect(start.duration(to: MonotonicInstant.now) >= .milliseconds(30), "it waited until the deadline")
        // A value sent while the consumer waits wakes it before its deadline.
        let sender = Thread { _ = channel.send(3) }
        sender.start()
        #expect(try channel.receive(upTo: 8, deadline: MonotonicInstant.now.advanced(by: .seconds(30))) == [3])
        channel.close()
        #expect(try channel.receive(upTo: 8, deadline: MonotonicInstant.now.advanced(by: .seconds(30))) == nil)
    }
}
