"""What the client scripts share: their arguments and a small JSON:API caller.

Every script takes the service's root URL, its tokens and the certificate file to trust
from the environment that suite/tests/real_clients.rs sets:

    CONFORM_URL          https://localhost:PORT (the root, without /api/v2)
    CONFORM_TOKEN        the user token
    CONFORM_ADMIN_TOKEN  the administrator token
    CONFORM_CA           the certificate file `conform serve --tls` printed (optional)

Tokens are never printed.
"""

import json
import os
import ssl
import sys
import traceback
import urllib.error
import urllib.request
import uuid

URL = os.environ.get("CONFORM_URL", "").rstrip("/")
TOKEN = os.environ.get("CONFORM_TOKEN", "")
ADMIN_TOKEN = os.environ.get("CONFORM_ADMIN_TOKEN", "")
CA = os.environ.get("CONFORM_CA") or None


def require_env():
    if not URL or not TOKEN:
        print("set CONFORM_URL and CONFORM_TOKEN (and CONFORM_CA for a --tls service)")
        sys.exit(2)


def ssl_context():
    return ssl.create_default_context(cafile=CA) if CA else ssl.create_default_context()


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def api(method, path, body=None, token=None, timeout=20):
    """One request to /api/v2 + path; returns (status, parsed JSON or None)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(URL + "/api/v2" + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + (token or TOKEN))
    req.add_header("Accept", "application/vnd.api+json")
    if data is not None:
        req.add_header("Content-Type", "application/vnd.api+json")
    try:
        with urllib.request.urlopen(req, context=ssl_context(), timeout=timeout) as res:
            raw = res.read()
            return res.status, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, None


def fetch(url, timeout=20):
    """GETs an absolute URL the service handed out (a log, a download), without the token."""
    with urllib.request.urlopen(url, context=ssl_context(), timeout=timeout) as res:
        return res.read().decode("utf-8", errors="replace")


class Tally:
    """Counts calls tried and passed, and keeps each failure with its reason."""

    def __init__(self, name):
        self.name = name
        self.tried = 0
        self.passed = 0
        self.failures = []

    def call(self, label, fn, *args, **kwargs):
        """Runs one client call; any exception is a failure. Returns the call's result."""
        self.tried += 1
        try:
            result = fn(*args, **kwargs)
        except Exception as e:  # a client's error of any kind is this call's failure
            reason = f"{type(e).__name__}: {e}".splitlines()[0][:300]
            self.failures.append((label, reason))
            if os.environ.get("CONFORM_CLIENT_DEBUG"):
                traceback.print_exc()
            return None
        self.passed += 1
        return result

    def check(self, label, condition, reason="unexpected answer"):
        """Counts a call that ran but whose answer must satisfy a condition."""
        self.tried += 1
        if condition:
            self.passed += 1
        else:
            self.failures.append((label, reason))

    def report(self):
        for label, reason in self.failures:
            print(f"  FAIL {label}: {reason}")
        print(f"{self.name}: {self.passed} of {self.tried} calls passed")
        return 0 if self.passed == self.tried and self.tried > 0 else 1
