from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.eventbridge_type import EventbridgeType
from ..types import UNSET, Unset






T = TypeVar("T", bound="Eventbridge")



@_attrs_define
class Eventbridge:
    """ Each delivery is one event on the bus: Detail the body, DetailType the action, Source as given; it succeeds when
    EventBridge names the entry.

        Attributes:
            access_key_id (str): Sealed at rest and never shown again; requests are signed with Signature Version 4.
            event_bus_name (str): The bus's name or ARN.
            region (str): The AWS region, e.g. us-east-1.
            secret_access_key (str): Sealed at rest and never shown again.
            source (str): The events' Source.
            type_ (EventbridgeType): `eventbridge`: an Amazon EventBridge bus
            endpoint_url (str | Unset): A compatible service or an emulator instead of the region's endpoint:
                http(s)://host[:port]; empty: the region's.
     """

    access_key_id: str
    event_bus_name: str
    region: str
    secret_access_key: str
    source: str
    type_: EventbridgeType
    endpoint_url: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        access_key_id = self.access_key_id

        event_bus_name = self.event_bus_name

        region = self.region

        secret_access_key = self.secret_access_key

        source = self.source

        type_ = self.type_.value

        endpoint_url = self.endpoint_url


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "access_key_id": access_key_id,
            "event_bus_name": event_bus_name,
            "region": region,
            "secret_access_key": secret_access_key,
            "source": source,
            "type": type_,
        })
        if endpoint_url is not UNSET:
            field_dict["endpoint_url"] = endpoint_url

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access_key_id = d.pop("access_key_id")

        event_bus_name = d.pop("event_bus_name")

        region = d.pop("region")

        secret_access_key = d.pop("secret_access_key")

        source = d.pop("source")

        type_ = EventbridgeType(d.pop("type"))




        endpoint_url = d.pop("endpoint_url", UNSET)

        eventbridge = cls(
            access_key_id=access_key_id,
            event_bus_name=event_bus_name,
            region=region,
            secret_access_key=secret_access_key,
            source=source,
            type_=type_,
            endpoint_url=endpoint_url,
        )


        eventbridge.additional_properties = d
        return eventbridge

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
