from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.endpoint_state import EndpointState
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="EndpointView")



@_attrs_define
class EndpointView:
    """ The endpoint state fields of a webhook as the API shows them.

        Attributes:
            endpoint_state (EndpointState): The state of a webhook's endpoint.
            endpoint_state_reason (None | str | Unset): Why: the failure that began probing, or the answer that asked for
                the pause.
            endpoint_state_since (None | str | Unset): When the endpoint entered that state (`null` when it never left
                `healthy`).
            paused_until (None | str | Unset): Until when the endpoint asked for a pause (`null` when it is not paused).
     """

    endpoint_state: EndpointState
    endpoint_state_reason: None | str | Unset = UNSET
    endpoint_state_since: None | str | Unset = UNSET
    paused_until: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        endpoint_state = self.endpoint_state.value

        endpoint_state_reason: None | str | Unset
        if isinstance(self.endpoint_state_reason, Unset):
            endpoint_state_reason = UNSET
        else:
            endpoint_state_reason = self.endpoint_state_reason

        endpoint_state_since: None | str | Unset
        if isinstance(self.endpoint_state_since, Unset):
            endpoint_state_since = UNSET
        else:
            endpoint_state_since = self.endpoint_state_since

        paused_until: None | str | Unset
        if isinstance(self.paused_until, Unset):
            paused_until = UNSET
        else:
            paused_until = self.paused_until


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "endpoint_state": endpoint_state,
        })
        if endpoint_state_reason is not UNSET:
            field_dict["endpoint_state_reason"] = endpoint_state_reason
        if endpoint_state_since is not UNSET:
            field_dict["endpoint_state_since"] = endpoint_state_since
        if paused_until is not UNSET:
            field_dict["paused_until"] = paused_until

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint_state = EndpointState(d.pop("endpoint_state"))




        def _parse_endpoint_state_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        endpoint_state_reason = _parse_endpoint_state_reason(d.pop("endpoint_state_reason", UNSET))


        def _parse_endpoint_state_since(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        endpoint_state_since = _parse_endpoint_state_since(d.pop("endpoint_state_since", UNSET))


        def _parse_paused_until(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        paused_until = _parse_paused_until(d.pop("paused_until", UNSET))


        endpoint_view = cls(
            endpoint_state=endpoint_state,
            endpoint_state_reason=endpoint_state_reason,
            endpoint_state_since=endpoint_state_since,
            paused_until=paused_until,
        )


        endpoint_view.additional_properties = d
        return endpoint_view

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
