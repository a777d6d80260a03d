import TetherBus

/// The freedesktop Secret Service (GNOME Keyring, KWallet, KeePassXC),
/// spoken over the project's one D-Bus client: a session with the `plain`
/// algorithm (the secret travels on the user's own bus socket, which only
/// the user and the bus daemon can read: libsecret's encrypted session
/// guards against swap, not against the bus), items in the default
/// collection, searched by their attributes. Every call blocks, bounded:
/// made off the event loop. A prompt is never shown: a call that would
/// need one (a locked collection) is refused before it is made.
struct SecretService {
    static let name = "org.freedesktop.secrets"
    static let path = "/org/freedesktop/secrets"
    static let service = "org.freedesktop.Secret.Service"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let itemInterface = "org.freedesktop.Secret.Item"
    /// libsecret's schema attribute, kept so items stored by earlier
    /// versions and by `secret-tool` are the same items.
    static let schema = "org.tether.Credential"
    /// How long one call may take.
    static let defaultTimeoutMilliseconds: UInt64 = 20_000

    private let bus: BlockingBus
    private let timeoutMilliseconds: UInt64
    private let session: String

    /// A connection to the session bus and a session with the service.
    init() throws(KeyringError) {
        switch SessionBusAddress.resolve() {
        case .success(let address): try self.init(address: address)
        case .failure(let noBus): throw KeyringError("no session bus: \(noBus.reason)")
        }
    }

    /// A session with the service on the bus at `address`, each call waiting
    /// at most `timeoutMilliseconds`.
    init(address: String, timeoutMilliseconds: UInt64 = SecretService.defaultTimeoutMilliseconds) throws(KeyringError) {
        self.timeoutMilliseconds = timeoutMilliseconds
        do {
            bus = try BlockingBus(address: address, timeoutMilliseconds: timeoutMilliseconds)
            let opened = try bus.call(destination: Self.name, path: Self.path, interface: Self.service, member: "OpenSession",
                                      [.string("plain"), .variant(.string(""))], timeoutMilliseconds: timeoutMilliseconds)
            guard opened.count == 2, let session = opened[1].stringValue else {
                throw KeyringError("the Secret Service opened no session")
            }
            self.session = session
        } catch let error as BusError {
            throw Self.failure(error)
        } catch let error as KeyringError {
            throw error
        } catch {
            throw KeyringError("the keyring failed")
        }
    }

    /// Ends the session (the service forgets it with the connection too).
    func close() {
        _ = try? bus.call(destination: Self.name, path: session, interface: "org.freedesktop.Secret.Session", member: "Close",
                          timeoutMilliseconds: timeoutMilliseconds)
    }

    /// The default collection's path and whether it is locked.
    func defaultCollection() throws(KeyringError) -> (path: String, locked: Bool) {
        let alias = try call(Self.path, Self.service, "ReadAlias", [.string("default")])
        guard let path = alias.first?.stringValue, path != "/" else {
            throw KeyringError("the keyring has no default collection")
        }
        do {
            let locked = try bus.property(destination: Self.name, path: path, interface: Self.collectionInterface,
                                          name: "Locked", timeoutMilliseconds: timeoutMilliseconds)
            return (path, locked.boolValue ?? true)
        } catch {
            throw Self.failure(error)
        }
    }

    /// Stores `secret` as the item with `attributes` in the default
    /// collection, replacing one with the same attributes.
    func store(_ secret: String, label: String, attributes: [String: String]) throws(KeyringError) {
        let collection = try defaultCollection()
        guard !collection.locked else { throw KeyringError("it is locked") }
        let properties: BusValue = .properties([
            ("org.freedesktop.Secret.Item.Label", .string(label)),
            ("org.freedesktop.Secret.Item.Attributes", Self.dictionary(attributes)),
        ])
        // The service's own words are left out: one that echoes what it
        // was given would put the secret in an error a terminal shows.
        let answer = try call(collection.path, Self.collectionInterface, "CreateItem",
                              [properties, secretValue(secret), .boolean(true)], quoting: false)
        guard answer.count == 2, answer[0].stringValue != "/" else {
            throw KeyringError("the keyring did not store the secret (it asked for a prompt)")
        }
    }

    /// The unlocked items with `attributes`; locked ones are an error.
    func search(_ attributes: [String: String]) throws(KeyringError) -> [String] {
        let answer = try call(Self.path, Self.service, "SearchItems", [Self.dictionary(attributes)])
        guard answer.count == 2 else { throw KeyringError("the keyring's search answered nothing") }
        if !(answer[1].items ?? []).isEmpty { throw KeyringError("it is locked") }
        return (answer[0].items ?? []).compactMap(\.stringValue)
    }

    /// The secret of `item`.
    func secret(of item: String) throws(KeyringError) -> String {
        let answer = try call(Self.path, Self.service, "GetSecrets",
                              [.array(element: "o", [.objectPath(item)]), .objectPath(session)])
        guard case .entry(_, let value)? = answer.first?.items?.first, let fields = value.fields, fields.count >= 3,
              let bytes = fields[2].items else {
            throw KeyringError("the keyring gave no secret for the item")
        }
        let raw = bytes.compactMap { value -> UInt8? in if case .byte(let byte) = value { return byte } else { return nil } }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Removes `item`.
    func delete(_ item: String) throws(KeyringError) {
        let answer = try call(item, Self.itemInterface, "Delete", [])
        if let prompt = answer.first?.stringValue, prompt != "/" {
            throw KeyringError("the keyring did not remove the secret (it asked for a prompt)")
        }
    }

    private func call(_ path: String, _ interface: String, _ member: String, _ arguments: [BusValue],
                      quoting: Bool = true) throws(KeyringError) -> [BusValue] {
        do {
            return try bus.call(destination: Self.name, path: path, interface: interface, member: member, arguments,
                                timeoutMilliseconds: timeoutMilliseconds)
        } catch {
            throw Self.failure(error, quoting: quoting)
        }
    }

    /// A secret as the service takes it: (session, parameters, value, content type).
    private func secretValue(_ secret: String) -> BusValue {
        .structure([.objectPath(session), .array(element: "y", []),
                    .array(element: "y", secret.utf8.map { .byte($0) }), .string("text/plain; charset=utf8")])
    }

    private static func dictionary(_ attributes: [String: String]) -> BusValue {
        .array(element: "{ss}", (attributes.merging(["xdg:schema": schema]) { mine, _ in mine })
            .sorted { $0.key < $1.key }.map { .entry(.string($0.key), .string($0.value)) })
    }

    /// A bus failure as one sentence. A peer's own text (an error answer
    /// has a name) only where `quoting`: no call that carried a secret, which
    /// any owner of the service's name could echo. Our own (no name) always.
    private static func failure(_ error: BusError, quoting: Bool = true) -> KeyringError {
        let text = quoting || error.name == nil ? error.reason : nil
        switch error.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return KeyringError("no Secret Service answers on the session bus" + (text.map { " (\($0))" } ?? ""))
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
            return KeyringError("the keyring did not answer in time")
        case "org.freedesktop.Secret.Error.IsLocked":
            return KeyringError("it is locked")
        default:
            return KeyringError(text ?? "the keyring refused: \(error.name ?? "no reason given")")
        }
    }
}
