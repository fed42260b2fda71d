#!/usr/bin/env python3
"""A full-trace corpus recorder: an OTLP/HTTP JSON receiver that writes one line per span,
SITE<TAB>FUNCTION, the format of `perfhat-plan simulate --trace`. SITE splits each service
process (OTEL_SERVICE_NAME agile-r<i>) into SPLIT sites by trace id, so R processes give R·SPLIT
sites (the paper's users). Usage: otlp_corpus_receiver.py PORT_FILE OUT SPLIT"""
import http.server, json, sys, threading

port_file, out_path, split = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = open(out_path, "w")
lock = threading.Lock()


class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/v1/traces":
            doc = json.loads(body)
            lines = []
            for rs in doc.get("resourceSpans", []):
                attrs = {a["key"]: a["value"].get("stringValue", "") for a in rs["resource"]["attributes"]}
                replica = int(attrs.get("service.name", "r0").rsplit("r", 1)[-1] or 0)
                for ss in rs.get("scopeSpans", []):
                    for sp in ss.get("spans", []):
                        a = {x["key"]: x["value"] for x in sp.get("attributes", [])}
                        if "perfhat.loop.ordinal" in a:
                            continue
                        fn = a.get("code.function.name", {}).get("stringValue") or sp["name"]
                        site = replica * split + int(sp["traceId"][-10:-2], 16) % split
                        lines.append(f"{site}\t{fn}\n")
            with lock:
                out.writelines(lines)
                out.flush()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(port_file, "w").write(str(srv.server_address[1]))
srv.serve_forever()
