#!/usr/bin/env python3
"""A small HTTP file server for the download tests (tests/net).

Serves files under --root on 127.0.0.1 at an ephemeral port and prints that port on stdout, one
line, once it is listening. Python's http.server ignores Range, so GET here implements it
(206 + Content-Range, 416 past the end); switches make it misbehave the way real servers do:

  --drop-after N      send only N body bytes, then close the connection (Content-Length still
                      promises the whole body), for the first --drop-requests requests (default 1)
  --stall-after N     send N body bytes, then stop sending without closing (low-speed timeouts)
  --ignore-range      answer every GET with 200 and the whole file, as servers without Range do
  /redirect/PATH      302 to /PATH (any request)
  a missing file      404

Every request is logged to --log as one line: METHOD PATH range=<Range header or ->.
"""
import argparse
import http.server
import os
import re
import sys
import threading
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--drop-after", type=int, default=-1)
    parser.add_argument("--drop-requests", type=int, default=1)
    parser.add_argument("--stall-after", type=int, default=-1)
    parser.add_argument("--ignore-range", action="store_true")
    args = parser.parse_args()
    lock = threading.Lock()
    state = {"drops_left": args.drop_requests}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):  # keep stderr quiet; the request log is the record
            pass

        def log_request_line(self):
            with lock, open(args.log, "a") as log:
                log.write(f"{self.command} {self.path} range={self.headers.get('Range', '-')}\n")

        def do_HEAD(self):
            self.handle_get(send_body=False)

        def do_GET(self):
            self.handle_get(send_body=True)

        def handle_get(self, send_body):
            self.log_request_line()
            path = self.path.split("?", 1)[0]
            if path.startswith("/redirect/"):
                self.send_response(302)
                self.send_header("Location", path[len("/redirect"):])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            file = os.path.realpath(os.path.join(args.root, path.lstrip("/")))
            if not file.startswith(os.path.realpath(args.root) + os.sep) or not os.path.isfile(file):
                body = b"not found\n"
                self.send_response(404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if send_body:
                    self.wfile.write(body)
                return
            with open(file, "rb") as f:
                data = f.read()
            size = len(data)
            start, end = 0, size - 1
            status = 200
            match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
            if match and not args.ignore_range:
                start = int(match.group(1))
                end = min(int(match.group(2)), size - 1) if match.group(2) else size - 1
                if start >= size:
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status = 206
            body = data[start:end + 1]
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Accept-Ranges", "none" if args.ignore_range else "bytes")
            self.send_header("Content-Length", str(len(body)))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.end_headers()
            if not send_body:
                return
            with lock:
                drop = args.drop_after >= 0 and state["drops_left"] > 0
                if drop:
                    state["drops_left"] -= 1
            if drop:
                self.wfile.write(body[:args.drop_after])
                self.wfile.flush()
                self.close_connection = True
                return
            if args.stall_after >= 0:
                self.wfile.write(body[:args.stall_after])
                self.wfile.flush()
                time.sleep(3600)  # the test kills the server
                return
            self.wfile.write(body)

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True  # a stalled handler must not keep the process alive

        def handle_error(self, request, client_address):
            # Clients that give up mid-transfer (cancel, timeout) are what the tests do on purpose.
            if not isinstance(sys.exc_info()[1], ConnectionError):
                super().handle_error(request, client_address)

    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
