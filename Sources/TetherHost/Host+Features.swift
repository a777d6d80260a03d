import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherIPC
import TetherLog
import TetherLoop
import TetherManifest

/// Features: named liveness locks the host holds for whoever asks.
extension Host {
    func featureName(_ target: NamedTarget) -> Result<FeatureName, RPCError> {
        do { return .success(try FeatureName(target.name)) } catch { return .failure(.invalidParams(error.description)) }
    }

    /// Features one extension may have started and running at once.
    static let featuresPerExtension = 16

    /// Who started a feature, if an extension did.
    struct FeatureStarter {
        let name: String
        /// Started without open access: it ends when its starter does.
        let endsWithIt: Bool
    }

    /// `feature.start` by the user or by extension `starter`: an extension
    /// runs at most `featuresPerExtension`, and one without open access
    /// only while it runs (`endFeatures(startedBy:)`).
    func startFeature(_ target: NamedTarget, by starter: String?) -> Result<FeatureStarted, RPCError> {
        if let starter, featureStarters.values.count(where: { $0.name == starter }) >= Self.featuresPerExtension {
            return .failure(.refused("'\(starter)' already runs \(Self.featuresPerExtension) features it started, its limit; stop one first"))
        }
        let result = featureName(target).flatMap(startFeature)
        if case .success(let answer) = result, answer.started, let starter {
            let feature = target.name
            let openAccess = supervisor(named: starter)?.manifest.openAccess ?? attachedEntry(named: starter)?.openAccess ?? false
            featureStarters[feature] = FeatureStarter(name: starter, endsWithIt: !openAccess)
        }
        return result
    }

    /// Extension `name` ended: the features it started without open
    /// access end too (nobody else may stop them).
    func endFeatures(startedBy name: String) {
        for (feature, starter) in featureStarters where starter.name == name && starter.endsWithIt {
            guard let valid = try? FeatureName(feature) else { continue }
            _ = stopFeature(valid)
        }
    }

    func startFeature(_ name: FeatureName) -> Result<FeatureStarted, RPCError> {
        if features[name.rawValue] != nil {
            return .success(FeatureStarted(name: name.rawValue, started: false, pid: Int64(pid)))
        }
        guard features.count < configuration.maximumFeatures else {
            return .failure(.refused("the host already runs \(features.count) features, its limit; stop one first"))
        }
        do {
            let path = try configuration.group.preparedLockPath(for: .feature(name))
            guard let lock = try LivenessLock.tryAcquire(path: path, label: "feature \(name)") else {
                let holder = (try? LockProbe.status(ofLockAt: path))?.holder.map { " (pid \($0.pid))" } ?? ""
                return .failure(.refused("feature '\(name)' is already running outside the host\(holder)"))
            }
            features[name.rawValue] = lock
            if let note = lock.displacementNote { logger.warning("\(note)") }
            logger.event(.featureStarted, "feature '\(name)' started", ["feature": .string(name.rawValue)])
            publish(HostNotification.featureChanged, ["name": .string(name.rawValue), "running": true])
            return .success(FeatureStarted(name: name.rawValue, started: true, pid: Int64(pid)))
        } catch {
            return .failure(.internalError(error.description))
        }
    }

    func stopFeature(_ name: FeatureName) -> Result<FeatureStopped, RPCError> {
        featureStarters[name.rawValue] = nil
        guard let lock = features.removeValue(forKey: name.rawValue) else {
            return .failure(.refused("feature '\(name)' is not running in this host"))
        }
        lock.release()
        logger.event(.featureStopped, "feature '\(name)' stopped", ["feature": .string(name.rawValue)])
        publish(HostNotification.featureChanged, ["name": .string(name.rawValue), "running": false])
        return .success(FeatureStopped(name: name.rawValue))
    }

    /// Every feature whose lock is held, by this host or anyone else: the
    /// same answer `tether probe feature NAME` gives.
    func featureList() -> FeatureListing {
        let directory = configuration.group.path + "/locks/features"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".lock") }.map { String($0.dropLast(5)) }.sorted()
        var list: [FeatureListing.Running] = []
        for name in names {
            guard let status = try? LockProbe.status(ofLockAt: "\(directory)/\(name).lock"), status.running else { continue }
            list.append(FeatureListing.Running(name: name, pid: status.holder.map { Int64($0.pid) }, since: status.holder?.since,
                                               owner: features[name] != nil ? .host : .other))
        }
        return FeatureListing(list)
    }
}
