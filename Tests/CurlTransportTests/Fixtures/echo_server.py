#!/usr/bin/env python3
"""A small HTTP(S) server for CurlTransportTests, on the standard library only.

Listens on 127.0.0.1 on a port the system chooses and prints that port on
stdout. It exits by itself after --lifetime seconds, or as soon as its stdin
closes (the test that started it finished or died), so no server outlives
its tests.

Endpoints (any method):
  /echo           the request as JSON: method, path, headers (in order),
                  body (base64), multipart parts, and the client's port (one
                  port across requests means one kept-alive connection)
  /status/<code>  answers with that status
  /redirect       302 to /echo
  /slow?ms=<n>    answers after n milliseconds
  /drop           reads the request, then closes the connection unanswered
  /endless        200 with a chunked JSON body that never ends
  /large?bytes=<n>  200 announcing Content-Length n, then sending n bytes
  /stall          reads the request and never answers (until --lifetime)

--closed-port instead binds a port without listening on it, so connecting to
it is refused, and keeps it until exit so no one else can take it.
--cert/--key serve HTTPS with that certificate.
"""

import argparse
import base64
import http.server
import json
import os
import re
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse


def parse_multipart(content_type, body):
    """Splits a multipart/form-data body by hand: byte-exact, unlike the
    email parser, which may rewrite line endings in binary parts."""
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    if not match:
        return None
    delimiter = b"--" + match.group(1).encode("latin-1")
    parts = []
    for section in body.split(delimiter)[1:]:
        if section.startswith(b"--"):
            break
        if section.startswith(b"\r\n"):
            section = section[2:]
        head, _, data = section.partition(b"\r\n\r\n")
        if data.endswith(b"\r\n"):
            data = data[:-2]
        part = {"name": None, "filename": None, "content_type": None}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-disposition":
                for key, quoted in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', value):
                    if key in ("name", "filename"):
                        part[key] = quoted
            elif name.strip().lower() == "content-type":
                part["content_type"] = value.strip()
        part["data_base64"] = base64.b64encode(data).decode("ascii")
        parts.append(part)
    return parts


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(length) if length else b""

    def respond(self, status, payload, extra_headers=()):
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Request-Method", self.command)
        for name, value in extra_headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        body = self.read_body()
        if url.path == "/echo":
            content_type = self.headers.get("Content-Type", "")
            self.respond(200, {
                "method": self.command,
                "path": url.path,
                "headers": [[name, value] for name, value in self.headers.items()],
                "body_base64": base64.b64encode(body).decode("ascii"),
                "parts": parse_multipart(content_type, body)
                if content_type.startswith("multipart/form-data") else None,
                "client_port": self.client_address[1],
            })
        elif url.path.startswith("/status/"):
            status = int(url.path[len("/status/"):])
            self.respond(status, {"status": status})
        elif url.path == "/redirect":
            self.respond(302, {"status": 302}, [("Location", "/echo")])
        elif url.path == "/slow":
            time.sleep(int(query.get("ms", ["1000"])[0]) / 1000)
            self.respond(200, {"slept_ms": int(query.get("ms", ["1000"])[0])})
        elif url.path == "/endless":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"[" + b'{"id": 1, "name": "x"},' * 2000
            try:
                while True:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    chunk = b'{"id": 1, "name": "x"},' * 2000
            except OSError:
                self.close_connection = True
        elif url.path == "/large":
            size = int(query.get("bytes", ["0"])[0])
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            try:
                block = b" " * 65536
                while size > 0:
                    self.wfile.write(block[:size])
                    size -= len(block)
            except OSError:
                self.close_connection = True
        elif url.path == "/stall":
            time.sleep(3600)
        elif url.path == "/drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        else:
            self.respond(404, {"error": "no such endpoint"})

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


def exit_when_stdin_closes():
    while sys.stdin.buffer.read(4096):
        pass
    os._exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lifetime", type=float, default=20)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--closed-port", action="store_true")
    args = parser.parse_args()

    # A child inherits its parent thread's signal mask, and a test runner's
    # threads may block SIGTERM: unblock it, so that terminating works.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])

    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    threading.Timer(args.lifetime, lambda: os._exit(0)).start()

    if args.closed_port:
        bound = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        bound.bind(("127.0.0.1", 0))
        print(bound.getsockname()[1], flush=True)
        threading.Event().wait()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        # The handshake runs in the request's thread, on first read, so a
        # client that rejects the certificate never blocks the accept loop.
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    # Clients that time out, reject the certificate or reset are what the
    # tests provoke: not worth a traceback each.
    server.handle_error = lambda request, address: None
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
