#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server for the tests.

Listens on 127.0.0.1 only, on a free port it picks itself (or --port N,
to come back where a client expects it); the port is printed on stdout
("port N") and written to --port-file.  It answers
POST .../chat/completions from a JSON script file:

    {
      "rules":     [{"match": "TEXT", "response": RESPONSE, "times": N}, ...],
      "responses": [RESPONSE, ...],
      "default":   RESPONSE,
      "extends":   "other_script.json"
    }

"extends" (optional) names another script, relative to this one's
directory: its rules are tried after this script's own, and its
"responses" and "default" are used where this script has none.  So a
script can change a few answers of an existing one.

For each request the first rule whose "match" text occurs in the request's
message texts answers (a rule with "times" stops after that many answers);
otherwise the next unused entry of "responses" answers; once those are used
up, "default" answers, and without a default the server answers HTTP 500
"script exhausted".  A RESPONSE is an object:

    {"content": "text", "finish_reason": "stop", "usage": {...}}  a completion
    {"status": 429, "headers": {"Retry-After": "1"}, "body": ...}  that status;
                                          body is an object (sent as JSON) or text
    {"raw": "text"}                       HTTP 200 with this body (malformed JSON)
    {"choices": [...]}                    HTTP 200 with this choices list
    {"echo_auth": true}                   a completion whose content is the
                                          Authorization header it received (with
                                          "status", an error naming it)
    {"close": true}                       drop the connection without answering
and any of them may add {"sleep": seconds} to wait before answering.

