from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.kinesis_type import KinesisType
from ..types import UNSET, Unset






T = TypeVar("T", bound="Kinesis")



@_attrs_define
class Kinesis:
    """ Each delivery is one record: its data the body, its partition key the event's subject (or id); it succeeds when
    Kinesis names the shard and sequence number.

        Attributes:
            access_key_id (str): Sealed at rest and never shown again; requests are signed with Signature Version 4.
            region (str): The AWS region, e.g. us-east-1.
            secret_access_key (str): Sealed at rest and never shown again.
            stream_name (str): The data stream's name: letters, digits, '_', '-' and '.'.
            type_ (KinesisType): `kinesis`: an Amazon Kinesis data stream
            endpoint_url (str | Unset): A compatible service or an emulator instead of the region's endpoint:
                http(s)://host[:port]; empty: the region's.
            partition_key (str | Unset): subject (the default: a record's events stay on one shard, in order) or event (the
                event's id).
     """

    access_key_id: str
    region: str
    secret_access_key: str
    stream_name: str
    type_: KinesisType
    endpoint_url: str | Unset = UNSET
    partition_key: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        access_key_id = self.access_key_id

        region = self.region

        secret_access_key = self.secret_access_key

        stream_name = self.stream_name

        type_ = self.type_.value

        endpoint_url = self.endpoint_url

        partition_key = self.partition_key


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "access_key_id": access_key_id,
            "region": region,
            "secret_access_key": secret_access_key,
            "stream_name": stream_name,
            "type": type_,
        })
        if endpoint_url is not UNSET:
            field_dict["endpoint_url"] = endpoint_url
        if partition_key is not UNSET:
            field_dict["partition_key"] = partition_key

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access_key_id = d.pop("access_key_id")

        region = d.pop("region")

        secret_access_key = d.pop("secret_access_key")

        stream_name = d.pop("stream_name")

        type_ = KinesisType(d.pop("type"))




        endpoint_url = d.pop("endpoint_url", UNSET)

        partition_key = d.pop("partition_key", UNSET)

        kinesis = cls(
            access_key_id=access_key_id,
            region=region,
            secret_access_key=secret_access_key,
            stream_name=stream_name,
            type_=type_,
            endpoint_url=endpoint_url,
            partition_key=partition_key,
        )


        kinesis.additional_properties = d
        return kinesis

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
