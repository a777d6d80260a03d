import CTetherSystem
import Glibc
import Logging
import TetherGroup
import TetherIPC
import SystemPackage
import TetherLog
import TetherLoop
import TetherManifest
import TetherSandbox

/// An extension's output, logged line by line under its name, paused
/// while it writes faster than its rate.
extension ExtensionSupervisor {
    func forward(_ stream: PipeStream?, stream name: String, level: Logger.Level) {
        guard let stream else { return }
        var splitter = LineSplitter()
        let metadata: Logger.Metadata = ["origin": "output", "stream": .string(name)]
        try? stream.startReading { [unowned self] event in
            switch event {
            case .data(let bytes):
                throttle.refill(now: loop.now)
                for line in splitter.append(bytes, admit: { self.throttle.admit(byteCount: $0) }) {
                    self.log(line, level: level, metadata: metadata)
                }
                // Any refused line means the bucket ran dry for this
                // extension's lines: stop reading until it refills.
                let refused = splitter.dropped > 0
                if refused {
                    metrics.droppedLines(manifest.name, splitter.dropped)
                    droppedLines += splitter.dropped
                    droppedSinceReport += splitter.dropped
                    splitter.dropped = 0
                }
                if refused || throttle.isEmpty { pause(stream) }
            case .end, .failed:
                if let rest = splitter.flush() { self.log(rest, level: level, metadata: metadata) }
                pausedStreams.removeAll { $0 === stream }
                stream.close()
            }
        }
    }

    /// One line of its output: a JSON record (`level`, `message`, fields)
    /// at its own level with its fields, any other line as it is.
    func log(_ line: String, level: Logger.Level, metadata: Logger.Metadata) {
        guard let record = LogRecordLine(line) else {
            return logger.log(level: level, "\(line)", metadata: metadata)
        }
        logger.log(level: record.level, "\(record.message)", metadata: record.metadata.merging(metadata) { $1 })
    }

    /// Over its rate: stop reading until the bucket refills. Its pipe fills
    /// and its writes wait; the host spends nothing on it meanwhile.
    func pause(_ stream: PipeStream) {
        stream.stopReading()
        if !pausedStreams.contains(where: { $0 === stream }) { pausedStreams.append(stream) }
        let timer = resumeTimer ?? LoopTimer(loop: loop)
        resumeTimer = timer
        guard !timer.isActive else { return }
        timer.start(afterMilliseconds: OutputThrottle.pauseMilliseconds) { [unowned self] in self.resume() }
    }

    func resume() {
        if droppedSinceReport > 0, lastDropReport == 0 || loop.now - lastDropReport >= 5_000 {
            lastDropReport = loop.now
            let limit = "\(Int(OutputThrottle.linesPerSecond)) lines or \(Int(OutputThrottle.bytesPerSecond) / 1024) KiB"
            logger.warning("extension '\(manifest.name)': \(droppedSinceReport) output lines dropped (it printed more than \(limit) a second)")
            droppedSinceReport = 0
        }
        let streams = pausedStreams
        pausedStreams.removeAll()
        for stream in streams where !stream.isClosed {
            // The reader set up in forward() is still in place: resume it.
            try? stream.resumeReading()
        }
    }
}
