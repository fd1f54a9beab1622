from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.status import Status
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.attempt import Attempt
  from ..models.delivery_request import DeliveryRequest
  from ..models.plugin_run import PluginRun





T = TypeVar("T", bound="Delivery")



@_attrs_define
class Delivery:
    """ A delivery record as the API shows it.

        Attributes:
            action (str):
            attempts (list[Attempt]):
            created_at (str):
            event_id (str):
            id (str):
            plugins (list[PluginRun]):
            request (DeliveryRequest): The request of a delivery: the exact headers of its latest attempt and the body.
            status (Status): A delivery's status (contract §2), shared by the queue and the API.
            updated_at (str):
            webhook_id (str):
            error (None | str | Unset): Why the delivery was taken out of the queue without an outcome (a record that could
                not be read); absent otherwise.
            next_attempt_at (None | str | Unset):
     """

    action: str
    attempts: list[Attempt]
    created_at: str
    event_id: str
    id: str
    plugins: list[PluginRun]
    request: DeliveryRequest
    status: Status
    updated_at: str
    webhook_id: str
    error: None | str | Unset = UNSET
    next_attempt_at: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.attempt import Attempt # noqa: PLC0415
        from ..models.delivery_request import DeliveryRequest # noqa: PLC0415
        from ..models.plugin_run import PluginRun # noqa: PLC0415
        action = self.action

        attempts = []
        for attempts_item_data in self.attempts:
            attempts_item = attempts_item_data.to_dict()
            attempts.append(attempts_item)



        created_at = self.created_at

        event_id = self.event_id

        id = self.id

        plugins = []
        for plugins_item_data in self.plugins:
            plugins_item = plugins_item_data.to_dict()
            plugins.append(plugins_item)



        request = self.request.to_dict()

        status = self.status.value

        updated_at = self.updated_at

        webhook_id = self.webhook_id

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        next_attempt_at: None | str | Unset
        if isinstance(self.next_attempt_at, Unset):
            next_attempt_at = UNSET
        else:
            next_attempt_at = self.next_attempt_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "action": action,
            "attempts": attempts,
            "created_at": created_at,
            "event_id": event_id,
            "id": id,
            "plugins": plugins,
            "request": request,
            "status": status,
            "updated_at": updated_at,
            "webhook_id": webhook_id,
        })
        if error is not UNSET:
            field_dict["error"] = error
        if next_attempt_at is not UNSET:
            field_dict["next_attempt_at"] = next_attempt_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt import Attempt # noqa: PLC0415
        from ..models.delivery_request import DeliveryRequest # noqa: PLC0415
        from ..models.plugin_run import PluginRun # noqa: PLC0415
        d = dict(src_dict)
        action = d.pop("action")

        attempts = []
        _attempts = d.pop("attempts")
        for attempts_item_data in (_attempts):
            attempts_item = Attempt.from_dict(attempts_item_data)



            attempts.append(attempts_item)


        created_at = d.pop("created_at")

        event_id = d.pop("event_id")

        id = d.pop("id")

        plugins = []
        _plugins = d.pop("plugins")
        for plugins_item_data in (_plugins):
            plugins_item = PluginRun.from_dict(plugins_item_data)



            plugins.append(plugins_item)


        request = DeliveryRequest.from_dict(d.pop("request"))




        status = Status(d.pop("status"))




        updated_at = d.pop("updated_at")

        webhook_id = d.pop("webhook_id")

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))


        def _parse_next_attempt_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at", UNSET))


        delivery = cls(
            action=action,
            attempts=attempts,
            created_at=created_at,
            event_id=event_id,
            id=id,
            plugins=plugins,
            request=request,
            status=status,
            updated_at=updated_at,
            webhook_id=webhook_id,
            error=error,
            next_attempt_at=next_attempt_at,
        )


        delivery.additional_properties = d
        return delivery

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