A request with "stream": true gets a completion as server-sent events
("data: {chunk}" lines, then "data: [DONE]"), the content cut into pieces
of "piece" characters (default 4), each after "piece_sleep" seconds
(default 0); "repeat": N sends the content N times over (a model in a
loop); the usage comes in a last chunk only when the response names one (or with
"stream_usage": true), as llama-cpp-python sends none.  A client that closes the connection
mid-stream stops the stream, and the log says after how many pieces
("cancelled_after").  "reject_formats": ["json_schema", ...] answers HTTP
422 to a request whose response_format has one of those types, as
llama-cpp-python does for json_schema.  The script's top-level "props"
object, if any, is served at GET /props (llama-server's context size).

Every request is appended to --log as one JSON line: its number, path, the
parsed body (or {"_raw": text}), which response answered, and "auth": "none",
"match" or "mismatch" (against the key in the variable named by --key-env,
"present" without --key-env).  The Authorization header itself is never
written to the log.  The server stops after --max-seconds (default 120) so
that it cannot outlive a crashed test.
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    def __init__(self, data):
        self.rules = [dict(r) for r in data.get("rules", [])]
        self.responses = list(data.get("responses", []))
        self.default = data.get("default")
        self.props = data.get("props")
        self.next = 0
        self.count = 0
        self.lock = threading.Lock()

    def pick(self, text):
        with self.lock:
            self.count += 1
            n = self.count
            for i, rule in enumerate(self.rules):
                if rule.get("match", "") in text:
                    times = rule.get("times")
                    if times is not None:
                        if times <= 0:
                            continue
                        rule["times"] = times - 1
                    return n, "rule %d" % i, rule.get("response", {})
            if self.next < len(self.responses):
                self.next += 1
                return n, "response %d" % (self.next - 1), self.responses[self.next - 1]
            if self.default is not None:
                return n, "default", self.default
            return n, "exhausted", {"status": 500, "body": {"error": {"message": "fake server: script exhausted"}}}


def load_script(path, depth=0):
    """The script at path, with the scripts it extends merged in."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    base_name = data.get("extends")
    if not base_name:
        return data
    if depth >= 8:
        raise ValueError("%s: \"extends\" nested too deeply" % path)
    base = load_script(os.path.join(os.path.dirname(os.path.abspath(path)), base_name), depth + 1)
    merged = {"rules": list(data.get("rules", [])) + list(base.get("rules", []))}
    for key in ("responses", "default", "props"):
        if key in data:
            merged[key] = data[key]
        elif key in base:
            merged[key] = base[key]
    return merged


def message_text(body):
    """All text of the request's messages, for rule matching."""
    out = []
    if not isinstance(body, dict):
        return ""
    for m in body.get("messages", []) or []:
        if not isinstance(m, dict):
            continue
        c = m.get("content")
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            for part in c:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    out.append(part["text"])
    return "\n".join(out)


def make_handler(script, log_path, key_env, log_lock):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet
            pass

        def send(self, status, body, headers=None, ctype="application/json"):
            data = body.encode("utf-8") if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

        def do_GET(self):
            if self.path.rstrip("/") == "/props" and script.props is not None:
                self.send(200, json.dumps(script.props))
            elif self.path.rstrip("/").endswith("/models"):
                self.send(200, json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}))
            else:
                self.send(404, json.dumps({"error": {"message": "no such path"}}))

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
            try:
                body = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                body = {"_raw": raw.decode("utf-8", "replace")}
            auth_header = self.headers.get("Authorization")
            if auth_header is None:
                auth = "none"
            elif key_env:
                auth = "match" if auth_header == "Bearer " + os.environ.get(key_env, "") else "mismatch"
            else:
                auth = "present"
            n, source, resp = script.pick(message_text(body))
            entry = {"n": n, "path": self.path, "body": body, "answered_by": source, "auth": auth,
                     "content_type": self.headers.get("Content-Type"), "time": time.time()}
            if log_path:
                with log_lock:
                    with open(log_path, "a", encoding="utf-8") as f:
                        f.write(json.dumps(entry) + "\n")
                        f.flush()
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self.send(404, json.dumps({"error": {"message": "fake server: unknown path " + self.path}}))
                return
            try:
                self.answer(resp, body, auth_header, n)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def note(self, n, **fields):
            """Add fields to the log as a line of their own for request n."""
            if log_path:
                with log_lock:
                    with open(log_path, "a", encoding="utf-8") as f:
                        f.write(json.dumps(dict(n=n, note=True, **fields)) + "\n")

        def stream(self, resp, model, n):
            content = resp.get("content", "") * int(resp.get("repeat", 1))
            piece = max(1, int(resp.get("piece", 4)))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()

            def event(obj):
                self.wfile.write(("data: " + json.dumps(obj) + "\n\n").encode("utf-8"))
                self.wfile.flush()

            base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                    "model": resp.get("model", model)}
            sent = 0
            try:
                self.wfile.write(b": ping\n\n")
                for i in range(0, len(content), piece):
                    if resp.get("piece_sleep"):
                        time.sleep(float(resp["piece_sleep"]))
                    event(dict(base, choices=[{"index": 0, "delta": {"content": content[i:i + piece]},
                                               "finish_reason": None}]))
                    sent += 1
                event(dict(base, choices=[{"index": 0, "delta": {},
                                           "finish_reason": resp.get("finish_reason", "stop")}]))
                if resp.get("stream_usage") or resp.get("usage"):
                    event(dict(base, choices=[], usage=resp.get("usage") or
                               {"prompt_tokens": 10, "completion_tokens": sent, "total_tokens": 10 + sent}))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.note(n, cancelled_after=sent)

        def answer(self, resp, body, auth_header, n=0):
            if resp.get("sleep"):
                time.sleep(float(resp["sleep"]))
            if resp.get("close"):
                self.close_connection = True
                return
            rf = body.get("response_format") if isinstance(body, dict) else None
            if isinstance(rf, dict) and rf.get("type") in resp.get("reject_formats", []):
                self.send(422, json.dumps({"detail": [{"loc": ["body", "response_format", "type"],
                                                       "msg": "Input should be 'text' or 'json_object'"}]}))
                return
            if "status" in resp and resp["status"] != 200:
                b = resp.get("body", {"error": {"message": "fake error %d" % resp["status"]}})
                if resp.get("echo_auth"):
                    b = {"error": {"message": "invalid key in: " + (auth_header or "(nothing)")}}
                text = b if isinstance(b, str) else json.dumps(b)
                self.send(int(resp["status"]), text, resp.get("headers"))
                return
            if "raw" in resp:
                self.send(200, resp["raw"], resp.get("headers"))
                return
            model = body.get("model", "fake-model") if isinstance(body, dict) else "fake-model"
            if isinstance(body, dict) and body.get("stream") and "choices" not in resp and not resp.get("echo_auth"):
                self.stream(resp, model, n)
                return
            if "choices" in resp:
                choices = resp["choices"]
            else:
                content = resp.get("content", "")
                if resp.get("echo_auth"):
                    content = "You sent: " + (auth_header or "(nothing)")
                choices = [{"index": 0, "message": {"role": "assistant", "content": content},
                            "finish_reason": resp.get("finish_reason", "stop")}]
            out = {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                   "model": resp.get("model", model), "choices": choices}
            if "usage" in resp:
                if resp["usage"] is not None:
                    out["usage"] = resp["usage"]
            else:
                out["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            self.send(200, json.dumps(out), resp.get("headers"))

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--script", required=True, help="JSON script file")
    ap.add_argument("--log", help="append one JSON line per request here")
    ap.add_argument("--port-file", help="write the chosen port here")
    ap.add_argument("--key-env", help="environment variable holding the expected API key")
    ap.add_argument("--max-seconds", type=float, default=120.0, help="stop after this long")
    ap.add_argument("--port", type=int, default=0, help="listen on this port (default: a free one)")
    args = ap.parse_args()
    script = Script(load_script(args.script))
    server = ThreadingHTTPServer(("127.0.0.1", args.port),
                                 make_handler(script, args.log, args.key_env, threading.Lock()))
    server.daemon_threads = True
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    print("port %d" % port, flush=True)
    timer = threading.Timer(args.max_seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
