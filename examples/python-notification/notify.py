#!/usr/bin/env python3
"""A notification extension in Python, to show that any language will do:
no SDK, only a manifest and JSON-RPC 2.0 over the host's Unix socket, one
JSON object per line. The host hands it a connected socket as descriptor
TETHER_HOST_FD (3) and its name in TETHER_EXTENSION; when the host goes,
the socket closes and so do we."""
import json
import os
import socket

connection = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
# One file to read and one to write: a text file opened "rw" drops what it
# had read ahead whenever it writes, and with it any request that came in
# the same packet as the one being answered.
incoming = connection.makefile("r", encoding="utf-8", newline="\n")
outgoing = connection.makefile("w", encoding="utf-8", newline="\n")


def send(message):
    outgoing.write(json.dumps(message) + "\n")
    outgoing.flush()


send({"jsonrpc": "2.0", "id": 1, "method": "extension.hello",
      "params": {"name": os.environ["TETHER_EXTENSION"], "role": "notification"}})
for line in incoming:
    message = json.loads(line)
    if message.get("method") == "notification.receive":
        content = dict(message["params"]["payload"])
        content["title"] = "[python] " + content.get("title", "")
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"content": content}})
