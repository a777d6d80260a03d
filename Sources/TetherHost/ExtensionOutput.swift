import Logging
import TetherLog
import TetherLoop

/// An extension's output, logged line by line under its name (a JSON
/// record at its own level with its fields, any other line as it is), and
/// paused while it writes faster than its rate: its pipe fills and its
/// writes wait, and the host spends nothing on it meanwhile. Lives on the
/// host's loop, as long as its supervisor.
final class ExtensionOutput {
    private let name: String
    private let loop: EventLoop
    private let logger: Logger
    private let metrics: HostMetrics
    private var throttle: OutputThrottle
    private var paused: [PipeStream] = []
    private var resumeTimer: LoopTimer?
    /// Lines dropped by the rate limit since the host started.
    private(set) var droppedLines = 0
    private var droppedSinceReport = 0
    private var lastDropReport: UInt64 = 0

    init(name: String, loop: EventLoop, logger: Logger, metrics: HostMetrics) {
        self.name = name
        self.loop = loop
        self.logger = logger
        self.metrics = metrics
        throttle = OutputThrottle(now: loop.now)
    }

    func forward(_ stream: PipeStream?, stream streamName: String, level: Logger.Level) {
        guard let stream else { return }
        var splitter = LineSplitter()
        let metadata: Logger.Metadata = ["origin": "output", "stream": .string(streamName)]
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
                    metrics.droppedLines(name, splitter.dropped)
                    droppedLines += splitter.dropped
                    droppedSinceReport += splitter.dropped
                    splitter.dropped = 0
                }
                if refused || throttle.isEmpty { pause(stream) }
            case .end, .failed:
                if let rest = splitter.flush() { self.log(rest, level: level, metadata: metadata) }
                paused.removeAll { $0 === stream }
                stream.close()
            }
        }
    }

    /// Reading again now, whatever the rate: paused output would keep a
    /// dying extension blocked on its pipe, and a pipe must be read to its end.
    func resumeForStop() {
        resumeTimer?.close()
        resumeTimer = nil
        resume()
    }

    private func log(_ line: String, level: Logger.Level, metadata: Logger.Metadata) {
        guard let record = LogRecordLine(line) else {
            return logger.log(level: level, "\(line)", metadata: metadata)
        }
        logger.log(level: record.level, "\(record.message)", metadata: record.metadata.merging(metadata) { $1 })
    }

    private func pause(_ stream: PipeStream) {
        stream.stopReading()
        if !paused.contains(where: { $0 === stream }) { paused.append(stream) }
        let timer = resumeTimer ?? LoopTimer(loop: loop)
        resumeTimer = timer
        guard !timer.isActive else { return }
        timer.start(afterMilliseconds: OutputThrottle.pauseMilliseconds) { [unowned self] in self.resume() }
    }

    private func resume() {
        if droppedSinceReport > 0, lastDropReport == 0 || loop.now - lastDropReport >= 5_000 {
            lastDropReport = loop.now
            let limit = "\(Int(OutputThrottle.linesPerSecond)) lines or \(Int(OutputThrottle.bytesPerSecond) / 1024) KiB"
            logger.warning("extension '\(name)': \(droppedSinceReport) output lines dropped (it printed more than \(limit) a second)")
            droppedSinceReport = 0
        }
        let streams = paused
        paused.removeAll()
        for stream in streams where !stream.isClosed {
            // The reader set up in forward() is still in place: resume it.
            try? stream.resumeReading()
        }
    }
}
