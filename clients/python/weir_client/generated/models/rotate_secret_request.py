from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="RotateSecretRequest")



@_attrs_define
class RotateSecretRequest:
    """ `POST /api/v2/webhooks/{id}/rotate_secret`

        Attributes:
            grace_period (None | str | Unset): How long the old secret keeps signing beside the new one: `0s` to `7d`,
                default `24h`. Example: 24h.
     """

    grace_period: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        grace_period: None | str | Unset
        if isinstance(self.grace_period, Unset):
            grace_period = UNSET
        else:
            grace_period = self.grace_period


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if grace_period is not UNSET:
            field_dict["grace_period"] = grace_period

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_grace_period(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        grace_period = _parse_grace_period(d.pop("grace_period", UNSET))


        rotate_secret_request = cls(
            grace_period=grace_period,
        )

        return rotate_secret_request

