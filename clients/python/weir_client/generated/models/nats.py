from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.nats_type import NatsType






T = TypeVar("T", bound="Nats")



@_attrs_define
class Nats:
    """ Each delivery is published to the subject with the headers an HTTP endpoint gets; it succeeds when the stream
    holding the subject acknowledges it (create the stream first).

        Attributes:
            subject (str): Dot-separated tokens, no wildcards (* or >) or spaces; a stream must hold it.
            type_ (NatsType): `nats`: a NATS JetStream subject
            url (str): nats://[user:password@]host[:port] (port 4222 unless given); the user and password are sealed and
                never shown again.
     """

    subject: str
    type_: NatsType
    url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        subject = self.subject

        type_ = self.type_.value

        url = self.url


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "subject": subject,
            "type": type_,
            "url": url,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        subject = d.pop("subject")

        type_ = NatsType(d.pop("type"))




        url = d.pop("url")

        nats = cls(
            subject=subject,
            type_=type_,
            url=url,
        )


        nats.additional_properties = d
        return nats

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
