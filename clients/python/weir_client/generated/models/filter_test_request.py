from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.filter_test_request_event_type_0 import FilterTestRequestEventType0





T = TypeVar("T", bound="FilterTestRequest")



@_attrs_define
class FilterTestRequest:
    """ `POST /api/v2/filters/test`: a filter and the event to try it on (its envelope, or the
    id of one of the organisation's events).

        Attributes:
            filter_ (str): A CEL expression, as `filter` on a webhook.
            event (FilterTestRequestEventType0 | None | Unset): An event's envelope, as delivered.
            event_id (None | str | Unset): Instead of `event`: one of the organisation's events.
     """

    filter_: str
    event: FilterTestRequestEventType0 | None | Unset = UNSET
    event_id: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.filter_test_request_event_type_0 import FilterTestRequestEventType0 # noqa: PLC0415
        filter_ = self.filter_

        event: dict[str, Any] | None | Unset
        if isinstance(self.event, Unset):
            event = UNSET
        elif isinstance(self.event, FilterTestRequestEventType0):
            event = self.event.to_dict()
        else:
            event = self.event

        event_id: None | str | Unset
        if isinstance(self.event_id, Unset):
            event_id = UNSET
        else:
            event_id = self.event_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "filter": filter_,
        })
        if event is not UNSET:
            field_dict["event"] = event
        if event_id is not UNSET:
            field_dict["event_id"] = event_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.filter_test_request_event_type_0 import FilterTestRequestEventType0 # noqa: PLC0415
        d = dict(src_dict)
        filter_ = d.pop("filter")

        def _parse_event(data: object) -> FilterTestRequestEventType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                event_type_0 = FilterTestRequestEventType0.from_dict(data)



                return event_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(FilterTestRequestEventType0 | None | Unset, data)

        event = _parse_event(d.pop("event", UNSET))


        def _parse_event_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        event_id = _parse_event_id(d.pop("event_id", UNSET))


        filter_test_request = cls(
            filter_=filter_,
            event=event,
            event_id=event_id,
        )

        return filter_test_request

