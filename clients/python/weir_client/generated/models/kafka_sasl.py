from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.kafka_sasl_mechanism import KafkaSaslMechanism






T = TypeVar("T", bound="KafkaSasl")



@_attrs_define
class KafkaSasl:
    """ Sign in with SASL: mechanism, username and password (sealed, never shown again).

        Attributes:
            mechanism (KafkaSaslMechanism): plain, scram-sha-256 or scram-sha-512.
            password (str): Sealed, never shown again.
            username (str):
     """

    mechanism: KafkaSaslMechanism
    password: str
    username: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        mechanism = self.mechanism.value

        password = self.password

        username = self.username


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "mechanism": mechanism,
            "password": password,
            "username": username,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        mechanism = KafkaSaslMechanism(d.pop("mechanism"))




        password = d.pop("password")

        username = d.pop("username")

        kafka_sasl = cls(
            mechanism=mechanism,
            password=password,
            username=username,
        )


        kafka_sasl.additional_properties = d
        return kafka_sasl

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
