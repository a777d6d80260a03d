import CLibUV
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process spawned through libuv (`uv_process_t`). libuv reaps it
/// on SIGCHLD and reports the exit on the loop, so no zombie is left behind.
/// The child inherits no Tether descriptor: they are all close-on-exec.
public final class ChildProcess: LoopHandle, @unchecked Sendable {
    public private(set) var pid: Int32 = 0
    public let stdin: PipeStream?
    public let stdout: PipeStream?
    public let stderr: PipeStream?
    public private(set) var exitStatus: TerminationStatus?
    private var onExit: ((TerminationStatus) -> Void)?

    /// Starts `options.executable`. Throws `Errno` (e.g. `.noSuchFileOrDirectory`
    /// for a missing executable) if the child could not be started.
    public static func spawn(
        loop: EventLoop,
        _ options: ProcessOptions,
        onExit: @escaping (TerminationStatus) -> Void
    ) throws(Errno) -> ChildProcess {
        let process = ChildProcess(loop: loop, options: options)
        process.onExit = onExit
        do {
            try process.start(options)
        } catch {
            process.close()
            throw error
        }
        return process
    }

    private init(loop: EventLoop, options: ProcessOptions) {
        stdin = options.stdin == .pipe ? PipeStream(loop: loop) : nil
        stdout = options.stdout == .pipe ? PipeStream(loop: loop) : nil
        stderr = options.stderr == .pipe ? PipeStream(loop: loop) : nil
        super.init(loop: loop)
    }

    private func start(_ options: ProcessOptions) throws(Errno) {
        // libuv learns of the exit through SIGCHLD on this thread.
        SignalMask.unblock(SIGCHLD)
        var argv = ([options.executable] + options.arguments).map { strdup($0) }
        argv.append(nil)
        var envp = options.environment.map { $0.map { strdup($0) } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }

        var stdio = [uv_stdio_container_t](repeating: uv_stdio_container_t(), count: 3)
        let streams = [stdin, stdout, stderr]
        let modes = [options.stdin, options.stdout, options.stderr]
        for fd in 0..<3 {
            switch modes[fd] {
            case .inherit:
                stdio[fd].flags = UV_INHERIT_FD
                stdio[fd].data.fd = Int32(fd)
            case .ignore:
                stdio[fd].flags = UV_IGNORE
            case .pipe:
                // Readable/writable are from the child's point of view.
                let direction = fd == 0 ? UV_READABLE_PIPE.rawValue : UV_WRITABLE_PIPE.rawValue
                stdio[fd].flags = uv_stdio_flags(UV_CREATE_PIPE.rawValue | direction)
                stdio[fd].data.stream = streams[fd]?.stream
            }
        }

        let rc: Int32 = argv.withUnsafeMutableBufferPointer { argvBuffer in
            stdio.withUnsafeMutableBufferPointer { stdioBuffer in
                withOptionalPointer(&envp) { envBuffer in
                    withOptionalCString(options.workingDirectory) { cwd in
                        var uvOptions = uv_process_options_t()
                        uvOptions.file = UnsafePointer(argvBuffer[0])
                        uvOptions.args = argvBuffer.baseAddress
                        uvOptions.env = envBuffer
                        uvOptions.cwd = cwd
                        uvOptions.stdio_count = 3
                        uvOptions.stdio = stdioBuffer.baseAddress
                        uvOptions.flags = options.detached ? UV_PROCESS_DETACHED.rawValue : 0
                        uvOptions.exit_cb = { process, status, signal in
                            guard let me = LoopHandle.object(UnsafeMutableRawPointer(process)) as? ChildProcess
                            else { return }
                            me.exited(signal != 0 ? .signaled(signal) : .exited(Int32(truncatingIfNeeded: status)))
                        }
                        return uv_spawn(loop.uv, raw(uv_process_t.self), &uvOptions)
                    }
                }
            }
        }
        // uv_spawn initialises the handle even when it fails, so it is adopted
        // (and later closed) either way.
        adopt()
        try uvCheck(rc)
        pid = raw(uv_process_t.self).pointee.pid
    }

    private func exited(_ status: TerminationStatus) {
        exitStatus = status
        let callback = onExit
        onExit = nil
        callback?(status)
    }

    /// Sends `signal` to the child. Fails with `.noSuchProcess` once it has
    /// been reaped.
    public func signal(_ signal: Int32) throws(Errno) {
        loop.assertInLoop()
        guard exitStatus == nil, !isClosed else { throw .noSuchProcess }
        try uvCheck(uv_process_kill(raw(uv_process_t.self), signal))
    }

    override func willClose() {
        onExit = nil
        // Output still being read may outlast the process: its reader closes
        // the stream at end of stream. Everything else goes now.
        stdin?.close()
        for stream in [stdout, stderr] where stream?.isReading != true { stream?.close() }
    }
}

private func withOptionalPointer<R>(
    _ array: inout [UnsafeMutablePointer<CChar>?]?,
    _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> R
) -> R {
    guard var entries = array else { return body(nil) }
    defer { array = entries }
    return entries.withUnsafeMutableBufferPointer { body($0.baseAddress) }
}

private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}
