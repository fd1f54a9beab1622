"""Access tokens from an API client's credentials (OAuth 2.0 client credentials at
``POST /oauth/token``), as an ``httpx.Auth``: a token is kept until a minute before it
expires, and fetched again when Weir refuses it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncGenerator, Generator

import httpx


class CredentialsRefused(Exception):
    """Weir did not grant a token for these credentials."""


class ClientCredentials(httpx.Auth):
    def __init__(self, base_url: str, client_id: str, client_secret: str) -> None:
        self._url = base_url.rstrip("/") + "/oauth/token"
        self._form = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": client_secret}
        self._kept: tuple[str, float] | None = None
        self._lock = threading.Lock()
        self._async_lock: asyncio.Lock | None = None

    def _keep(self, answer: httpx.Response) -> str:
        if answer.status_code != 200:
            raise CredentialsRefused(f"Weir refused the client's credentials: {answer.status_code} {answer.text}")
        granted = answer.json()
        lifetime = float(granted.get("expires_in", 3600))
        self._kept = (granted["access_token"], time.monotonic() + max(lifetime - 60, lifetime / 2))
        return granted["access_token"]

    def _live(self) -> str | None:
        if self._kept and time.monotonic() < self._kept[1]:
            return self._kept[0]
        return None

    def forget(self) -> None:
        """Forgets the kept token (the next request asks for another)."""
        self._kept = None

    def token(self) -> str:
        """A live access token."""
        with self._lock:
            return self._live() or self._keep(httpx.post(self._url, data=self._form))

    async def async_token(self) -> str:
        """A live access token, asked for without blocking."""
        if self._async_lock is None:
            self._async_lock = asyncio.Lock()
        async with self._async_lock:
            if live := self._live():
                return live
            async with httpx.AsyncClient() as client:
                return self._keep(await client.post(self._url, data=self._form))

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.token()}"
        response = yield request
        if response.status_code == 401:
            self.forget()
            request.headers["Authorization"] = f"Bearer {self.token()}"
            yield request

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        request.headers["Authorization"] = f"Bearer {await self.async_token()}"
        response = yield request
        if response.status_code == 401:
            self.forget()
            request.headers["Authorization"] = f"Bearer {await self.async_token()}"
            yield request
