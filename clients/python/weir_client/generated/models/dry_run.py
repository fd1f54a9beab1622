from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.dry_run_logs_item import DryRunLogsItem
  from ..models.header import Header





T = TypeVar("T", bound="DryRun")



@_attrs_define
class DryRun:
    """ The report of a dry run.

        Attributes:
            duration_us (int):
            fuel_budget (int):
            fuel_used (int):
            headers (list[Header]): Extra headers a delivery would carry.
            logs (list[DryRunLogsItem]):
            outcome (str): `deliver`, `drop` or `error`.
            body (None | str | Unset): The body a delivery would carry.
            error (None | str | Unset):
            reason (None | str | Unset): Why it dropped the event.
     """

    duration_us: int
    fuel_budget: int
    fuel_used: int
    headers: list[Header]
    logs: list[DryRunLogsItem]
    outcome: str
    body: None | str | Unset = UNSET
    error: None | str | Unset = UNSET
    reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.dry_run_logs_item import DryRunLogsItem # noqa: PLC0415
        from ..models.header import Header # noqa: PLC0415
        duration_us = self.duration_us

        fuel_budget = self.fuel_budget

        fuel_used = self.fuel_used

        headers = []
        for headers_item_data in self.headers:
            headers_item = headers_item_data.to_dict()
            headers.append(headers_item)



        logs = []
        for logs_item_data in self.logs:
            logs_item = logs_item_data.to_dict()
            logs.append(logs_item)



        outcome = self.outcome

        body: None | str | Unset
        if isinstance(self.body, Unset):
            body = UNSET
        else:
            body = self.body

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "duration_us": duration_us,
            "fuel_budget": fuel_budget,
            "fuel_used": fuel_used,
            "headers": headers,
            "logs": logs,
            "outcome": outcome,
        })
        if body is not UNSET:
            field_dict["body"] = body
        if error is not UNSET:
            field_dict["error"] = error
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dry_run_logs_item import DryRunLogsItem # noqa: PLC0415
        from ..models.header import Header # noqa: PLC0415
        d = dict(src_dict)
        duration_us = d.pop("duration_us")

        fuel_budget = d.pop("fuel_budget")

        fuel_used = d.pop("fuel_used")

        headers = []
        _headers = d.pop("headers")
        for headers_item_data in (_headers):
            headers_item = Header.from_dict(headers_item_data)



            headers.append(headers_item)


        logs = []
        _logs = d.pop("logs")
        for logs_item_data in (_logs):
            logs_item = DryRunLogsItem.from_dict(logs_item_data)



            logs.append(logs_item)


        outcome = d.pop("outcome")

        def _parse_body(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        body = _parse_body(d.pop("body", UNSET))


        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))


        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))


        dry_run = cls(
            duration_us=duration_us,
            fuel_budget=fuel_budget,
            fuel_used=fuel_used,
            headers=headers,
            logs=logs,
            outcome=outcome,
            body=body,
            error=error,
            reason=reason,
        )


        dry_run.additional_properties = d
        return dry_run

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
