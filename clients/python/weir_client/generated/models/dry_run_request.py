from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.dry_run_request_config_type_0 import DryRunRequestConfigType0
  from ..models.dry_run_request_event_type_0 import DryRunRequestEventType0





T = TypeVar("T", bound="DryRunRequest")



@_attrs_define
class DryRunRequest:
    """ `POST /api/v2/plugins/{id}/test`: either `event` (as published, or the envelope as a
    subscriber received it) or `delivery_id` (rerun on a real delivery's event).

        Attributes:
            config (DryRunRequestConfigType0 | None | Unset):
            delivery_id (None | str | Unset):
            event (DryRunRequestEventType0 | None | Unset):
     """

    config: DryRunRequestConfigType0 | None | Unset = UNSET
    delivery_id: None | str | Unset = UNSET
    event: DryRunRequestEventType0 | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.dry_run_request_config_type_0 import DryRunRequestConfigType0 # noqa: PLC0415
        from ..models.dry_run_request_event_type_0 import DryRunRequestEventType0 # noqa: PLC0415
        config: dict[str, Any] | None | Unset
        if isinstance(self.config, Unset):
            config = UNSET
        elif isinstance(self.config, DryRunRequestConfigType0):
            config = self.config.to_dict()
        else:
            config = self.config

        delivery_id: None | str | Unset
        if isinstance(self.delivery_id, Unset):
            delivery_id = UNSET
        else:
            delivery_id = self.delivery_id

        event: dict[str, Any] | None | Unset
        if isinstance(self.event, Unset):
            event = UNSET
        elif isinstance(self.event, DryRunRequestEventType0):
            event = self.event.to_dict()
        else:
            event = self.event


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if config is not UNSET:
            field_dict["config"] = config
        if delivery_id is not UNSET:
            field_dict["delivery_id"] = delivery_id
        if event is not UNSET:
            field_dict["event"] = event

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dry_run_request_config_type_0 import DryRunRequestConfigType0 # noqa: PLC0415
        from ..models.dry_run_request_event_type_0 import DryRunRequestEventType0 # noqa: PLC0415
        d = dict(src_dict)
        def _parse_config(data: object) -> DryRunRequestConfigType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                config_type_0 = DryRunRequestConfigType0.from_dict(data)



                return config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DryRunRequestConfigType0 | None | Unset, data)

        config = _parse_config(d.pop("config", UNSET))


        def _parse_delivery_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        delivery_id = _parse_delivery_id(d.pop("delivery_id", UNSET))


        def _parse_event(data: object) -> DryRunRequestEventType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                event_type_0 = DryRunRequestEventType0.from_dict(data)



                return event_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DryRunRequestEventType0 | None | Unset, data)

        event = _parse_event(d.pop("event", UNSET))


        dry_run_request = cls(
            config=config,
            delivery_id=delivery_id,
            event=event,
        )

        return dry_run_request

