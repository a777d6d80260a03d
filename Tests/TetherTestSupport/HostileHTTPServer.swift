import Foundation

/// An HTTP server that misbehaves on request, for the client's tests:
/// Python's asyncio from the standard library (no virtual environment), on
/// a port the kernel picks, optionally TLS with a self-signed certificate
/// made by openssl(1). Paths:
/// `/ok` (JSON), `/token` (a token set that has already expired),
/// `/slow-headers` (never answers), `/trickle` and `/token-trickle`
/// (headers, then a byte a second), `/close-mid-body`, `/big` (10 MiB with a length),
/// `/big-chunked` (10 MiB, chunked), `/bad-chunked`, `/redirect` (302 to
/// `/ok`), `/garbage` (not HTTP), `/counts` (requests served, by path). It prints
/// `request PATH` as it reads each request.
/// Any path works with any method; a POST body is read and ignored.
package final class HostileHTTPServer: @unchecked Sendable {
    package let process: TestProcess
    package let port: Int
    package let scheme: String
    package var baseURL: String { "\(scheme)://127.0.0.1:\(port)" }

    package init(in directory: TemporaryDirectory, tls: Bool = false) throws {
        let script = directory.path + "/hostile_http.py"
        try writeFile(script, Self.source)
        var arguments = [script]
        if tls {
            let key = directory.path + "/key.pem", certificate = directory.path + "/cert.pem"
            let made = try runCommand("/usr/bin/env", ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                                                       "-keyout", key, "-out", certificate, "-days", "1",
                                                       "-subj", "/CN=127.0.0.1"], timeout: 60)
            guard made.status == 0 else { throw SpawnFailed(description: "openssl req failed: \(made.stderr)") }
            arguments += ["--tls", certificate, key]
        }
        scheme = tls ? "https" : "http"
        process = try TestProcess("/usr/bin/env", ["python3"] + arguments)
        guard let line = try process.readLine(timeout: 30), line.hasPrefix("listening on "),
              let port = Int(line.dropFirst("listening on ".count))
        else { throw TestTimeout(what: "the hostile HTTP server to listen: \((try? process.standardError(timeout: 1)) ?? "")") }
        self.port = port
    }

    deinit { process.signal(SIGKILL) }

    /// Waits (bounded) until the server has read a request for `path`: it
    /// prints a line for each.
    package func waitForRequest(_ path: String, timeout: Double = 20) throws {
        _ = try process.expectLine("request \(path)", timeout: timeout)
    }

    /// Requests served so far, by path.
    package func counts() throws -> [String: Int] {
        (try requestJSON("GET", baseURL + "/counts", nil) as? [String: Int]) ?? [:]
    }

    static let source = #"""
        import asyncio, collections, json, ssl, sys, urllib.parse

        counts = collections.Counter()
        rotation = {"current": None, "issued": 0}

        async def handle(reader, writer):
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except Exception:
                writer.close(); return
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split(" ")
            path = parts[1].split("?", 1)[0] if len(parts) > 1 else "/"
            length = 0
            for header in head.split(b"\r\n")[1:]:
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":", 1)[1])
            body = await reader.readexactly(length) if length else b""
            counts[path] += 1
            print("request %s" % path, flush=True)
            try:
                if path.startswith("/rotating-"):
                    rotate(path[len("/rotating-"):], body, writer)
                else:
                    await respond(path, writer)
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                writer.close()

        def head(status, headers):
            lines = ["HTTP/1.1 %s" % status] + ["%s: %s" % h for h in headers] + ["", ""]
            return "\r\n".join(lines).encode()

        def rotate(value, body, writer):
            form = urllib.parse.parse_qs(body.decode())
            grant = form.get("grant_type", [""])[0]
            if grant == "refresh_token" and form.get("refresh_token", [""])[0] != rotation["current"]:
                counts["stale"] += 1
                answer, status = {"error": "invalid_grant"}, "400 Bad Request"
            else:
                rotation["issued"] += 1
                rotation["current"] = "rotated-%d" % rotation["issued"]
                answer = {"access_token": "access-%d" % rotation["issued"], "refresh_token": rotation["current"],
                          "expires_in": 0 if grant == "password" else value, "token_type": "Bearer"}
                status = "200 OK"
            data = json.dumps(answer).encode()
            writer.write(head(status, [("Content-Type", "application/json"), ("Content-Length", len(data))]) + data)

        async def respond(path, writer):
            if path == "/token":
                body = json.dumps({"access_token": "hostile-access", "refresh_token": "hostile-refresh",
                                   "expires_in": 0, "token_type": "Bearer"}).encode()
                writer.write(head("200 OK", [("Content-Type", "application/json"), ("Content-Length", len(body))]) + body)
            elif path == "/ok":
                body = json.dumps({"ok": True}).encode()
                writer.write(head("200 OK", [("Content-Type", "application/json"), ("Content-Length", len(body))]) + body)
            elif path == "/counts":
                body = json.dumps(counts).encode()
                writer.write(head("200 OK", [("Content-Type", "application/json"), ("Content-Length", len(body))]) + body)
            elif path == "/slow-headers":
                await asyncio.sleep(3600)
            elif path in ("/trickle", "/token-trickle"):
                writer.write(head("200 OK", [("Content-Type", "application/json"), ("Content-Length", 100000)]))
                await writer.drain()
                for _ in range(100000):
                    writer.write(b" ")
                    await writer.drain()
                    await asyncio.sleep(1)
            elif path == "/close-mid-body":
                writer.write(head("200 OK", [("Content-Length", 100)]) + b'{"access_')
            elif path == "/big":
                writer.write(head("200 OK", [("Content-Length", 10 << 20)]))
                for _ in range(10 << 4):
                    writer.write(b"0" * 65536)
                    await writer.drain()
            elif path == "/big-chunked":
                writer.write(head("200 OK", [("Transfer-Encoding", "chunked")]))
                for _ in range(10 << 4):
                    writer.write(b"10000\r\n" + b"0" * 65536 + b"\r\n")
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
            elif path == "/bad-chunked":
                writer.write(head("200 OK", [("Transfer-Encoding", "chunked")]) + b"zz\r\nhello\r\n0\r\n\r\n")
            elif path == "/redirect":
                writer.write(head("302 Found", [("Location", "/ok"), ("Content-Length", 0)]))
            elif path == "/garbage":
                writer.write(b"NOT HTTP AT ALL\r\n\r\n")
            else:
                writer.write(head("404 Not Found", [("Content-Length", 0)]))
            await writer.drain()

        async def main():
            context = None
            if len(sys.argv) > 1 and sys.argv[1] == "--tls":
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(sys.argv[2], sys.argv[3])
            server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context, backlog=512)
            print("listening on %d" % server.sockets[0].getsockname()[1], flush=True)
            async with server:
                await server.serve_forever()

        asyncio.run(main())
        """#
}
