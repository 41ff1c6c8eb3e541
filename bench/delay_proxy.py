#!/usr/bin/env python3
"""A reverse proxy that answers every request DELAY_MS milliseconds late: a service across a
network, for bench/distance.sh. Standard library only; one thread per client connection, each
with its own kept-alive connection upstream. The Host header is passed on as sent, so the
service's absolute links point back through the proxy.

Usage: delay_proxy.py UPSTREAM_PORT DELAY_MS   (prints "listening on PORT", then serves)
"""
import http.client
import http.server
import sys
import threading
import time

UPSTREAM_PORT = int(sys.argv[1])
DELAY = int(sys.argv[2]) / 1000.0
LOCAL = threading.local()
HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade"}


class Delayed(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # the head and the body go out in two writes: with Nagle's algorithm on, the body waits
    # for the client's delayed ACK of the head (up to 40 ms a request, 36 ms on average here)
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def upstream(self):
        if not hasattr(LOCAL, "conn"):
            LOCAL.conn = http.client.HTTPConnection("127.0.0.1", UPSTREAM_PORT, timeout=60)
        return LOCAL

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        local = self.upstream()
        for attempt in range(2):
            try:
                local.conn.request(self.command, self.path, body=body, headers=headers)
                answer = local.conn.getresponse()
                data = answer.read()
                break
            except (http.client.HTTPException, OSError):
                local.conn.close()
                local.conn = http.client.HTTPConnection("127.0.0.1", UPSTREAM_PORT, timeout=60)
                if attempt:
                    self.send_error(502)
                    return
        time.sleep(DELAY)
        self.send_response_only(answer.status, answer.reason)
        for k, v in answer.getheaders():
            if k.lower() not in HOP and k.lower() != "content-length":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = forward


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Delayed)
server.daemon_threads = True
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
