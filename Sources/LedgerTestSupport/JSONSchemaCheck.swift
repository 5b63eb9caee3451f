import Foundation

/// Checks what `jqc --json` printed against its definition in
/// `Schemas/cli/jqc-json.schema.json`, with `Tools/validate-json` (Python and
/// jsonschema, sharing no code with the Swift that printed it).
public enum JSONSchemaCheck {
    /// Runs the validator on `output`; `lines` for JSON Lines (`jqc log
    /// --json`, the sync progress), each line one document of `definition`.
    /// Status 0 when valid; otherwise stderr names every problem.
    public static func validate(_ definition: String, _ output: String, lines: Bool = false) throws -> ProcessResult {
        try ProcessRun.run(
            Products.python.executable,
            Products.python.arguments + [Products.repositoryFile("Tools/validate-json")] + (lines ? ["--lines"] : [])
                + [definition],
            input: Data(output.utf8))
    }
}
