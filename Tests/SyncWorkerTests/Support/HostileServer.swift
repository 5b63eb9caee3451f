import Foundation
import LedgerTestSupport

/// A hostile API server (a Python script on the standard library, kept here
/// so the test target has no file besides Swift), running as a child
/// process for one test: it stalls, answers without end, sends a 50 KB
/// error, or breaks the id rules, as its `Mode` says. It listens on
/// 127.0.0.1, exits by itself after `lifetime` seconds or when its stdin
/// closes, and is terminated when this value goes away.
final class HostileServer: @unchecked Sendable {
    enum Mode: String, CaseIterable, Sendable {
        case stall, endless, hugeError = "huge-error", textID = "text-id", localUser = "local-user"
        /// The history holds one record, 42, completed at the time given (`completedAt`).
        case history
    }

    private let server: ScriptServer
    private let directory = TemporaryDirectory(prefix: "hostile-server")

    var port: Int { server.port }
    var baseURL: String { "http://127.0.0.1:\(port)/api/v1" }

    /// One line per request received: "GET /api/v1/facilities".
    var requests: [String] {
        let text = (try? String(contentsOfFile: directory.appending("requests.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// `completedAt`: the history record's `completed_at`, as the server writes it (`.history`).
    init(_ mode: Mode, lifetime: Int = 60, completedAt: String = "") throws {
        let script = directory.appending("hostile_server.py")
        try Data(Self.script.utf8).write(to: URL(fileURLWithPath: script))
        server = try ScriptServer(
            script: script,
            arguments: [
                "--mode", mode.rawValue, "--log", directory.appending("requests.log"), "--lifetime", "\(lifetime)",
                "--completed-at", completedAt,
            ])
    }

    static let script = #"""
        #!/usr/bin/env python3
        """A hostile API server for the tests of jqc against bad answers, on the
        standard library only.

        Listens on 127.0.0.1 on a port the system chooses, prints that port on
        stdout, and writes one line per request received ("METHOD PATH") to --log.
        It exits by itself after --lifetime seconds, or as soon as its stdin closes.

        --mode:
          stall        reads each request and never answers
          endless      answers every GET with a JSON list that never ends
          huge-error   answers everything 500 with a 50 KB "error" message
          text-id      POST /inspections answers 201 with the id "abc-1" (not an integer);
                       the history (GET /inspections) is empty
          local-user   POST /auth/login answers tokens and the user id "local:Dan"
          history      GET /inspections (the history) holds one record, 42, of the
                       reference fixtures' template 11 at facility 101, area 1001 by
                       its id only, as the reference backend's summary names it,
                       completed at --completed-at as given (with a zone or not)
        """

        import argparse
        import http.server
        import json
        import os
        import signal
        import sys
        import threading
        import time


        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            mode = "stall"
            log = None
            completed_at = ""

            def log_message(self, format, *args):
                pass

            def answer(self, status, payload):
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def handle_any(self):
                length = int(self.headers.get("Content-Length", "0"))
                if length:
                    self.rfile.read(length)
                with open(Handler.log, "a") as log:
                    log.write(f"{self.command} {self.path}\n")
                mode = Handler.mode
                if mode == "stall":
                    time.sleep(3600)
                elif mode == "endless" and self.command == "GET":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    chunk = b'{"ok": true, "data": [' + b'{"id": 1, "name": "Annex"},' * 2000
                    try:
                        while True:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                            chunk = b'{"id": 1, "name": "Annex"},' * 2000
                    except OSError:
                        self.close_connection = True
                elif mode == "huge-error":
                    self.answer(500, {"ok": False, "error": "proxy error " + "x" * 50_000})
                elif mode == "text-id" and self.command == "POST" and self.path.endswith("/inspections"):
                    self.answer(201, {"ok": True, "data": {"id": "abc-1"}})
                elif mode == "text-id" and self.path.startswith("/api/v1/inspections?"):
                    self.answer(200, {"ok": True, "data": {"inspections": [], "total": 0}})
                elif mode == "history" and self.command == "GET" and self.path.startswith("/api/v1/inspections?"):
                    self.answer(200, {"ok": True, "data": {"total": 1, "inspections": [{
                        "id": 42, "template_id": 11, "template_name": "Restroom QC", "facility_id": 101,
                        "facility_name": "Riverside Medical Center", "area_id": 1001, "area_name": None,
                        "inspector_name": "Dana Inspector", "completed_at": Handler.completed_at,
                        "overall_score": 80, "follow_up_required": False, "parent_inspection_id": None,
                        "form_data": {"2": 4, "5": "pass"}}]}})
                elif mode == "local-user" and self.path.endswith("/auth/login"):
                    self.answer(200, {"ok": True, "data": {
                        "access_token": "hostile-access-token", "refresh_token": "hostile-refresh-token",
                        "user": {"id": "local:Dan", "username": "dan", "role": "inspector", "display_name": "Dan"}}})
                else:
                    self.answer(404, {"ok": False, "error": "not here"})

            do_GET = do_POST = do_PUT = do_DELETE = handle_any


        def exit_when_stdin_closes():
            while sys.stdin.buffer.read(4096):
                pass
            os._exit(0)


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--mode", required=True)
            parser.add_argument("--log", required=True)
            parser.add_argument("--lifetime", type=float, default=60)
            parser.add_argument("--completed-at", default="")
            args = parser.parse_args()
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
            threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
            threading.Timer(args.lifetime, lambda: os._exit(0)).start()
            Handler.mode = args.mode
            Handler.log = args.log
            Handler.completed_at = args.completed_at
            open(args.log, "w").close()
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            server.daemon_threads = True
            server.handle_error = lambda request, address: None
            print(server.server_address[1], flush=True)
            server.serve_forever()


        if __name__ == "__main__":
            main()
        """#
}
