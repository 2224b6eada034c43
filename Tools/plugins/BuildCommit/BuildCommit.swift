import Foundation
import PackagePlugin

/// Records the commit a build was made from as Swift source (`BuildCommit.value`), so
/// `seatledger --version`, `serve`'s start line, `/healthz` and `/metrics` name it.
///
/// A prebuild command runs on every build (a commit changes no input file SwiftPM could watch);
/// `Tools/scripts/record-build-commit.sh` rewrites the file only when its text changes, so an
/// unchanged commit recompiles nothing. `$SEATLEDGER_BUILD_COMMIT` overrides git (a build from
/// a source tarball); with neither, the commit reads `unknown`.
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        var arguments = [package.appending(path: "Tools/scripts/record-build-commit.sh").path, package.path,
                         output.appending(path: "BuildCommit.swift").path]
        if let pinned = ProcessInfo.processInfo.environment["SEATLEDGER_BUILD_COMMIT"], !pinned.isEmpty {
            arguments.append(pinned)
        }
        return [.prebuildCommand(displayName: "Recording the build's commit", executable: URL(fileURLWithPath: "/bin/sh"),
                                 arguments: arguments, outputFilesDirectory: output)]
    }
}
