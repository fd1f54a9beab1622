from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.kafka_key import KafkaKey
from ..models.kafka_type import KafkaType
from ..types import UNSET, Unset






T = TypeVar("T", bound="Kafka")



@_attrs_define
class Kafka:
    """ Each delivery is one record with the headers an HTTP endpoint gets, keyed by the event's subject; it succeeds when
    every in-sync replica has it (acks=all, an idempotent producer). Optional `sasl`: {"mechanism": "plain" | "scram-
    sha-256" | "scram-sha-512", "username", "password"} (the password sealed).

        Attributes:
            bootstrap_servers (str): host:port, comma-separated (port 9092 unless given). Every broker the cluster names
                must have a public address.
            topic (str): Letters, digits, '.', '_' and '-'; it must exist.
            type_ (KafkaType): `kafka`: an Apache Kafka topic
            key (KafkaKey | Unset): subject (the default: a record's events stay on one partition, in order), event (the
                event's id) or none.
            tls (bool | Unset): Connect over TLS (the system's roots and the server's extra CA).
     """

    bootstrap_servers: str
    topic: str
    type_: KafkaType
    key: KafkaKey | Unset = UNSET
    tls: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        bootstrap_servers = self.bootstrap_servers

        topic = self.topic

        type_ = self.type_.value

        key: str | Unset = UNSET
        if not isinstance(self.key, Unset):
            key = self.key.value


        tls = self.tls


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "bootstrap_servers": bootstrap_servers,
            "topic": topic,
            "type": type_,
        })
        if key is not UNSET:
            field_dict["key"] = key
        if tls is not UNSET:
            field_dict["tls"] = tls

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        bootstrap_servers = d.pop("bootstrap_servers")

        topic = d.pop("topic")

        type_ = KafkaType(d.pop("type"))




        _key = d.pop("key", UNSET)
        key: KafkaKey | Unset
        if isinstance(_key,  Unset):
            key = UNSET
        else:
            key = KafkaKey(_key)




        tls = d.pop("tls", UNSET)

        kafka = cls(
            bootstrap_servers=bootstrap_servers,
            topic=topic,
            type_=type_,
            key=key,
            tls=tls,
        )


        kafka.additional_properties = d
        return kafka

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
