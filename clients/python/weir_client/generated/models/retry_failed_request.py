from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="RetryFailedRequest")



@_attrs_define
class RetryFailedRequest:
    """ `POST /api/v2/webhooks/{id}/retry_failed`

        Attributes:
            since (str): Failed deliveries created at or after this time (RFC 3339) are re-queued.
     """

    since: str





    def to_dict(self) -> dict[str, Any]:
        since = self.since


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "since": since,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        since = d.pop("since")

        retry_failed_request = cls(
            since=since,
        )

        return retry_failed_request

