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

  --metadata aws|gcp|azure   also play that cloud's instance metadata service (tests/lifecycle): the
                      values are files under --root at the request path (query ignored), so a test
                      posts a notice by writing a file; a folder answers with its listing. The
                      provider's required request headers are checked, so a test proves we send them:
                        aws    PUT /latest/api/token needs X-aws-ec2-metadata-token-ttl-seconds (else
                               400) and returns a token; GET /latest/... needs that token in
                               X-aws-ec2-metadata-token (else 401)
                        gcp    /computeMetadata/... needs Metadata-Flavor: Google (else 403)
                        azure  /metadata/... needs Metadata: true (else 400)
                      The other two providers' paths answer 404, as on another cloud.
  --imdsv1            with --metadata aws: refuse the token PUT (403), accept GETs without a token

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
    parser.add_argument("--metadata", choices=["aws", "gcp", "azure"])
    parser.add_argument("--imdsv1", action="store_true")
    args = parser.parse_args()
    aws_token = "framelift-test-token"
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

        def do_PUT(self):
            if not args.metadata:  # what BaseHTTPRequestHandler answers without do_PUT
                self.send_error(501, "Unsupported method ('PUT')")
                return
            self.log_request_line()
            self.rfile.read(int(self.headers.get("Content-Length", "0") or "0"))
            if not self.answer_metadata(send_body=True):
                self.reply(405, b"method not allowed\n", True)

        def reply(self, status, body, send_body, headers=()):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if send_body:
                self.wfile.write(body)

        def answer_metadata(self, send_body):
            """Answers a metadata request that is refused or not a plain file; False otherwise."""
            path = self.path.split("?", 1)[0]
            if path.startswith("/latest/"):
                provider = "aws"
            elif path.startswith("/computeMetadata/"):
                provider = "gcp"
            elif path.startswith("/metadata/"):
                provider = "azure"
            else:
                return False
            if provider != args.metadata:
                self.reply(404, b"not found\n", send_body)
                return True
            if provider == "aws" and self.command == "PUT":
                if path != "/latest/api/token":
                    return False
                if args.imdsv1:
                    self.reply(403, b"forbidden\n", send_body)
                elif not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                    self.reply(400, b"missing X-aws-ec2-metadata-token-ttl-seconds\n", send_body)
                else:
                    self.reply(200, aws_token.encode(), send_body)
                return True
            if provider == "aws" and not args.imdsv1 and self.headers.get("X-aws-ec2-metadata-token") != aws_token:
                self.reply(401, b"unauthorized\n", send_body)
                return True
            if provider == "gcp" and self.headers.get("Metadata-Flavor") != "Google":
                self.reply(403, b"missing Metadata-Flavor: Google\n", send_body)
                return True
            if provider == "azure" and self.headers.get("Metadata") != "true":
                self.reply(400, b'{"error": "Bad request. Required metadata header not specified"}', send_body)
                return True
            if self.command == "PUT":
                return False
            folder = os.path.realpath(os.path.join(args.root, path.lstrip("/")))
            if folder.startswith(os.path.realpath(args.root) + os.sep) and os.path.isdir(folder):
                listing = "\n".join(sorted(os.listdir(folder))).encode()
                self.reply(200, listing, send_body)
                return True
            return False

        def handle_get(self, send_body):
            self.log_request_line()
            if args.metadata and self.answer_metadata(send_body):
                return
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
