"""Weir's API client: the client generated from Weir's OpenAPI document
(``weir_client.generated``, made by ``scripts/clients.sh``), authenticated with an API
client's credentials, and ``verify`` for deliveries.

    from weir_client import connect, verify
    from weir_client.generated.api.events import publish

    weir = connect("https://weir.example.com", client_id, client_secret)
"""

from __future__ import annotations

from .auth import ClientCredentials, CredentialsRefused
from .generated import AuthenticatedClient, Client
from .signatures import standard_key, verify

__all__ = ["AuthenticatedClient", "ClientCredentials", "Client", "CredentialsRefused", "connect", "standard_key", "verify"]


def connect(base_url: str, client_id: str, client_secret: str, **client_args) -> AuthenticatedClient:
    """A generated ``AuthenticatedClient`` for ``base_url`` that fetches and renews its own
    tokens (its ``ClientCredentials`` sets each request's ``Authorization``)."""
    auth = ClientCredentials(base_url, client_id, client_secret)
    httpx_args = {**client_args.pop("httpx_args", {}), "auth": auth}
    return AuthenticatedClient(base_url=base_url, token="", httpx_args=httpx_args, **client_args)
