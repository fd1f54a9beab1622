from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ReplayRequest")



@_attrs_define
class ReplayRequest:
    """ `POST /api/v2/webhooks/{id}/replay`

        Attributes:
            since (str): Events accepted at or after this time (RFC 3339; within `WEIR_EVENT_RETENTION`).
            until (None | str | Unset): Events accepted before this time (RFC 3339; default: now).
     """

    since: str
    until: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        since = self.since

        until: None | str | Unset
        if isinstance(self.until, Unset):
            until = UNSET
        else:
            until = self.until


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "since": since,
        })
        if until is not UNSET:
            field_dict["until"] = until

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        since = d.pop("since")

        def _parse_until(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        until = _parse_until(d.pop("until", UNSET))


        replay_request = cls(
            since=since,
            until=until,
        )

        return replay_request

