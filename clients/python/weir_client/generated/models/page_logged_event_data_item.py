from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.subject import Subject





T = TypeVar("T", bound="PageLoggedEventDataItem")



@_attrs_define
class PageLoggedEventDataItem:
    """ An event as the log lists it.

        Attributes:
            accepted_at (str): When Weir accepted it: replay windows (`POST /webhooks/{id}/replay`) are in this time.
            action (str):
            created_at (str):
            id (str):
            subject (Subject): What an event is about.
            source (None | str | Unset): The source whose request it is (contract §10); absent for a published event.
     """

    accepted_at: str
    action: str
    created_at: str
    id: str
    subject: Subject
    source: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.subject import Subject # noqa: PLC0415
        accepted_at = self.accepted_at

        action = self.action

        created_at = self.created_at

        id = self.id

        subject = self.subject.to_dict()

        source: None | str | Unset
        if isinstance(self.source, Unset):
            source = UNSET
        else:
            source = self.source


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "accepted_at": accepted_at,
            "action": action,
            "created_at": created_at,
            "id": id,
            "subject": subject,
        })
        if source is not UNSET:
            field_dict["source"] = source

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.subject import Subject # noqa: PLC0415
        d = dict(src_dict)
        accepted_at = d.pop("accepted_at")

        action = d.pop("action")

        created_at = d.pop("created_at")

        id = d.pop("id")

        subject = Subject.from_dict(d.pop("subject"))




        def _parse_source(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source = _parse_source(d.pop("source", UNSET))


        page_logged_event_data_item = cls(
            accepted_at=accepted_at,
            action=action,
            created_at=created_at,
            id=id,
            subject=subject,
            source=source,
        )


        page_logged_event_data_item.additional_properties = d
        return page_logged_event_data_item

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
