from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.on_error import OnError
from typing import cast

if TYPE_CHECKING:
  from ..models.attachment_config import AttachmentConfig





T = TypeVar("T", bound="Attachment")



@_attrs_define
class Attachment:
    """ A plugin attached to a webhook (contract §5).

        Attributes:
            config (AttachmentConfig): Given to the plugin as JSON text.
            on_error (OnError): What happens to a delivery when an attached plugin fails.
            plugin_id (str):
     """

    config: AttachmentConfig
    on_error: OnError
    plugin_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.attachment_config import AttachmentConfig # noqa: PLC0415
        config = self.config.to_dict()

        on_error = self.on_error.value

        plugin_id = self.plugin_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "config": config,
            "on_error": on_error,
            "plugin_id": plugin_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attachment_config import AttachmentConfig # noqa: PLC0415
        d = dict(src_dict)
        config = AttachmentConfig.from_dict(d.pop("config"))




        on_error = OnError(d.pop("on_error"))




        plugin_id = d.pop("plugin_id")

        attachment = cls(
            config=config,
            on_error=on_error,
            plugin_id=plugin_id,
        )


        attachment.additional_properties = d
        return attachment

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
