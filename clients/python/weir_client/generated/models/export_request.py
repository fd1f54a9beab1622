from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.exportable import Exportable





T = TypeVar("T", bound="ExportRequest")



@_attrs_define
class ExportRequest:
    """ `POST /api/v2/report_exports`

        Attributes:
            exportable (Exportable): The record an export is of.
            format_ (str): `pdf`, `csv` or `json`.
     """

    exportable: Exportable
    format_: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.exportable import Exportable # noqa: PLC0415
        exportable = self.exportable.to_dict()

        format_ = self.format_


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "exportable": exportable,
            "format": format_,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.exportable import Exportable # noqa: PLC0415
        d = dict(src_dict)
        exportable = Exportable.from_dict(d.pop("exportable"))




        format_ = d.pop("format")

        export_request = cls(
            exportable=exportable,
            format_=format_,
        )

        return export_request

