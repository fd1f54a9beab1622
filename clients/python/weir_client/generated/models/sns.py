from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.sns_type import SnsType
from ..types import UNSET, Unset






T = TypeVar("T", bound="Sns")



@_attrs_define
class Sns:
    """ Each delivery is published to the topic with the headers an HTTP endpoint gets as message attributes; it succeeds
    when SNS names the message.

        Attributes:
            access_key_id (str): Sealed at rest and never shown again; requests are signed with Signature Version 4.
            region (str): The AWS region, e.g. us-east-1.
            secret_access_key (str): Sealed at rest and never shown again.
            topic_arn (str): The topic's ARN; FIFO topics (.fifo) as FIFO queues.
            type_ (SnsType): `sns`: an Amazon SNS topic
            endpoint_url (str | Unset): A compatible service or an emulator instead of the region's endpoint:
                http(s)://host[:port]; empty: the region's.
     """

    access_key_id: str
    region: str
    secret_access_key: str
    topic_arn: str
    type_: SnsType
    endpoint_url: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        access_key_id = self.access_key_id

        region = self.region

        secret_access_key = self.secret_access_key

        topic_arn = self.topic_arn

        type_ = self.type_.value

        endpoint_url = self.endpoint_url


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "access_key_id": access_key_id,
            "region": region,
            "secret_access_key": secret_access_key,
            "topic_arn": topic_arn,
            "type": type_,
        })
        if endpoint_url is not UNSET:
            field_dict["endpoint_url"] = endpoint_url

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access_key_id = d.pop("access_key_id")

        region = d.pop("region")

        secret_access_key = d.pop("secret_access_key")

        topic_arn = d.pop("topic_arn")

        type_ = SnsType(d.pop("type"))




        endpoint_url = d.pop("endpoint_url", UNSET)

        sns = cls(
            access_key_id=access_key_id,
            region=region,
            secret_access_key=secret_access_key,
            topic_arn=topic_arn,
            type_=type_,
            endpoint_url=endpoint_url,
        )


        sns.additional_properties = d
        return sns

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
