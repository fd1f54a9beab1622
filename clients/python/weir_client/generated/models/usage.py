from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.figure import Figure





T = TypeVar("T", bound="Usage")



@_attrs_define
class Usage:
    """ An organisation's usage of its plan now.

        Attributes:
            day (str): The UTC day `events` counts, `YYYY-MM-DD`.
            events (Figure): One count and its limit (`None`: no limit).
            plan (str):
            plugin_bytes (Figure): One count and its limit (`None`: no limit).
            plugins (Figure): One count and its limit (`None`: no limit).
            webhooks (Figure): One count and its limit (`None`: no limit).
     """

    day: str
    events: Figure
    plan: str
    plugin_bytes: Figure
    plugins: Figure
    webhooks: Figure
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.figure import Figure # noqa: PLC0415
        day = self.day

        events = self.events.to_dict()

        plan = self.plan

        plugin_bytes = self.plugin_bytes.to_dict()

        plugins = self.plugins.to_dict()

        webhooks = self.webhooks.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "day": day,
            "events": events,
            "plan": plan,
            "plugin_bytes": plugin_bytes,
            "plugins": plugins,
            "webhooks": webhooks,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.figure import Figure # noqa: PLC0415
        d = dict(src_dict)
        day = d.pop("day")

        events = Figure.from_dict(d.pop("events"))




        plan = d.pop("plan")

        plugin_bytes = Figure.from_dict(d.pop("plugin_bytes"))




        plugins = Figure.from_dict(d.pop("plugins"))




        webhooks = Figure.from_dict(d.pop("webhooks"))




        usage = cls(
            day=day,
            events=events,
            plan=plan,
            plugin_bytes=plugin_bytes,
            plugins=plugins,
            webhooks=webhooks,
        )


        usage.additional_properties = d
        return usage

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
