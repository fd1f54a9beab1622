from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="PortalBrand")



@_attrs_define
class PortalBrand:
    """ The operator's name and logo, shown in the portal's header and on its pages.

        Attributes:
            name (str):
            logo_url (None | str | Unset): An image (`https`, or `http` on loopback), shown 24 px high.
     """

    name: str
    logo_url: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        name = self.name

        logo_url: None | str | Unset
        if isinstance(self.logo_url, Unset):
            logo_url = UNSET
        else:
            logo_url = self.logo_url


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "name": name,
        })
        if logo_url is not UNSET:
            field_dict["logo_url"] = logo_url

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        def _parse_logo_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        logo_url = _parse_logo_url(d.pop("logo_url", UNSET))


        portal_brand = cls(
            name=name,
            logo_url=logo_url,
        )

        return portal_brand

