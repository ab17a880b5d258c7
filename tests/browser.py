"""Headless Chromium driven over the DevTools protocol, for tests that need a real browser.

`HeadlessChromium(url)` starts Debian's `chromium` with a fresh profile on a page, waits
for the page to report a state, reads values out of it and takes screenshots. The browser
is stopped (its whole process group) when the context ends.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import aiohttp

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-port=0", "--window-size=1100,700"]


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class HeadlessChromium:
    def __init__(self, url: str, timeout: float = 60.0):
        self.url = url
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="chromium-")
        self._proc: subprocess.Popen | None = None
        self._session: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)

    async def __aenter__(self) -> "HeadlessChromium":
        path = chromium_path()
        assert path, "chromium is not installed"
        self._proc = subprocess.Popen([path, *FLAGS, f"--user-data-dir={self._profile.name}", self.url],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                      start_new_session=True)
        port = await asyncio.wait_for(asyncio.to_thread(self._devtools_port), self.timeout)
        self._session = aiohttp.ClientSession()
        page = await self._page_target(port)
        self._ws = await self._session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        return self

    async def __aexit__(self, *exc) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._session is not None:
            await self._session.close()
        if self._proc is not None and self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                await asyncio.to_thread(self._proc.wait, 10)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait()
        self._profile.cleanup()

    def _devtools_port(self) -> int:
        assert self._proc and self._proc.stderr
        for line in self._proc.stderr:
            match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if match:
                return int(match.group(1))
        raise RuntimeError("chromium exited before its DevTools endpoint was up")

    async def _page_target(self, port: int) -> dict[str, Any]:
        assert self._session
        for _ in range(100):
            async with self._session.get(f"http://127.0.0.1:{port}/json/list") as response:
                pages = [t for t in await response.json() if t.get("type") == "page"]
            if pages:
                return pages[0]
            await asyncio.sleep(0.1)
        raise RuntimeError("chromium opened no page")

    async def command(self, method: str, **params: Any) -> dict[str, Any]:
        assert self._ws
        request_id = next(self._ids)
        await self._ws.send_json({"id": request_id, "method": method, "params": params})
        while True:
            message = json.loads((await self._ws.receive(timeout=self.timeout)).data)
            if message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    async def evaluate(self, expression: str) -> Any:
        result = await self.command("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    async def wait_for(self, expression: str, until: set[Any]) -> Any:
        """Poll `expression` until its value is in `until`; returns that value."""
        deadline = asyncio.get_running_loop().time() + self.timeout
        while True:
            value = await self.evaluate(expression)
            if value in until or asyncio.get_running_loop().time() > deadline:
                return value
            await asyncio.sleep(0.1)

    async def screenshot(self, path: Path) -> Path:
        data = await self.command("Page.captureScreenshot", format="png")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path
