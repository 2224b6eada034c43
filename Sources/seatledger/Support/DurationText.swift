import AppStoreModels
import SeatLedger

/// A length of time a person writes (`--grace 24h`): a whole number and a unit, `s`, `m`, `h` or
/// `d` (`30s`, `15m`, `24h`, `7d`), in milliseconds. The units are ``MomentText``'s relative
/// moments' (`7d` ago), without a sign: a duration is never negative.
extension OptionParser where Value == Int64 {
    /// A duration (`30s`, `15m`, `24h`, `7d`; `0s` is none), refused naming the forms.
    static var duration: OptionParser {
        OptionParser { text in
            guard let unit = text.last, "smhd".contains(unit), text.dropLast().allSatisfy(\.isASCII),
                  text.dropLast().allSatisfy(\.isNumber), text.count > 1,
                  let millis = MomentText.relativeOffset("+" + text) else {
                throw OptionValueError("must be a duration like 30s, 15m, 24h or 7d, got \(text)")
            }
            return millis
        }
    }
}
