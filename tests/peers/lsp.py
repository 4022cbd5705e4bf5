"""A minimal Language Server Protocol client for the real yaml-language-server: open a file, read its diagnostics.

Only what the test needs: the JSON-RPC framing on stdio, `initialize`, the `yaml` settings an
editor sends (answering the server's `workspace/configuration` requests with them), `didOpen`
and the `publishDiagnostics` notification that follows.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Optional

# What VS Code's YAML extension sends, with the schema store off (no network here) and YAML 1.1,
# as the README's editor setup says.
SETTINGS: dict[str, Any] = {
    "validate": True,
    "yamlVersion": "1.1",
    "schemas": {},
    "schemaStore": {"enable": False},
    "format": {"enable": False},
    "hover": True,
    "completion": True,
}


class LanguageServerError(RuntimeError):
    pass


class YamlLanguageServer:
    def __init__(self, launcher: Path, root: Path) -> None:
        self._process = subprocess.Popen(
            ["node", str(launcher), "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self._messages: queue.Queue[Optional[dict[str, Any]]] = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self._request(
            "initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {"workspace": {"configuration": True}}}
        )
        self._notify("initialized", {})
        self._notify("workspace/didChangeConfiguration", {"settings": {"yaml": SETTINGS}})

    def __enter__(self) -> YamlLanguageServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._process.kill()
        self._process.wait()

    def diagnostics(self, path: Path, text: str, timeout: float = 60) -> list[dict[str, Any]]:
        """Open path with text, as an editor does, and return what the server reports on it."""
        uri = path.as_uri()
        self._notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
        message = self._wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri, timeout)
        self._notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return list(message["params"]["diagnostics"])

    # -- JSON-RPC over stdio --------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self._process.stdin is not None
        self._process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self._process.stdin.flush()

    def _notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def _request(self, method: str, params: Any, timeout: float = 60) -> Any:
        self._next_id += 1
        ident = self._next_id
        self._send({"id": ident, "method": method, "params": params})
        return self._wait(lambda m: m.get("id") == ident and "method" not in m, timeout).get("result")

    def _read(self) -> None:
        stream = self._process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self._messages.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                raise LanguageServerError("a message without Content-Length")
            body = stream.read(length)
            if len(body) < length:  # the server exited mid-message (at shutdown): the stream has ended
                self._messages.put(None)
                return
            self._messages.put(json.loads(body))

    def _wait(self, wanted: Any, timeout: float) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise LanguageServerError(f"no answer from yaml-language-server within {timeout} s")
            try:
                message = self._messages.get(timeout=left)
            except queue.Empty:
                continue
            if message is None:
                raise LanguageServerError(f"yaml-language-server exited ({self._process.poll()})")
            if "method" in message and "id" in message:
                self._answer(message)
            elif wanted(message):
                return message

    def _answer(self, request: dict[str, Any]) -> None:
        """The server's own requests: its settings, and acknowledgements for the rest."""
        if request["method"] == "workspace/configuration":
            result: Any = [SETTINGS if item.get("section") == "yaml" else None for item in request["params"]["items"]]
        else:
            result = None  # client/registerCapability, window/workDoneProgress/create
        self._send({"id": request["id"], "result": result})
