import Foundation
import PackagePlugin

/// Compiles the demo's sample streams (`Events/scenarios/*.ndjson`) and their trust root
/// (`Tools/pki/root.pem`) into the target as Swift source, so `seatledger demo` works from any
/// directory and from an installed binary (a resource bundle is a sibling folder that a copied
/// binary loses). The files are declared as inputs: editing a stream rebuilds the target.
@main
struct EmbedSamples: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let scenarios = package.appending(path: "Events/scenarios")
        let streams = try FileManager.default.contentsOfDirectory(at: scenarios, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "ndjson" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let root = package.appending(path: "Tools/pki/root.pem")
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSampleData.swift")
        return [.buildCommand(
            displayName: "Embedding \(streams.count) sample streams and the test root",
            executable: try context.tool(named: "sample-embedder").url,
            arguments: [output.path, root.path] + streams.map(\.path),
            inputFiles: [root] + streams,
            outputFiles: [output])]
    }
}
