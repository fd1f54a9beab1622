from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.delivery_request_headers import DeliveryRequestHeaders





T = TypeVar("T", bound="DeliveryRequest")



@_attrs_define
class DeliveryRequest:
    """ The request of a delivery: the exact headers of its latest attempt and the body.

        Attributes:
            body (str):
            headers (DeliveryRequestHeaders):
     """

    body: str
    headers: DeliveryRequestHeaders
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.delivery_request_headers import DeliveryRequestHeaders # noqa: PLC0415
        body = self.body

        headers = self.headers.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "body": body,
            "headers": headers,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.delivery_request_headers import DeliveryRequestHeaders # noqa: PLC0415
        d = dict(src_dict)
        body = d.pop("body")

        headers = DeliveryRequestHeaders.from_dict(d.pop("headers"))




        delivery_request = cls(
            body=body,
            headers=headers,
        )


        delivery_request.additional_properties = d
        return delivery_request

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
