from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_body import ErrorBody
from ...models.page_delivery import PageDelivery
from ...models.status import Status
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    webhook_id: str | Unset = UNSET,
    status: Status | Unset = UNSET,
    action: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["webhook_id"] = webhook_id

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    params["action"] = action

    params["limit"] = limit

    params["cursor"] = cursor


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/webhook_deliveries",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorBody | PageDelivery | None:
    if response.status_code == 200:
        response_200 = PageDelivery.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())



        return response_401

    if response.status_code == 402:
        response_402 = ErrorBody.from_dict(response.json())



        return response_402

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())



        return response_403

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())



        return response_422

    if response.status_code == 429:
        response_429 = ErrorBody.from_dict(response.json())



        return response_429

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorBody | PageDelivery]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    webhook_id: str | Unset = UNSET,
    status: Status | Unset = UNSET,
    action: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> Response[ErrorBody | PageDelivery]:
    """ `GET /api/v2/webhook_deliveries?webhook_id=&status=&action=&limit=&cursor=`

    Args:
        webhook_id (str | Unset):
        status (Status | Unset): A delivery's status (contract §2), shared by the queue and the
            API.
        action (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | PageDelivery]
     """


    kwargs = _get_kwargs(
        webhook_id=webhook_id,
status=status,
action=action,
limit=limit,
cursor=cursor,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    webhook_id: str | Unset = UNSET,
    status: Status | Unset = UNSET,
    action: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> ErrorBody | PageDelivery | None:
    """ `GET /api/v2/webhook_deliveries?webhook_id=&status=&action=&limit=&cursor=`

    Args:
        webhook_id (str | Unset):
        status (Status | Unset): A delivery's status (contract §2), shared by the queue and the
            API.
        action (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | PageDelivery
     """


    return sync_detailed(
        client=client,
webhook_id=webhook_id,
status=status,
action=action,
limit=limit,
cursor=cursor,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    webhook_id: str | Unset = UNSET,
    status: Status | Unset = UNSET,
    action: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> Response[ErrorBody | PageDelivery]:
    """ `GET /api/v2/webhook_deliveries?webhook_id=&status=&action=&limit=&cursor=`

    Args:
        webhook_id (str | Unset):
        status (Status | Unset): A delivery's status (contract §2), shared by the queue and the
            API.
        action (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | PageDelivery]
     """


    kwargs = _get_kwargs(
        webhook_id=webhook_id,
status=status,
action=action,
limit=limit,
cursor=cursor,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    webhook_id: str | Unset = UNSET,
    status: Status | Unset = UNSET,
    action: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> ErrorBody | PageDelivery | None:
    """ `GET /api/v2/webhook_deliveries?webhook_id=&status=&action=&limit=&cursor=`

    Args:
        webhook_id (str | Unset):
        status (Status | Unset): A delivery's status (contract §2), shared by the queue and the
            API.
        action (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | PageDelivery
     """


    return (await asyncio_detailed(
        client=client,
webhook_id=webhook_id,
status=status,
action=action,
limit=limit,
cursor=cursor,

    )).parsed
