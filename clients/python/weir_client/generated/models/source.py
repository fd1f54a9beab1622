from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.source_settings_type_0 import SourceSettingsType0





T = TypeVar("T", bound="Source")



@_attrs_define
class Source:
    """ A source (contract §10).

        Attributes:
            created_at (str):
            dedup_window (str): How long a request's duplicate id is remembered (`24h`).
            id (str):
            ingest_url (str): Where the provider sends its webhooks: `<WEIR_PUBLIC_URL>/in/<token>`.
            name (str):
            type_ (str): `stripe`, `github`, `shopify`, `slack`, `twilio`, `standard_webhooks`, `hmac`,
                `basic`, `api_key` or `none`.
            updated_at (str):
            previous_secret_expires_at (None | str | Unset): Until when the secret rotated out is still accepted (`null`:
                none is).
            settings (None | SourceSettingsType0 | Unset): The settings of a generic kind, without its secret (`hmac`,
                `basic`, `api_key`).
     """

    created_at: str
    dedup_window: str
    id: str
    ingest_url: str
    name: str
    type_: str
    updated_at: str
    previous_secret_expires_at: None | str | Unset = UNSET
    settings: None | SourceSettingsType0 | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.source_settings_type_0 import SourceSettingsType0 # noqa: PLC0415
        created_at = self.created_at

        dedup_window = self.dedup_window

        id = self.id

        ingest_url = self.ingest_url

        name = self.name

        type_ = self.type_

        updated_at = self.updated_at

        previous_secret_expires_at: None | str | Unset
        if isinstance(self.previous_secret_expires_at, Unset):
            previous_secret_expires_at = UNSET
        else:
            previous_secret_expires_at = self.previous_secret_expires_at

        settings: dict[str, Any] | None | Unset
        if isinstance(self.settings, Unset):
            settings = UNSET
        elif isinstance(self.settings, SourceSettingsType0):
            settings = self.settings.to_dict()
        else:
            settings = self.settings


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "created_at": created_at,
            "dedup_window": dedup_window,
            "id": id,
            "ingest_url": ingest_url,
            "name": name,
            "type": type_,
            "updated_at": updated_at,
        })
        if previous_secret_expires_at is not UNSET:
            field_dict["previous_secret_expires_at"] = previous_secret_expires_at
        if settings is not UNSET:
            field_dict["settings"] = settings

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.source_settings_type_0 import SourceSettingsType0 # noqa: PLC0415
        d = dict(src_dict)
        created_at = d.pop("created_at")

        dedup_window = d.pop("dedup_window")

        id = d.pop("id")

        ingest_url = d.pop("ingest_url")

        name = d.pop("name")

        type_ = d.pop("type")

        updated_at = d.pop("updated_at")

        def _parse_previous_secret_expires_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        previous_secret_expires_at = _parse_previous_secret_expires_at(d.pop("previous_secret_expires_at", UNSET))


        def _parse_settings(data: object) -> None | SourceSettingsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                settings_type_0 = SourceSettingsType0.from_dict(data)



                return settings_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceSettingsType0 | Unset, data)

        settings = _parse_settings(d.pop("settings", UNSET))


        source = cls(
            created_at=created_at,
            dedup_window=dedup_window,
            id=id,
            ingest_url=ingest_url,
            name=name,
            type_=type_,
            updated_at=updated_at,
            previous_secret_expires_at=previous_secret_expires_at,
            settings=settings,
        )


        source.additional_properties = d
        return source

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
