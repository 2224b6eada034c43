/// A command line option that takes a value, declared once: its name, help line, completion,
/// and how its text becomes a `Value` (the type, and the checks that refuse a bad one).
///
/// A command lists its options in ``Command/options`` and reads each one with
/// `try arguments[option]`, which gives the typed value. The three shapes of `Value`:
///
/// ```swift
/// // Optional: nil when not given.
/// static let limit = Option<Int?>("limit", value: "N", help: "at most N events (default: all)", parse: .positiveInteger)
/// // With a default: the default when not given.
/// static let readers = Option<Int>("readers", value: "N", help: "…", default: 4, parse: .integer(in: 1...64))
/// // Repeatable: every value given, in order.
/// static let product = Option<[String]>(repeating: "product", value: "P", help: "only this product (repeat for several)")
/// ```
///
/// The value is converted when the command reads it, so a command checks its inputs in the order
/// it reads them. A refused value is a usage error that names the option and says why
/// (``OptionValueError``); a parse that throws a ``UsageError`` or ``InputError`` of its own is
/// reported as it is.
struct Option<Value: Sendable>: DeclaredOption {
    let declaration: OptionDeclaration
    /// The value from the texts given (none, one, or several for a repeatable option).
    private let read: @Sendable ([String]) throws -> Value

    private init(declaration: OptionDeclaration, read: @escaping @Sendable ([String]) throws -> Value) {
        self.declaration = declaration
        self.read = read
    }

    /// An option given at most once, `nil` when absent.
    init<Wrapped>(_ name: String, value valueName: String, help: String, completion: OptionCompletion = .files, column: Int? = nil,
                  parse: OptionParser<Wrapped>) where Value == Wrapped? {
        self.init(declaration: OptionDeclaration(name: name, valueName: valueName, help: help, repeatable: false,
                                                 completion: completion, column: column),
                  read: { texts in try texts.last.map(parse.parse) })
    }

    /// An option given at most once, `defaultValue` when absent (computed when read).
    init(_ name: String, value valueName: String, help: String, completion: OptionCompletion = .files, column: Int? = nil,
         default defaultValue: @escaping @autoclosure @Sendable () -> Value, parse: OptionParser<Value>) {
        self.init(declaration: OptionDeclaration(name: name, valueName: valueName, help: help, repeatable: false,
                                                 completion: completion, column: column),
                  read: { texts in try texts.last.map(parse.parse) ?? defaultValue() })
    }

    /// An option that may be given several times: every value, in the order given.
    init<Element>(repeating name: String, value valueName: String, help: String, completion: OptionCompletion = .files,
                  column: Int? = nil, parse: OptionParser<Element>) where Value == [Element] {
        self.init(declaration: OptionDeclaration(name: name, valueName: valueName, help: help, repeatable: true,
                                                 completion: completion, column: column),
                  read: { texts in try texts.map(parse.parse) })
    }

    /// The same option (name, type, checks, completion) with the help text one command gives it.
    func help(_ text: String) -> Option {
        let old = declaration
        return Option(declaration: OptionDeclaration(name: old.name, valueName: old.valueName, help: text, repeatable: old.repeatable,
                                                     completion: old.completion, column: old.column),
                      read: read)
    }

    /// The value given by `texts` (what the command line held for this option, in order).
    ///
    /// - Throws: ``UsageError`` `--name REASON` for a value the option refuses.
    func value(from texts: [String]) throws -> Value {
        do {
            return try read(texts)
        } catch let error as OptionValueError {
            throw UsageError(message: "\(declaration.spelled) \(error.reason)")
        }
    }
}

extension Option where Value == String? {
    /// An option whose value is any (non-empty) text, `nil` when absent.
    init(_ name: String, value valueName: String, help: String, completion: OptionCompletion = .files, column: Int? = nil) {
        self.init(name, value: valueName, help: help, completion: completion, column: column, parse: .text)
    }
}

extension Option where Value == [String] {
    /// A repeatable option whose values are any (non-empty) text.
    init(repeating name: String, value valueName: String, help: String, completion: OptionCompletion = .files, column: Int? = nil) {
        self.init(repeating: name, value: valueName, help: help, completion: completion, column: column, parse: .text)
    }
}
