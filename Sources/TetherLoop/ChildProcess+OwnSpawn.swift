import CTetherSystem
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// The one fork and exec of Tether's own (`tether_spawn`, in C): for
    /// `options` (the executable looked up in PATH as execvp would), with
    /// `stdio` as the child's 0, 1 and 2 (-1: /dev/null). Returns its pid
    /// and a pidfd (-1 with `withoutPidfd`); the caller reaps it. `keepInherited` leaves open what
    /// this process inherited without close-on-exec, as a shell does for a
    /// foreground command; otherwise the child gets nothing but its stdio.
    static func ownSpawn(_ options: ProcessOptions, stdio: (Int32, Int32, Int32),
                         keepInherited: Bool = false, withoutPidfd: Bool = false) throws(Errno) -> (pid: Int32, pidfd: Int32) {
        let path = try resolve(options.executable, environment: options.environment)
        var argv = ([options.executable] + options.arguments).map { strdup($0) }
        argv.append(nil)
        var envp = options.environment.map { $0.map { strdup($0) } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        guard !argv.dropLast().contains(where: { $0 == nil }), envp?.dropLast().contains(where: { $0 == nil }) != true else {
            throw .noMemory
        }
        var pid: Int32 = 0
        var pidfd: Int32 = -1
        let rc: Int32 = withOptionalCString(path) { pathPointer in
            withOptionalCString(options.workingDirectory) { cwd in
                argv.withUnsafeMutableBufferPointer { argvBuffer in
                    withOptionalPointer(&envp) { envBuffer in
                        var request = tether_spawn_request()
                        request.path = pathPointer
                        request.argv = UnsafePointer(argvBuffer.baseAddress)
                        request.envp = UnsafePointer(envBuffer)
                        request.working_directory = cwd
                        request.stdio = stdio
                        request.new_session = options.detached ? 1 : 0
                        request.parent_death_signal = options.parentDeathSignal ?? 0
                        request.descriptor_soft_limit = Int64(options.descriptorSoftLimit ?? 0)
                        request.passed_descriptor = options.passedDescriptor ?? -1
                        request.keep_inherited = keepInherited ? 1 : 0
                        request.without_pidfd = withoutPidfd ? 1 : 0
                        return SpawnConfinement.spawn(&request, confinement: options.confinement, pid: &pid, pidfd: &pidfd)
                    }
                }
            }
        }
        guard rc == 0 else { throw Errno(rawValue: -rc) }
        return (pid, pidfd)
    }
}
