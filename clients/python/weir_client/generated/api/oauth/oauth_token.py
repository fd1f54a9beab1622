from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_body import ErrorBody
from ...models.o_auth_error_body import OAuthErrorBody
from ...models.token import Token
from ...models.token_request import TokenRequest
from typing import cast



def _get_kwargs(
    *,
    body: TokenRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/oauth/token",
    }

    _kwargs["data"] = body.to_dict()
    headers["Content-Type"] = "application/x-www-form-urlencoded"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorBody | OAuthErrorBody | Token | None:
    if response.status_code == 200:
        response_200 = Token.from_dict(response.json())



        return response_200

    if response.status_code == 400:
        response_400 = OAuthErrorBody.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = OAuthErrorBody.from_dict(response.json())



        return response_401

    if response.status_code == 408:
        response_408 = ErrorBody.from_dict(response.json())



        return response_408

    if response.status_code == 413:
        response_413 = ErrorBody.from_dict(response.json())



        return response_413

    if response.status_code == 500:
        response_500 = ErrorBody.from_dict(response.json())



        return response_500

    if response.status_code == 503:
        response_503 = OAuthErrorBody.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorBody | OAuthErrorBody | Token]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: TokenRequest,

) -> Response[ErrorBody | OAuthErrorBody | Token]:
    """ `POST /oauth/token`

    Args:
        body (TokenRequest): `POST /oauth/token` (form-encoded; the client's credentials in the
            form or HTTP Basic).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | OAuthErrorBody | Token]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: TokenRequest,

) -> ErrorBody | OAuthErrorBody | Token | None:
    """ `POST /oauth/token`

    Args:
        body (TokenRequest): `POST /oauth/token` (form-encoded; the client's credentials in the
            form or HTTP Basic).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | OAuthErrorBody | Token
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: TokenRequest,

) -> Response[ErrorBody | OAuthErrorBody | Token]:
    """ `POST /oauth/token`

    Args:
        body (TokenRequest): `POST /oauth/token` (form-encoded; the client's credentials in the
            form or HTTP Basic).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | OAuthErrorBody | Token]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: TokenRequest,

) -> ErrorBody | OAuthErrorBody | Token | None:
    """ `POST /oauth/token`

    Args:
        body (TokenRequest): `POST /oauth/token` (form-encoded; the client's credentials in the
            form or HTTP Basic).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | OAuthErrorBody | Token
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
