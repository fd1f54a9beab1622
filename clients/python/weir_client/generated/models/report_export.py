from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.exportable import Exportable





T = TypeVar("T", bound="ReportExport")



@_attrs_define
class ReportExport:
    """ An export as the API shows it.

        Attributes:
            created_at (str):
            exportable (Exportable): The record an export is of.
            format_ (str): `pdf`, `csv` or `json`.
            id (str):
            status (str): `queued`, `building`, `completed` or `failed`.
            completed_at (None | str | Unset):
            download_url (None | str | Unset):
            error (None | str | Unset):
     """

    created_at: str
    exportable: Exportable
    format_: str
    id: str
    status: str
    completed_at: None | str | Unset = UNSET
    download_url: None | str | Unset = UNSET
    error: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.exportable import Exportable # noqa: PLC0415
        created_at = self.created_at

        exportable = self.exportable.to_dict()

        format_ = self.format_

        id = self.id

        status = self.status

        completed_at: None | str | Unset
        if isinstance(self.completed_at, Unset):
            completed_at = UNSET
        else:
            completed_at = self.completed_at

        download_url: None | str | Unset
        if isinstance(self.download_url, Unset):
            download_url = UNSET
        else:
            download_url = self.download_url

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "created_at": created_at,
            "exportable": exportable,
            "format": format_,
            "id": id,
            "status": status,
        })
        if completed_at is not UNSET:
            field_dict["completed_at"] = completed_at
        if download_url is not UNSET:
            field_dict["download_url"] = download_url
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.exportable import Exportable # noqa: PLC0415
        d = dict(src_dict)
        created_at = d.pop("created_at")

        exportable = Exportable.from_dict(d.pop("exportable"))




        format_ = d.pop("format")

        id = d.pop("id")

        status = d.pop("status")

        def _parse_completed_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        completed_at = _parse_completed_at(d.pop("completed_at", UNSET))


        def _parse_download_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        download_url = _parse_download_url(d.pop("download_url", UNSET))


        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))


        report_export = cls(
            created_at=created_at,
            exportable=exportable,
            format_=format_,
            id=id,
            status=status,
            completed_at=completed_at,
            download_url=download_url,
            error=error,
        )


        report_export.additional_properties = d
        return report_export

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
