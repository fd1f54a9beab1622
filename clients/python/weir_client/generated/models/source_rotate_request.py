from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="SourceRotateRequest")



@_attrs_define
class SourceRotateRequest:
    """ `POST /api/v2/sources/{id}/rotate`

        Attributes:
            secret (str): The new secret (for `basic` the new password, for `api_key` the new key); the old one
                is also accepted for 24 hours.
     """

    secret: str





    def to_dict(self) -> dict[str, Any]:
        secret = self.secret


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "secret": secret,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        secret = d.pop("secret")

        source_rotate_request = cls(
            secret=secret,
        )

        return source_rotate_request

