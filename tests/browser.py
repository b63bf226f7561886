"""Headless Chromium for the report tests, driven through the DevTools protocol over a pipe
(`--remote-debugging-pipe`: JSON messages ending in a NUL byte, Chromium reading fd 3 and writing
fd 4), so no websocket library and no network port are needed; and a small PNG decoder, so the
test can look at the pixels of a screenshot without an imaging library.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import zlib

import numpy as np

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-pipe"]
TIMEOUT_MESSAGES = 10_000  # events read while waiting for one answer before giving up


def chromium_path() -> str | None:
    """Debian's chromium, if installed."""
    return CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")


class Chromium:
    """One headless browser with one page; `call(method, **params)` sends a DevTools command to
    the page and returns its result; events that arrive meanwhile are kept in `events`."""

    def __init__(self, binary: str, profile: str):
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def onto_3_and_4():  # in the child: Chromium's pipe ends at fds 3 and 4
            read_end = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 100)
            write_end = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 100)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        preexec_fn=onto_3_and_4, pass_fds=(3, 4))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        self.session = None
        page = next(t for t in self._send("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.session = self._send("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]

    def _message(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def _send(self, method: str, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        for _ in range(TIMEOUT_MESSAGES):
            reply = self._message()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)
        raise RuntimeError(f"no answer to {method}")

    call = _send

    def wait_for(self, event: str) -> dict:
        for _ in range(TIMEOUT_MESSAGES):
            for i, seen in enumerate(self.events):
                if seen.get("method") == event:
                    return self.events.pop(i)
            self.events.append(self._message())
        raise RuntimeError(f"no {event} event")

    def open(self, url: str, width: int = 1400, height: int = 1000) -> None:
        """Load `url` in the page at this viewport, and wait for its load event."""
        self.call("Page.enable")
        self.call("Network.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (returned by value)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails']}")
        return result["result"]["value"]

    def screenshot(self, x: float, y: float, width: float, height: float) -> np.ndarray:
        """The pixels [height, width, channels] of one region of the page (page coordinates)."""
        clip = {"x": x, "y": y, "width": width, "height": height, "scale": 1}
        data = self.call("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)["data"]
        return decode_png(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.session = None
            self._send("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)


def decode_png(data: bytes) -> np.ndarray:
    """An 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes) -> [height, width, channels]."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, chunks, header = 8, [], None
    while position < len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    width, height = int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big")
    depth, colour, interlace = header[8], header[9], header[12]
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"unsupported PNG (depth {depth}, colour {colour})"
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    image = np.zeros((height, stride), dtype=np.uint8)
    previous = np.zeros(stride, dtype=np.int32)
    for row in range(height):
        kind = raw[row * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, row * (stride + 1) + 1).astype(np.int32)
        out = _unfilter(kind, line, previous, channels)
        image[row] = out
        previous = out.astype(np.int32)
    return image.reshape(height, width, channels)


def _unfilter(kind: int, line: np.ndarray, up: np.ndarray, bpp: int) -> np.ndarray:
    if kind == 0:
        return line.astype(np.uint8)
    if kind == 2:
        return ((line + up) % 256).astype(np.uint8)
    if kind == 1:  # each byte adds the reconstructed byte bpp before it: a running sum per channel
        return (np.cumsum(line.reshape(-1, bpp), axis=0) % 256).reshape(-1).astype(np.uint8)
    out = [0] * len(line)
    for i, value in enumerate(line.tolist()):
        left = out[i - bpp] if i >= bpp else 0
        above = int(up[i])
        if kind == 3:
            out[i] = (value + (left + above) // 2) % 256
        else:  # 4, Paeth
            corner = int(up[i - bpp]) if i >= bpp else 0
            guess = left + above - corner
            pa, pb, pc = abs(guess - left), abs(guess - above), abs(guess - corner)
            predictor = left if pa <= pb and pa <= pc else above if pb <= pc else corner
            out[i] = (value + predictor) % 256
    return np.array(out, dtype=np.uint8)
