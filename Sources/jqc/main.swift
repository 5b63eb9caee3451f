// The `jqc` executable: everything lives in JQCCommands, so tests can run it
// in-process too.
import Glibc
import JQCCommands

JQC.installStoreGuards()
JQC.ignoreBrokenPipes()
let status = JQC.main(
    arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
    stdout: TextOutput(fileDescriptor: 1), stderr: TextOutput(fileDescriptor: 2))
exit(status)
