from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="PluginRun")



@_attrs_define
class PluginRun:
    """ What one attached plugin did to a delivery.

        Attributes:
            logs (list[str]):
            outcome (str): `deliver`, `drop` or `error`.
            plugin_id (str):
            error (None | str | Unset):
     """

    logs: list[str]
    outcome: str
    plugin_id: str
    error: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        logs = self.logs



        outcome = self.outcome

        plugin_id = self.plugin_id

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "logs": logs,
            "outcome": outcome,
            "plugin_id": plugin_id,
        })
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        logs = cast(list[str], d.pop("logs"))


        outcome = d.pop("outcome")

        plugin_id = d.pop("plugin_id")

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))


        plugin_run = cls(
            logs=logs,
            outcome=outcome,
            plugin_id=plugin_id,
            error=error,
        )


        plugin_run.additional_properties = d
        return plugin_run

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
