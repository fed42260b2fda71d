#!/usr/bin/env python3
"""Every function's stats from a handler: keys from its store, stats from POST /v1/feedback:batchGet.

    p50s.py HANDLER_URL TOKEN STORE.sqlite  ->  {"key": {"count": n, "p50_ns": x, ...}, ...}
"""
import json
import sqlite3
import sys
import urllib.request

url, token, store = sys.argv[1:4]
keys = [k for (k,) in sqlite3.connect(store).execute("SELECT key FROM functions")]
out = {}
for i in range(0, len(keys), 200):
    body = json.dumps({"keys": keys[i:i + 200]}).encode()
    req = urllib.request.Request(url + "/v1/feedback:batchGet", data=body, method="POST",
                                 headers={"Content-Type": "application/json",
                                          "Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=60) as r:
        for item in json.load(r).get("items", []):
            out[item["key"]] = item.get("stats", {})
json.dump(out, sys.stdout)
