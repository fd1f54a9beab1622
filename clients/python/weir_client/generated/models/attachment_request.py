from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.on_error import OnError
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.attachment_request_config_type_0 import AttachmentRequestConfigType0





T = TypeVar("T", bound="AttachmentRequest")



@_attrs_define
class AttachmentRequest:
    """ A plugin to attach (contract §5).

        Attributes:
            plugin_id (str):
            config (AttachmentRequestConfigType0 | None | Unset): Given to the plugin as JSON text (at most 64 KiB).
            on_error (None | OnError | Unset):
     """

    plugin_id: str
    config: AttachmentRequestConfigType0 | None | Unset = UNSET
    on_error: None | OnError | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.attachment_request_config_type_0 import AttachmentRequestConfigType0 # noqa: PLC0415
        plugin_id = self.plugin_id

        config: dict[str, Any] | None | Unset
        if isinstance(self.config, Unset):
            config = UNSET
        elif isinstance(self.config, AttachmentRequestConfigType0):
            config = self.config.to_dict()
        else:
            config = self.config

        on_error: None | str | Unset
        if isinstance(self.on_error, Unset):
            on_error = UNSET
        elif isinstance(self.on_error, OnError):
            on_error = self.on_error.value
        else:
            on_error = self.on_error


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "plugin_id": plugin_id,
        })
        if config is not UNSET:
            field_dict["config"] = config
        if on_error is not UNSET:
            field_dict["on_error"] = on_error

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attachment_request_config_type_0 import AttachmentRequestConfigType0 # noqa: PLC0415
        d = dict(src_dict)
        plugin_id = d.pop("plugin_id")

        def _parse_config(data: object) -> AttachmentRequestConfigType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                config_type_0 = AttachmentRequestConfigType0.from_dict(data)



                return config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AttachmentRequestConfigType0 | None | Unset, data)

        config = _parse_config(d.pop("config", UNSET))


        def _parse_on_error(data: object) -> None | OnError | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                on_error_type_1 = OnError(data)



                return on_error_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OnError | Unset, data)

        on_error = _parse_on_error(d.pop("on_error", UNSET))


        attachment_request = cls(
            plugin_id=plugin_id,
            config=config,
            on_error=on_error,
        )

        return attachment_request

