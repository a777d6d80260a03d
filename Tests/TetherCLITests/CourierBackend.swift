import Foundation
import FoundationNetworking  // URLSession (Linux)
import TetherTestSupport

/// The courier app's backend from `reading/05-auth-hardening-plan.txt`, as
/// its plan describes it: FastAPI, `POST /v1/auth/login_password` with
/// `{"identifier","password"}`, `POST /v1/auth/refresh` with
/// `{"refresh_token"}`, JWT access tokens (PyJWT), refresh tokens rotated
/// on every use, and 401 `{"detail": ...}` for a rotated token presented
/// again (which also revokes its family). Written for the tests, run by
/// uvicorn in the tests' own Python environment on a port the kernel picks.
final class CourierBackend: @unchecked Sendable {
    let process: TestProcess
    let port: Int
    let password = "courier-password-\(UUID().uuidString)"
    var baseURL: String { "http://127.0.0.1:\(port)" }
    var loginURL: String { baseURL + "/v1/auth/login_password" }
    var refreshURL: String { baseURL + "/v1/auth/refresh" }

    init(in directory: TemporaryDirectory) throws {
        let python = try PythonEnvironment.python()
        try writeFile(directory.path + "/courier_backend.py", Self.source)
        try writeFile(directory.path + "/courier-password", password + "\n", mode: 0o600)
        process = try TestProcess(python, [directory.path + "/courier_backend.py", directory.path + "/courier-password"])
        guard let line = try process.readLine(timeout: 60), line.hasPrefix("listening on "),
              let port = line.split(separator: ":").last.flatMap({ Int($0) })
        else { throw TestTimeout(what: "the courier backend to listen: \((try? process.standardError(timeout: 1)) ?? "")") }
        self.port = port
    }

    deinit { process.signal(SIGTERM) }

    /// `tether login --style json` as the courier (the password on stdin).
    func login(_ group: TestGroup, password: String? = nil) throws -> CommandResult {
        let login = try group.start(["login", "--style", "json", "--token-url", loginURL, "--refresh-url", refreshURL,
                                     "--username-field", "identifier", "--username", "courier", "--password-stdin"])
        login.writeStdin((password ?? self.password) + "\n")
        login.closeStdin()
        let status = try login.waitForExit(timeout: 30)
        return CommandResult(status: status, stdout: try login.remainingOutput(), stderr: try login.standardError())
    }

    /// Logs in with an access token that has already expired, then gives
    /// later tokens `ttl` seconds: the next token read refreshes.
    func loginExpired(_ group: TestGroup, ttl: Double = 3600) throws {
        try post("/admin/settings", ["accessTTL": -5])
        let result = try login(group)
        try post("/admin/settings", ["accessTTL": ttl])
        guard result.status == 0 else { throw TestTimeout(what: "login: \(result.stderr)") }
    }

    func counters() throws -> [String: Int] {
        (try requestJSON("GET", baseURL + "/counters", nil) as? [String: Int]) ?? [:]
    }

    @discardableResult
    func post(_ path: String, _ body: [String: Any]) throws -> Any {
        try requestJSON("POST", baseURL + path, body)
    }

    static let source = #"""
        import secrets, socket, sys, threading, time
        import jwt, uvicorn
        from fastapi import FastAPI
        from fastapi.responses import HTMLResponse, JSONResponse
        from pydantic import BaseModel

        KEY = secrets.token_bytes(32)
        with open(sys.argv[1]) as f:
            USERS = {"courier": f.read().strip()}
        lock = threading.Lock()
        settings = {"accessTTL": 3600.0}
        # The next `count` refreshes answer `status`: with html=1 a proxy's page,
        # else the backend's own JSON {"detail"} (a 403 that ends the session).
        faults = {"status": 503, "count": 0, "html": 0}
        counters = {"logins": 0, "loginFailures": 0, "refreshes": 0, "reuseDetected": 0, "rejections": 0,
                    "unavailable": 0}
        active = {}       # refresh token -> (family, user)
        rotated = {}      # refresh token already used -> family
        revoked = set()   # families

        app = FastAPI()

        class Login(BaseModel):
            identifier: str
            password: str

        class Refresh(BaseModel):
            refresh_token: str

        def issue(user, family):
            now = time.time()
            access = jwt.encode({"sub": user, "iat": int(now), "exp": int(now + settings["accessTTL"]),
                                 "jti": secrets.token_hex(8)}, KEY, algorithm="HS256")
            refresh = secrets.token_urlsafe(32)
            active[refresh] = (family, user)
            return {"access_token": access, "refresh_token": refresh, "token_type": "bearer"}

        @app.post("/v1/auth/login_password")
        def login(body: Login):
            with lock:
                if USERS.get(body.identifier) != body.password:
                    counters["loginFailures"] += 1
                    return JSONResponse({"detail": "Invalid credentials"}, status_code=401)
                counters["logins"] += 1
                return issue(body.identifier, secrets.token_hex(8))

        @app.post("/v1/auth/refresh")
        def refresh(body: Refresh):
            with lock:
                if faults["count"] > 0:
                    faults["count"] -= 1
                    counters["unavailable"] += 1
                    if faults["html"]:
                        return HTMLResponse("<html><body>Forbidden by policy</body></html>", status_code=faults["status"])
                    detail = "Forbidden" if faults["status"] == 403 else "Service unavailable"
                    return JSONResponse({"detail": detail}, status_code=faults["status"])
                token = body.refresh_token
                if token in active:
                    family, user = active.pop(token)
                    rotated[token] = family
                    if family not in revoked:
                        counters["refreshes"] += 1
                        return issue(user, family)
                elif token in rotated:
                    counters["reuseDetected"] += 1
                    revoked.add(rotated[token])
                counters["rejections"] += 1
                return JSONResponse({"detail": "Invalid or expired refresh token"}, status_code=401)

        @app.post("/admin/settings")
        def set_settings(body: dict):
            with lock:
                settings.update({k: float(v) for k, v in body.items() if k in settings})
                return settings

        @app.post("/admin/faults")
        def set_faults(body: dict):
            with lock:
                faults.update({k: int(v) for k, v in body.items() if k in faults})
                return faults

        @app.post("/admin/revoke")
        def revoke_all(body: dict):
            with lock:
                revoked.update(family for family, _ in active.values())
                return {"revoked": len(revoked)}

        @app.get("/counters")
        def get_counters():
            with lock:
                return counters

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        print("listening on 127.0.0.1:%d" % sock.getsockname()[1], flush=True)
        uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])
        """#
}
