/// How an option's text becomes its value: the conversion and the checks, in one function that
/// throws ``OptionValueError`` (the reason) for a text it refuses.
struct OptionParser<Value: Sendable>: Sendable {
    /// The value of `text` (never empty: ``Arguments`` refuses an empty value first).
    let parse: @Sendable (String) throws -> Value

    init(_ parse: @escaping @Sendable (String) throws -> Value) {
        self.parse = parse
    }
}

extension OptionParser where Value == String {
    /// The text as given.
    static var text: OptionParser { OptionParser { $0 } }

    /// One of `choices` exactly, else refused naming them (`must be one of a, b, got c`).
    static func oneOf(_ choices: [String]) -> OptionParser {
        OptionParser { text in
            guard choices.contains(text) else { throw OptionValueError("must be one of \(choices.joined(separator: ", ")), got \(text)") }
            return text
        }
    }
}

extension OptionParser where Value == Int {
    /// A decimal integer in `range` (`must be an integer in 1…256, got x`).
    static func integer(in range: ClosedRange<Int>) -> OptionParser {
        OptionParser { text in
            guard let number = Int(text), range.contains(number) else {
                throw OptionValueError("must be an integer in \(range.lowerBound)…\(range.upperBound), got \(text)")
            }
            return number
        }
    }

    /// A decimal integer above zero (`must be a positive integer, got x`).
    static var positiveInteger: OptionParser {
        OptionParser { text in
            guard let number = Int(text), number > 0 else { throw OptionValueError("must be a positive integer, got \(text)") }
            return number
        }
    }
}

extension OptionParser where Value == Double {
    /// A number of seconds above 0 and at most `maximum`.
    static func seconds(upTo maximum: Double) -> OptionParser {
        OptionParser { text in
            guard let seconds = Double(text), seconds > 0, seconds <= maximum else {
                throw OptionValueError("must be a number of seconds above 0 and at most \(Int(maximum)), got \(text)")
            }
            return seconds
        }
    }
}
