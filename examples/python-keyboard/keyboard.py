#!/usr/bin/env python3
"""A keyboard extension in Python: the example keyboard's shortcut.

Typing ";rec" then a space in any application types "recording on " or
"recording off ", from the recording feature's lock; every other key goes
to the application. The host hands each key of the focused field over the
link (keyboard.key, with the text around the cursor); the answer says
whether the keyboard took it and what it did to the text.
"""
import json, os, socket

SHORTCUT = ";rec"
GROUP = os.environ["TETHER_GROUP"]

def running(feature):
    """Whether the feature's lock is held: the kernel's lock table, as a
    keyboard without open access reads it (it may take no lock)."""
    try:
        info = os.stat(os.path.join(GROUP, "locks", "features", feature + ".lock"))
    except FileNotFoundError:
        return False
    device = "%02x:%02x:%d" % (os.major(info.st_dev), os.minor(info.st_dev), info.st_ino)
    with open("/proc/locks") as table:
        return any(device in line.split() and " WRITE " in line for line in table)

connection = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
incoming = connection.makefile("r", encoding="utf-8", newline="\n")
outgoing = connection.makefile("w", encoding="utf-8", newline="\n")

def send(message):
    outgoing.write(json.dumps(message) + "\n")
    outgoing.flush()

send({"jsonrpc": "2.0", "id": 1, "method": "extension.hello",
      "params": {"name": os.environ["TETHER_EXTENSION"], "role": "keyboard"}})
for line in incoming:                    # ends when the host goes
    message = json.loads(line)
    if message.get("method") != "keyboard.key":
        continue                         # answers, keyboard.focus, host.stopping
    key = message["params"]
    before = key["document"]["before"]
    if key.get("text") == " " and before.endswith(SHORTCUT):
        edits = [{"deleteBackward": len(SHORTCUT)},
                 {"insert": "recording on " if running("recording") else "recording off "}]
        result = {"handled": True, "edits": edits}
    else:
        result = {"handled": False}
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
