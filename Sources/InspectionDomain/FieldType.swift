/// The kinds of template field, as the server names them.
public enum FieldType: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    case text, email, textarea, number, date, checkbox
    case checkboxGroup = "checkbox_group"
    case radio, select, rating
    case passFail = "pass_fail"
    case signature, image, table, section, label

    public var description: String { rawValue }

    /// Section and label fields only show text on the form; they never hold a value.
    public var isDisplayOnly: Bool { self == .section || self == .label }

    /// The types that count towards the score (domain: rating, checkbox, radio, pass_fail).
    public var isScoreable: Bool {
        switch self {
        case .rating, .checkbox, .radio, .passFail: true
        default: false
        }
    }

    /// Signature and image fields hold a captured file, never typed text.
    public var holdsPhoto: Bool { self == .signature || self == .image }

    /// The types whose value is one or several of the field's `options`.
    public var offersOptions: Bool {
        switch self {
        case .radio, .select, .checkboxGroup: true
        default: false
        }
    }

    /// Whether a re-inspection starts with the parent's answer for this field.
    ///
    /// The domain names rating, pass_fail, image and signature as never
    /// copied. Checkbox and radio are left out too: they score, and a copied
    /// answer would let a follow-up pass without anyone looking again. So the
    /// rule is "copy what neither scores nor is a photo"; display-only fields
    /// hold nothing to copy.
    public var copiesToReinspection: Bool {
        !isScoreable && !holdsPhoto && !isDisplayOnly
    }
}
