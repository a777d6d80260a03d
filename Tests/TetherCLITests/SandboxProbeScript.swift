import TetherIPC
extension SandboxTests {
    /// Tries everything, prints `RESULT {...}` (errno names or "ok"), then
    /// stays attached until the host closes its connection.
    static let probeScript = """
        import errno, fcntl, json, os, signal, socket, struct, sys
        group, outside, port, role = os.environ["TETHER_GROUP"], sys.argv[1], int(sys.argv[2]), sys.argv[3]
        r = {}
        def attempt(name, f):
            try:
                f(); r[name] = "ok"
            except OSError as e:
                r[name] = errno.errorcode.get(e.errno, str(e.errno))
        def write(path):
            with open(path, "w") as fh: fh.write("x")
        attempt("group", lambda: write(os.path.join(group, "shared", "x")))
        attempt("groupRead", lambda: open(os.path.join(group, "shared", "existing")).read())
        secrets = os.path.join(os.path.dirname(group), "." + os.path.basename(group) + ".secrets")
        attempt("secrets", lambda: open(os.path.join(secrets, "credentials.json")).read())
        attempt("secretsList", lambda: os.listdir(secrets))
        attempt("secretsHardLink", lambda: os.link(os.path.join(secrets, "credentials.json"), os.path.join(os.environ["TMPDIR"], "c")))
        attempt("otherSecrets", lambda: open(os.path.join(os.path.dirname(group), ".other.secrets", "credentials.json")).read())
        def io_uring():
            # io_uring_setup(1, params): it would make sockets without socket().
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            params = ctypes.create_string_buffer(120)
            fd = libc.syscall(ctypes.c_long(425), ctypes.c_long(1), params)
            if fd < 0: raise OSError(ctypes.get_errno(), "io_uring_setup")
            os.close(fd)
        attempt("ioUring", io_uring)
        attempt("secretsByLink", lambda: open(os.path.join(os.path.dirname(group), "link", "credentials.json")).read())
        attempt("outside", lambda: write(os.path.join(outside, "x")))
        attempt("tmp", lambda: write(os.path.join(os.environ["TMPDIR"], "x")))
        attempt("chmod", lambda: os.chmod(os.path.join(group, "shared", "existing"), 0o644))
        attempt("inheritedFd", lambda: os.write(7, b"leaked"))
        import termios
        attempt("tiocsti", lambda: fcntl.ioctl(0, termios.TIOCSTI, b"x"))
        attempt("tcp", lambda: socket.create_connection(("127.0.0.1", port), timeout=5).close())
        def udp():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", port)); s.close()
        attempt("udp", udp)
        def probe():
            fd = os.open(os.path.join(group, "locks", "features", "recording.lock"), os.O_RDONLY)
            try:
                # Asked, not taken (F_OFD_GETLK, as Tether's probe does): a
                # read-only role may take no lock.
                asked = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0) + bytes(4)
                held = struct.unpack("hhqqi", fcntl.fcntl(fd, 36, asked)[:28])[0] == fcntl.F_WRLCK
                r["recording"] = "running" if held else "not running"
            finally:
                os.close(fd)
        attempt("probe", probe)
        def lock_high_bits():
            # F_SETLK with the upper half of the register set: the kernel
            # reads an unsigned int, so the filter must too.
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            number = {"x86_64": 72, "aarch64": 25}[os.uname().machine]
            fd = os.open(os.path.join(os.environ["TMPDIR"], "lockfile"), os.O_RDWR | os.O_CREAT)
            lock = ctypes.create_string_buffer(struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0) + bytes(4))
            if libc.syscall(ctypes.c_long(number), ctypes.c_long(fd), ctypes.c_long(6 | (1 << 32)), lock) != 0:
                raise OSError(ctypes.get_errno(), "fcntl")
        attempt("lockHighBits", lock_high_bits)
        def ptrace_host():
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            # PTRACE_ATTACH: the host, as a debugger would take it.
            if libc.ptrace(ctypes.c_long(16), ctypes.c_long(int(os.environ["TETHER_HOST_PID"])), None, None) != 0:
                raise OSError(ctypes.get_errno(), "ptrace")
        attempt("ptraceHost", ptrace_host)
        # Signal 0: the same permission check as any signal, and the host
        # lives on where the kernel has no scoping to refuse it.
        attempt("killHost", lambda: os.kill(int(os.environ["TETHER_HOST_PID"]), 0))
        # No Unix socket of its own (pairs stay): it speaks through its link.
        attempt("unixSocket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
        attempt("socketPair", lambda: [end.close() for end in socket.socketpair()])
        # What an allowlist refuses that the kernel would otherwise allow.
        import ctypes, resource
        libc = ctypes.CDLL(None, use_errno=True)
        arch = os.uname().machine
        numbers = {"x86_64": {"keyctl": 250, "unshare": 272, "sethostname": 170, "shmget": 29},
                   "aarch64": {"keyctl": 219, "unshare": 97, "sethostname": 161, "shmget": 194}}[arch]
        def raw(name, *args):
            if libc.syscall(ctypes.c_long(numbers[name] if isinstance(name, str) else name),
                            *[ctypes.c_long(a) for a in args]) < 0:
                raise OSError(ctypes.get_errno(), name)
        host = int(os.environ["TETHER_HOST_PID"])
        store = os.path.join(group, "shared", "existing")
        def on_store(f):
            fd = os.open(store, os.O_RDONLY)
            try: f(fd)
            finally: os.close(fd)
        # A lease on a file opened to read keeps every writer out.
        attempt("lease", lambda: on_store(lambda fd: fcntl.fcntl(fd, 1024, fcntl.F_RDLCK)))
        attempt("prlimitHost", lambda: resource.prlimit(host, resource.RLIMIT_NOFILE, (8, 8)))
        attempt("prlimitSelf", lambda: resource.prlimit(0, resource.RLIMIT_CORE, (0, 0)))
        attempt("affinityHost", lambda: os.sched_setaffinity(host, {0}))
        attempt("priorityHost", lambda: os.setpriority(os.PRIO_PROCESS, host, 19))
        attempt("priorityUser", lambda: os.setpriority(os.PRIO_USER, 0, 19))
        def mapping(flags):
            libc.mmap.restype = ctypes.c_void_p
            address = libc.mmap(None, ctypes.c_size_t(1 << 20), 3, flags, -1, ctypes.c_long(0))
            if address in (None, ctypes.c_void_p(-1).value): raise OSError(ctypes.get_errno(), "mmap")
        attempt("growsDown", lambda: mapping(0x02 | 0x20 | 0x100))
        attempt("privateMapping", lambda: mapping(0x02 | 0x20))
        attempt("sysvShm", lambda: raw("shmget", 0, 1 << 20, 0o1600))
        # FS_IOC_SETFLAGS with no flag at all: refused before it is read.
        attempt("inodeFlags", lambda: on_store(lambda fd: fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0))))
        attempt("chmod", lambda: os.chmod(store, 0o644))
        # umask(0) "succeeds" and changes nothing: what it makes stays its own.
        r["umask"] = oct(os.umask(0)) + "," + oct(os.umask(0o022))
        tmpfile = os.path.join(os.environ["TMPDIR"], "mine")
        write(tmpfile)
        r["madeMode"] = oct(os.stat(tmpfile).st_mode & 0o777)
        os.mkdir(os.path.join(os.environ["TMPDIR"], "made"), 0o777)
        r["madeDirectoryMode"] = oct(os.stat(os.path.join(os.environ["TMPDIR"], "made")).st_mode & 0o777)
        attempt("chmodTmp", lambda: os.chmod(tmpfile, 0o700))
        attempt("chmodWide", lambda: os.chmod(tmpfile, 0o644))
        attempt("chmodSetuid", lambda: os.chmod(tmpfile, 0o4700))
        attempt("chown", lambda: os.chown(store, os.getuid(), os.getgid()))
        attempt("setxattr", lambda: os.setxattr(tmpfile, "user.tether", b"x"))
        attempt("utimeExplicit", lambda: os.utime(store, (1, 1)))
        attempt("touch", lambda: os.utime(tmpfile, None))
        def socket_file():
            # A pair's end bound to a path: a socket file where a client
            # could look for the host's.
            a, b = socket.socketpair()
            try: a.bind(os.path.join(os.environ["TMPDIR"], "fake.sock"))
            finally: a.close(); b.close()
        attempt("socketFile", socket_file)
        # One host per group (invariant 21): the socket and the lock files
        # keep their names, and nothing is made at the group's top level.
        attempt("unlinkSocket", lambda: os.unlink(os.path.join(group, "host.sock")))
        attempt("renameHostLock", lambda: os.rename(os.path.join(group, "locks", "host.lock"), os.path.join(group, "locks", "x")))
        attempt("renameLocks", lambda: os.rename(os.path.join(group, "locks"), os.path.join(group, "shared", "locks")))
        # Another extension's instance lock: a lock on it would make the
        # host think that extension runs outside it.
        def sibling_lock():
            fd = os.open(os.path.join(group, "locks", "extensions", "sibling.lock"), os.O_RDONLY)
            try: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            finally: os.close(fd)
        attempt("siblingLock", sibling_lock)
        stores_lock = os.path.join(group, "locks", "stores", "defaults.lock")
        attempt("renameStoreLock", lambda: os.rename(stores_lock, stores_lock + ".x"))
        attempt("topLevelFile", lambda: write(os.path.join(group, "x")))
        def store_write():
            # As the SDK writes a store: under its lock, a new file renamed over.
            fd = os.open(stores_lock, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                write(os.path.join(group, "stores", "probe.json.tmp"))
                os.rename(os.path.join(group, "stores", "probe.json.tmp"), os.path.join(group, "stores", "probe.json"))
            finally: os.close(fd)
        attempt("storeWrite", store_write)
        attempt("datagramPair", lambda: [end.close() for end in socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)])
        attempt("userNamespace", lambda: raw("unshare", 0x10000000))
        def clone_parent():
            # clone(CLONE_PARENT | SIGCHLD): the child would be the host's.
            pid = libc.syscall(ctypes.c_long({"x86_64": 56, "aarch64": 220}[arch]), ctypes.c_long(0x8000 | 17),
                               ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
            if pid == 0: os._exit(0)
            if pid < 0: raise OSError(ctypes.get_errno(), "clone")
        attempt("cloneParent", clone_parent)
        attempt("sethostname", lambda: raw("sethostname", 0, 0))
        def i386_call():
            # getpid through int 0x80, the i386 table: another
            # architecture's calls would bypass the filter's numbers.
            code = bytes([0xb8, 0x14, 0, 0, 0, 0xcd, 0x80, 0xc3])  # mov eax, 20; int 0x80; ret
            libc.mmap.restype = ctypes.c_void_p
            address = libc.mmap(None, ctypes.c_size_t(4096), 7, 0x02 | 0x20, -1, ctypes.c_long(0))
            if address in (None, ctypes.c_void_p(-1).value): raise OSError(ctypes.get_errno(), "mmap")
            ctypes.memmove(address, code, len(code))
            rc = ctypes.CFUNCTYPE(ctypes.c_int)(address)()
            if rc < 0: raise OSError(-rc, "int 0x80")
        if arch == "x86_64": attempt("i386Call", i386_call)
        # Root's special treatment gone for good (set only where it was root).
        bits = libc.prctl(27, 0, 0, 0, 0)  # PR_GET_SECUREBITS
        r["secureBits"] = ("noroot" if bits & 3 == 3 else "unset") if os.geteuid() == 0 else "not root"
        attempt("keyring", lambda: raw("keyctl", 0, -3, 0))  # KEYCTL_GET_KEYRING_ID of the session's
        attempt("hostEnviron", lambda: open("/proc/%d/environ" % host, "rb").read())
        r["userToken"] = "inherited" if "GH_TOKEN" in os.environ else "absent"
        attempt("pidfd", lambda: raw(434, host, 0))
        status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
        held = [k for k in ("CapInh", "CapPrm", "CapEff", "CapAmb") if int(status[k], 16) != 0]
        if os.geteuid() == 0 and int(status["CapBnd"], 16) != 0: held.append("CapBnd")
        r["capabilities"] = ",".join(held) or "none"
        def big_file():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            fd = os.open(os.path.join(os.environ["TMPDIR"], "big"), os.O_WRONLY | os.O_CREAT, 0o600)
            try: os.pwrite(fd, b"x", 256 << 20)
            finally: os.close(fd)
        attempt("bigFile", big_file)
        # Limits it may not raise: descriptors (each may hold a socket's
        # buffers) and a stack of 8 MiB (the host runs with none).
        r["descriptorLimit"] = "%d/%d" % resource.getrlimit(resource.RLIMIT_NOFILE)
        def raise_descriptors():
            try: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 4096))
            except ValueError: raise OSError(errno.EPERM, "setrlimit")  # Python's word for EPERM here
        attempt("raiseDescriptors", raise_descriptors)
        r["stackLimit"] = str(resource.getrlimit(resource.RLIMIT_STACK)[0])
        link = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
        c = (link, link.makefile("r", encoding="utf-8", newline="\\n"))
        def call(c, id, method, params):
            c[0].sendall((json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\\n").encode())
            for line in c[1]:
                m = json.loads(line)
                if m.get("id") == id: return "error" if "error" in m else "ok"
        # Before its hello, then a hello as another, then its own.
        r["stopWithoutHello"] = call(c, 1, "\(HostMethod.featureStop)", {"name": "recording"})
        r["helloAsOther"] = call(c, 2, "\(HostMethod.hello)", {"name": "someone-else", "role": "widget"})
        r["stopAfterOtherHello"] = call(c, 3, "\(HostMethod.featureStop)", {"name": "recording"})
        r["tmpdir"] = os.environ["TMPDIR"]
        r["hello"] = call(c, 4, "\(HostMethod.hello)", {"name": os.environ["TETHER_EXTENSION"], "role": role,
                                                    "openAccess": os.environ["TETHER_OPEN_ACCESS"] == "1"})
        r["stopAfterHello"] = call(c, 5, "\(HostMethod.featureStop)", {"name": "recording"})
        print("RESULT " + json.dumps(r, sort_keys=True), flush=True)
        # Then a store the host replaced after the launch (a new inode).
        with open(sys.argv[4]) as gate: gate.readline()
        attempt("later", lambda: open(os.path.join(group, "stores", "defaults.json")).read())
        print("LATER " + r["later"], flush=True)
        for line in c[1]: pass
        """
}
