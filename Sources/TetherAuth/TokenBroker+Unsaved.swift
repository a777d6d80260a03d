import TetherLoop
import TetherGroup

/// Pairs the store did not take (disk full, I/O error): kept in memory, with
/// the refresh lock, until they save. See `TokenBroker.Unsaved`.
extension TokenBroker {
    /// Tries again to save every pair kept in memory; true when none is left.
    /// `includingKeyring`: also those whose secret belongs in the keyring (a
    /// blocking D-Bus call: never on the loop; see `saveUnsavedOffLoop`).
    /// The pairs are copied out: no lock is held while a store is written.
    @discardableResult
    package func saveUnsaved(includingKeyring: Bool = false) -> Bool {
        let entries = unsaved.withLock { $0 }
        guard !entries.isEmpty else { return true }
        var settled: [TokenKind] = []
        for (kind, entry) in entries {
            do throws(AuthError) {
                let snapshot: CredentialStore.Snapshot
                do throws(GroupError) { snapshot = try store.snapshot() } catch { throw .store(error) }
                let keyring = store.keyring(snapshot)
                if keyring != nil && !includingKeyring { continue }
                // Only over the pair it replaced: a logout or another login
                // since then wins, and this pair is dropped.
                if snapshot.tokens(kind)?.refreshIdentity == entry.replacing {
                    let stored = try CredentialStore.storedForm(entry.set, as: kind, in: keyring, configuration: snapshot.configuration)
                    do throws(GroupError) {
                        try store.shared.update { values in
                            if TokenSet(values[kind.rawValue])?.refreshIdentity == entry.replacing { values[kind.rawValue] = stored }
                        }
                    } catch {
                        throw .store(error)
                    }
                }
                settled.append(kind)
            } catch {
                continue
            }
        }
        return unsaved.withLock { current in
            for kind in settled { current.removeValue(forKey: kind)?.lock?.release() }
            return current.isEmpty
        }
    }

    /// `saveUnsaved(includingKeyring: true)` on a thread of its own.
    package func saveUnsavedOffLoop() async -> Bool {
        (try? await Self.offLoop { () throws(AuthError) in self.saveUnsaved(includingKeyring: true) }) ?? false
    }

    /// A pair kept for the keyring is tried again on a token read at most
    /// this often (seconds), off the loop.
    static let keyringRetryInterval: Double = 5

    /// Tries the pairs kept for the keyring again, if it is time.
    func retryKeyringSaves() async {
        guard !unsaved.withLock({ $0.isEmpty }) else { return }
        let now = Self.now()
        let due = lastKeyringRetry.withLock { last in
            guard now - last >= Self.keyringRetryInterval else { return false }
            last = now
            return true
        }
        if due { _ = await saveUnsavedOffLoop() }
    }

    /// The kept pair of `kind` (nil: the user's, else the client's), after
    /// one more try to save it. While it is valid it is the answer; once it
    /// is due, no refresh is chained onto a pair the store never took.
    func pendingSet(_ kind: TokenKind?) throws(AuthError) -> TokenSet? {
        guard !unsaved.withLock({ $0.isEmpty }), !saveUnsaved(includingKeyring: false) else { return nil }
        let entry = unsaved.withLock { entries in kind.flatMap { entries[$0] } ?? entries[.user] ?? entries[.client] }
        guard let entry else { return nil }
        guard entry.set.needsRefresh(now: Self.now(), leeway: 0) else { return entry.set }
        throw entry.error
    }

    /// After a failed save of `fresh`: a few quick retries, then keep it in
    /// memory with the refresh lock (taken from the caller) until it saves.
    func keepUnsaved(_ fresh: TokenSet, as kind: TokenKind, replacing: String?,
                             lock: inout ExclusiveLock?, error: AuthError) async {
        var backoff = Backoff(first: 50, maximum: 200)
        let store = store
        for _ in 0..<2 {
            // A backoff timer for a failing disk or keyring, not synchronization (invariant 10).
            try? await Task.sleep(nanoseconds: backoff.next() * 1_000_000)
            if (try? await Self.offLoop({ () throws(AuthError) in try store.saveTokens(fresh, as: kind) })) != nil { return }
        }
        let held = lock
        lock = nil  // released once the pair is saved, not before
        unsaved.withLock { $0[kind] = Unsaved(set: fresh, replacing: replacing, lock: held, error: error) }
        onWarning?("the credential store is failing (\(error)); the new tokens are kept in this process "
                   + "and saved as soon as it can be written")
    }
}
