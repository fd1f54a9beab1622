from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.amqp_type import AmqpType
from ..types import UNSET, Unset






T = TypeVar("T", bound="Amqp")



@_attrs_define
class Amqp:
    """ Each delivery is a persistent message with the headers an HTTP endpoint gets; it succeeds when the broker confirms
    it, and a message no queue takes is a failed attempt.

        Attributes:
            exchange (str): The exchange to publish to; empty: the default exchange, which routes to the queue the routing
                key names.
            type_ (AmqpType): `amqp`: an AMQP (RabbitMQ) exchange
            url (str): amqp[s]://[user:password@]host[:port][/vhost] (5672, amqps 5671 over TLS; the vhost / unless given, a
                / in it written %2f); the user and password are sealed and never shown again.
            routing_key (str | Unset): With the default exchange: the queue's name.
     """

    exchange: str
    type_: AmqpType
    url: str
    routing_key: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        exchange = self.exchange

        type_ = self.type_.value

        url = self.url

        routing_key = self.routing_key


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "exchange": exchange,
            "type": type_,
            "url": url,
        })
        if routing_key is not UNSET:
            field_dict["routing_key"] = routing_key

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        exchange = d.pop("exchange")

        type_ = AmqpType(d.pop("type"))




        url = d.pop("url")

        routing_key = d.pop("routing_key", UNSET)

        amqp = cls(
            exchange=exchange,
            type_=type_,
            url=url,
            routing_key=routing_key,
        )


        amqp.additional_properties = d
        return amqp

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
