from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_body import ErrorBody
from ...models.report_exports_download_response_200 import ReportExportsDownloadResponse200
from typing import cast



def _get_kwargs(
    id: str,
    *,
    expires: str,
    sig: str,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["expires"] = expires

    params["sig"] = sig


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/exports/{id}/download".format(id=quote(str(id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorBody | ReportExportsDownloadResponse200 | None:
    if response.status_code == 200:
        response_200 = ReportExportsDownloadResponse200.from_dict(response.json())



        return response_200

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())



        return response_403

    if response.status_code == 410:
        response_410 = ErrorBody.from_dict(response.json())



        return response_410

    if response.status_code == 500:
        response_500 = ErrorBody.from_dict(response.json())



        return response_500

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorBody | ReportExportsDownloadResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    expires: str,
    sig: str,

) -> Response[ErrorBody | ReportExportsDownloadResponse200]:
    """ `GET /exports/{id}/download?expires=&sig=`: no token; the link is the credential.

    Args:
        id (str):
        expires (str):
        sig (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ReportExportsDownloadResponse200]
     """


    kwargs = _get_kwargs(
        id=id,
expires=expires,
sig=sig,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    expires: str,
    sig: str,

) -> ErrorBody | ReportExportsDownloadResponse200 | None:
    """ `GET /exports/{id}/download?expires=&sig=`: no token; the link is the credential.

    Args:
        id (str):
        expires (str):
        sig (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ReportExportsDownloadResponse200
     """


    return sync_detailed(
        id=id,
client=client,
expires=expires,
sig=sig,

    ).parsed

async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    expires: str,
    sig: str,

) -> Response[ErrorBody | ReportExportsDownloadResponse200]:
    """ `GET /exports/{id}/download?expires=&sig=`: no token; the link is the credential.

    Args:
        id (str):
        expires (str):
        sig (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ReportExportsDownloadResponse200]
     """


    kwargs = _get_kwargs(
        id=id,
expires=expires,
sig=sig,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    expires: str,
    sig: str,

) -> ErrorBody | ReportExportsDownloadResponse200 | None:
    """ `GET /exports/{id}/download?expires=&sig=`: no token; the link is the credential.

    Args:
        id (str):
        expires (str):
        sig (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ReportExportsDownloadResponse200
     """


    return (await asyncio_detailed(
        id=id,
client=client,
expires=expires,
sig=sig,

    )).parsed
