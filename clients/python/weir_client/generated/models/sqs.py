from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.sqs_type import SqsType
from ..types import UNSET, Unset






T = TypeVar("T", bound="Sqs")



@_attrs_define
class Sqs:
    """ Each delivery is sent to the queue with the headers an HTTP endpoint gets as message attributes; it succeeds when
    SQS names the message.

        Attributes:
            access_key_id (str): Sealed at rest and never shown again; requests are signed with Signature Version 4.
            queue_url (str): The queue's URL; a .fifo queue gets the event's subject id as message group and the delivery id
                as deduplication id.
            region (str): The AWS region, e.g. us-east-1.
            secret_access_key (str): Sealed at rest and never shown again.
            type_ (SqsType): `sqs`: an Amazon SQS queue
            endpoint_url (str | Unset): A compatible service or an emulator instead of the region's endpoint:
                http(s)://host[:port]; empty: the region's.
     """

    access_key_id: str
    queue_url: str
    region: str
    secret_access_key: str
    type_: SqsType
    endpoint_url: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        access_key_id = self.access_key_id

        queue_url = self.queue_url

        region = self.region

        secret_access_key = self.secret_access_key

        type_ = self.type_.value

        endpoint_url = self.endpoint_url


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "access_key_id": access_key_id,
            "queue_url": queue_url,
            "region": region,
            "secret_access_key": secret_access_key,
            "type": type_,
        })
        if endpoint_url is not UNSET:
            field_dict["endpoint_url"] = endpoint_url

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access_key_id = d.pop("access_key_id")

        queue_url = d.pop("queue_url")

        region = d.pop("region")

        secret_access_key = d.pop("secret_access_key")

        type_ = SqsType(d.pop("type"))




        endpoint_url = d.pop("endpoint_url", UNSET)

        sqs = cls(
            access_key_id=access_key_id,
            queue_url=queue_url,
            region=region,
            secret_access_key=secret_access_key,
            type_=type_,
            endpoint_url=endpoint_url,
        )


        sqs.additional_properties = d
        return sqs

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
