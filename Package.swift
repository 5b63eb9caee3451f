// swift-tools-version:6.0
// Inspection Ledger: an append-only, verifiable event log of facility
// inspections in LMDB, the views built from it, and the `jqc` CLI.
import PackageDescription

// Decoders read LMDB's memory map in place through `RawSpan`s; the readers
// that hold one are non-escapable types, whose lifetimes this feature spells.
let borrowedReads: [SwiftSetting] = [.enableExperimentalFeature("Lifetimes")]

// What every jqc process pays before its first line, cut at link time
// (Tools/bench's header has the figures): lld, which can pack the ~80,000
// relative relocations of the position-independent binary into a few
// thousand words (DT_RELR, glibc 2.36+), so ASLR is kept; and no dynamic
// symbol table of the binary's own ~10,000 symbols, which the Swift
// runtime's start searched linearly (dladdr, for its own path) and every
// library's symbol lookup consulted first. Symbols a shared library needs
// from the binary are still exported.
// In a release build also GCC's C++ library linked statically
// (Tools/link/libstdc++.so says why and how); a debug build keeps the shared
// one, which its shared Swift runtime links too.
// What it links matters as much: the modules it is built from import only
// FoundationEssentials, not the whole of Foundation (ARCHITECTURE.md,
// "FoundationEssentials only"; Tools/test holds them to it).
let processStart: [LinkerSetting] = [
    .unsafeFlags([
        "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
    ]),
    .unsafeFlags(["-L", Context.packageDirectory + "/Tools/link"], .when(configuration: .release)),
]

let package = Package(
    name: "InspectionLedger",
    products: [
        .executable(name: "jqc", targets: ["jqc"])
    ],
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
        // libcrypto's headers only: it is opened with dlopen at the first
        // hash (LedgerCore's LibCrypto), not linked, so no pkg-config.
        .systemLibrary(
            name: "CCrypto",
            providers: [.apt(["libssl-dev"])]
        ),

        // glibc's mallopt (malloc.h), which the Glibc module does not export.
        .systemLibrary(name: "CAllocator"),

        // libcurl's option setters are variadic, which Swift cannot call: this
        // C target gives each option kind one typed function.
        .target(
            name: "CCurl",
            // libcurl is opened with dlopen at the first transfer (ccurl.h), not linked.
            linkerSettings: [.linkedLibrary("dl")]
        ),

        // MARK: - I/O: a safe LMDB layer
        .target(name: "LMDB", dependencies: ["CLMDB"], swiftSettings: borrowedReads),

        // MARK: - Pure core: encoding, records, hashing
        .target(name: "LedgerCore", dependencies: ["CCrypto"], swiftSettings: borrowedReads),

        // MARK: - Pure domain: inspection events, templates, validation, score
        .target(name: "InspectionDomain", dependencies: ["LedgerCore"], swiftSettings: borrowedReads),

        // MARK: - HTTP: pure request/response types and the transport protocol; libcurl behind it
        .target(name: "HTTPCore"),
        .target(name: "CurlTransport", dependencies: ["HTTPCore", "CCurl"]),

        // MARK: - The event log stored in LMDB
        .target(name: "LedgerStore", dependencies: ["LMDB", "LedgerCore", "CAllocator"]),

        // MARK: - The inspection ledger: the log, its projections, photos, reference data
        .target(name: "InspectionStore", dependencies: ["LedgerStore", "InspectionDomain", "LMDB", "LedgerCore"]),

        // MARK: - Sync: the server's API over any transport, the worker that replays the outbox
        .target(
            name: "SyncWorker",
            dependencies: ["HTTPCore", "InspectionStore", "InspectionDomain", "LedgerStore", "LedgerCore"]
        ),

        // MARK: - The auditor's replay: timeline, field diffs, the report and its renderings (no I/O)
        .target(name: "InspectionAudit", dependencies: ["InspectionDomain", "LedgerCore"]),

        // MARK: - Use cases: what a person does with a ledger, apart from how it is typed
        .target(
            name: "InspectionUseCases",
            dependencies: [
                "InspectionStore", "InspectionAudit", "InspectionDomain", "LedgerStore", "LedgerCore", "SyncWorker",
            ]
        ),

        // MARK: - The command line
        .target(name: "ArgumentParsing"),

        // MARK: - The CLI: commands in a library, a one-file executable
        .target(
            name: "JQCCommands",
            dependencies: [
                "ArgumentParsing", "LedgerCore", "LedgerStore", "InspectionDomain", "InspectionStore",
                "InspectionUseCases", "SyncWorker", "HTTPCore", "CurlTransport", "InspectionAudit",
            ]
        ),
        .executableTarget(name: "jqc", dependencies: ["JQCCommands"], linkerSettings: processStart),

        // MARK: - Executables
        .executableTarget(name: "ledger-writer", dependencies: ["LedgerStore", "LedgerCore"]),
        .executableTarget(
            name: "ledger-bench",
            dependencies: [
                "LedgerStore", "LMDB", "LedgerCore", "CSQLite", "InspectionDomain", "InspectionStore", "HTTPCore",
                "CurlTransport", "LedgerTestSupport",
            ]
        ),

        // MARK: - Tests
        // Shared with ledger-bench, which runs its child processes through it;
        // LedgerForger writes records with the LMDB layer, as a forger would;
        // ScriptedTransport is a server in memory for the sync tests.
        .target(name: "LedgerTestSupport", dependencies: ["LedgerCore", "LMDB", "HTTPCore", "InspectionDomain"]),
        .testTarget(name: "LedgerCoreTests", dependencies: ["LedgerCore"]),
        .testTarget(
            name: "LedgerStoreTests",
            dependencies: ["LedgerStore", "LMDB", "LedgerCore", "LedgerTestSupport", "ledger-writer"]
        ),
        .testTarget(name: "ArgumentParsingTests", dependencies: ["ArgumentParsing"]),
        .testTarget(
            name: "SyncWorkerTests",
            dependencies: [
                "SyncWorker", "InspectionStore", "InspectionDomain", "LedgerStore", "LedgerCore", "HTTPCore",
                "CurlTransport", "LedgerTestSupport", "jqc",
            ]
        ),
        .testTarget(
            name: "InspectionStoreTests",
            dependencies: [
                "InspectionStore", "InspectionDomain", "LedgerStore", "LedgerCore", "LMDB", "LedgerTestSupport",
            ]
        ),
        .testTarget(
            name: "JQCCommandsTests",
            dependencies: [
                "JQCCommands", "InspectionDomain", "InspectionStore", "LMDB", "LedgerCore", "LedgerStore",
                "LedgerTestSupport", "jqc",
            ]
        ),
        .testTarget(
            name: "CurlTransportTests",
            dependencies: ["CurlTransport", "HTTPCore", "LedgerTestSupport"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "InspectionUseCasesTests",
            dependencies: [
                "InspectionUseCases", "InspectionStore", "InspectionAudit", "InspectionDomain", "LedgerStore",
                "LedgerCore", "LedgerTestSupport", "LMDB", "SyncWorker",
            ]
        ),
        .testTarget(
            name: "InspectionAuditTests",
            dependencies: ["InspectionAudit", "InspectionDomain", "LedgerCore", "LedgerTestSupport"]
        ),
        .testTarget(
            name: "InspectionDomainTests",
            dependencies: ["InspectionDomain", "LedgerCore", "LedgerTestSupport"],
            resources: [.copy("Fixtures")]
        ),
    ]
)
