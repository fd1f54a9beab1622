from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.event_delivery import EventDelivery
  from ..models.event_envelope import EventEnvelope





T = TypeVar("T", bound="Event")



@_attrs_define
class Event:
    """ An event as `GET /api/v2/events/{id}` shows it: the envelope as published and the
    delivery to each webhook.

        Attributes:
            action (str):
            created_at (str):
            deliveries (list[EventDelivery]):
            envelope (EventEnvelope): The envelope as published (service document §2).
            id (str):
     """

    action: str
    created_at: str
    deliveries: list[EventDelivery]
    envelope: EventEnvelope
    id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.event_delivery import EventDelivery # noqa: PLC0415
        from ..models.event_envelope import EventEnvelope # noqa: PLC0415
        action = self.action

        created_at = self.created_at

        deliveries = []
        for deliveries_item_data in self.deliveries:
            deliveries_item = deliveries_item_data.to_dict()
            deliveries.append(deliveries_item)



        envelope = self.envelope.to_dict()

        id = self.id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "action": action,
            "created_at": created_at,
            "deliveries": deliveries,
            "envelope": envelope,
            "id": id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_delivery import EventDelivery # noqa: PLC0415
        from ..models.event_envelope import EventEnvelope # noqa: PLC0415
        d = dict(src_dict)
        action = d.pop("action")

        created_at = d.pop("created_at")

        deliveries = []
        _deliveries = d.pop("deliveries")
        for deliveries_item_data in (_deliveries):
            deliveries_item = EventDelivery.from_dict(deliveries_item_data)



            deliveries.append(deliveries_item)


        envelope = EventEnvelope.from_dict(d.pop("envelope"))




        id = d.pop("id")

        event = cls(
            action=action,
            created_at=created_at,
            deliveries=deliveries,
            envelope=envelope,
            id=id,
        )


        event.additional_properties = d
        return event

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
