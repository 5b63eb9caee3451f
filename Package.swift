// swift-tools-version:6.0
// Inspection Ledger: an append-only, verifiable event log of facility
// inspections in LMDB, the views built from it, and the `jqc` CLI.
import PackageDescription

let package = Package(
    name: "InspectionLedger",
    targets: [
        // MARK: - C bindings (nothing but the library's own headers)
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),

        // MARK: - I/O: a safe LMDB layer
        .target(name: "LMDB", dependencies: ["CLMDB"]),

        // MARK: - Pure core: encoding, records, hashing
        .target(name: "LedgerCore", dependencies: ["CCrypto"]),

        // MARK: - Pure domain: inspection events, templates, validation, score
        .target(name: "InspectionDomain", dependencies: ["LedgerCore"]),

        // MARK: - The event log stored in LMDB
        .target(name: "LedgerStore", dependencies: ["LMDB", "LedgerCore"]),

        // MARK: - The command line
        .target(name: "ArgumentParsing"),

        // MARK: - Executables
        .executableTarget(name: "ledger-writer", dependencies: ["LedgerStore"]),
        .executableTarget(name: "ledger-bench", dependencies: ["LedgerStore", "LMDB", "LedgerCore", "CSQLite"]),

        // MARK: - Tests
        .target(name: "LedgerTestSupport", dependencies: ["LedgerStore", "LedgerCore"]),
        .testTarget(name: "LedgerCoreTests", dependencies: ["LedgerCore"]),
        .testTarget(
            name: "LedgerStoreTests",
            dependencies: ["LedgerStore", "LMDB", "LedgerTestSupport", "ledger-writer"]
        ),
        .testTarget(name: "ArgumentParsingTests", dependencies: ["ArgumentParsing"]),
        .testTarget(
            name: "InspectionDomainTests",
            dependencies: ["InspectionDomain", "LedgerCore", "LedgerTestSupport"],
            resources: [.copy("Fixtures")]
        ),
    ]
)
