from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Plugin")



@_attrs_define
class Plugin:
    """ A plugin as the API shows it.

        Attributes:
            created_at (str):
            id (str):
            name (str):
            sha256 (str):
            size (int):
            version (int): 1 for the first upload under its name, then 2, 3, …
     """

    created_at: str
    id: str
    name: str
    sha256: str
    size: int
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        id = self.id

        name = self.name

        sha256 = self.sha256

        size = self.size

        version = self.version


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "created_at": created_at,
            "id": id,
            "name": name,
            "sha256": sha256,
            "size": size,
            "version": version,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = d.pop("created_at")

        id = d.pop("id")

        name = d.pop("name")

        sha256 = d.pop("sha256")

        size = d.pop("size")

        version = d.pop("version")

        plugin = cls(
            created_at=created_at,
            id=id,
            name=name,
            sha256=sha256,
            size=size,
            version=version,
        )


        plugin.additional_properties = d
        return plugin

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
