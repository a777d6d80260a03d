import TetherGroup

/// Files shared by the host and its extensions, in `GROUP/shared/`.
/// Writes replace a file atomically; an extension without open access
/// (a keyboard whose manifest does not grant it) may only read.
public struct SharedContainer: Sendable {
    /// The group directory.
    public let directory: String
    /// A keyboard without open access may read it only.
    public let isReadOnly: Bool
    private let owner: String
    private let group: GroupDirectory

    init(group: GroupDirectory, owner: String, readOnly: Bool) {
        self.group = group
        directory = group.path + "/shared"
        self.owner = owner
        isReadOnly = readOnly
    }

    /// The file's content, or nil if it does not exist.
    public func read(_ name: String) throws(ExtensionError) -> [UInt8]? {
        guard FeatureName.isValid(name) else { throw .invalidName(name) }
        do { return try AtomicFile.read("\(directory)/\(name)") } catch { throw .environment(error.description) }
    }

    /// `userScoped`: the file is the logged-in user's, removed when a
    /// different user logs in (`UserScopedData`).
    public func write(_ name: String, _ bytes: [UInt8], userScoped: Bool = false) throws(ExtensionError) {
        guard !isReadOnly else { throw .readOnly(extension: owner) }
        guard FeatureName.isValid(name) else { throw .invalidName(name) }
        do throws(GroupError) {
            _ = try GroupDirectory(path: directory)  // creates it 0700, refuses a symlink
            // Over the group's size (the host's mark), only what shrinks a file is written.
            if GroupDirectory.fullRefuses(bytes.count, over: "\(directory)/\(name)",
                                          marker: GroupDirectory.fullMarkerPath(of: group.path)) {
                throw GroupError.groupFull(group.path)
            }
            if userScoped { try UserScopedData(group: group).markFile(name) }
            // No lock here: the write sweeps only temp files of writers that are gone.
            try AtomicFile.write(bytes, to: "\(directory)/\(name)")
        } catch {
            throw .environment(error.description)
        }
    }
}
