import Foundation
import InspectionDomain

extension JSONValue {
    /// Whether `read`, what Foundation's `JSONSerialization` made of some
    /// JSON text, is this value: the same strings (exactly), numbers,
    /// booleans and nulls, members and items. What jqc prints is read back
    /// by a parser that shares no code with the one that wrote it.
    public func isFoundationReading(_ read: Any) -> Bool {
        switch self {
        case .null: return read is NSNull
        case .bool(let flag): return read as? Bool == flag
        case .number(let text):
            guard let number = read as? NSNumber, let expected = Double(text) else { return false }
            return number.doubleValue == expected
        case .string(let text): return read as? String == text
        case .array(let items):
            guard let array = read as? [Any], array.count == items.count else { return false }
            return zip(items, array).allSatisfy { $0.isFoundationReading($1) }
        case .object(let members):
            guard let object = read as? [String: Any], object.count == members.count else { return false }
            return members.allSatisfy { member in
                object[member.key].map { member.value.isFoundationReading($0) } ?? false
            }
        }
    }
}
