#!/usr/bin/env python3
"""A notification extension in Python, to show that any language will do:
no SDK, only a manifest and JSON-RPC 2.0 over the host's Unix socket, one
JSON object per line. The host passes the socket in TETHER_SOCKET and the
name in TETHER_EXTENSION; when the host goes, the socket closes and so do we."""
import json
import os
import socket

connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.connect(os.environ["TETHER_SOCKET"])
stream = connection.makefile("rw", encoding="utf-8", newline="\n")


def send(message):
    stream.write(json.dumps(message) + "\n")
    stream.flush()


send({"jsonrpc": "2.0", "id": 1, "method": "extension.hello",
      "params": {"name": os.environ["TETHER_EXTENSION"], "role": "notification"}})
for line in stream:
    message = json.loads(line)
    if message.get("method") == "notification.receive":
        content = dict(message["params"]["payload"])
        content["title"] = "[python] " + content.get("title", "")
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"content": content}})
