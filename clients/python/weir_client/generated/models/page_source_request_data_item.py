from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="PageSourceRequestDataItem")



@_attrs_define
class PageSourceRequestDataItem:
    """ One request to a source, as its listing shows it.

        Attributes:
            id (str):
            outcome (str): `accepted`, `duplicate` or `rejected`.
            received_at (str):
            size (int): The body's size in bytes (a rejected body is not kept).
            event_id (None | str | Unset): The event it is (a duplicate: the first request's).
            reason (None | str | Unset): Why it was rejected (`invalid_signature`: …), `null` otherwise.
     """

    id: str
    outcome: str
    received_at: str
    size: int
    event_id: None | str | Unset = UNSET
    reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        outcome = self.outcome

        received_at = self.received_at

        size = self.size

        event_id: None | str | Unset
        if isinstance(self.event_id, Unset):
            event_id = UNSET
        else:
            event_id = self.event_id

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "id": id,
            "outcome": outcome,
            "received_at": received_at,
            "size": size,
        })
        if event_id is not UNSET:
            field_dict["event_id"] = event_id
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        outcome = d.pop("outcome")

        received_at = d.pop("received_at")

        size = d.pop("size")

        def _parse_event_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        event_id = _parse_event_id(d.pop("event_id", UNSET))


        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))


        page_source_request_data_item = cls(
            id=id,
            outcome=outcome,
            received_at=received_at,
            size=size,
            event_id=event_id,
            reason=reason,
        )


        page_source_request_data_item.additional_properties = d
        return page_source_request_data_item

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
