from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Token")



@_attrs_define
class Token:
    """ An issued access token.

        Attributes:
            access_token (str):
            created_at (int): When it was issued (Unix seconds).
            expires_in (int): Seconds until it expires.
            token_type (str): `Bearer`.
     """

    access_token: str
    created_at: int
    expires_in: int
    token_type: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        access_token = self.access_token

        created_at = self.created_at

        expires_in = self.expires_in

        token_type = self.token_type


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "access_token": access_token,
            "created_at": created_at,
            "expires_in": expires_in,
            "token_type": token_type,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access_token = d.pop("access_token")

        created_at = d.pop("created_at")

        expires_in = d.pop("expires_in")

        token_type = d.pop("token_type")

        token = cls(
            access_token=access_token,
            created_at=created_at,
            expires_in=expires_in,
            token_type=token_type,
        )


        token.additional_properties = d
        return token

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
