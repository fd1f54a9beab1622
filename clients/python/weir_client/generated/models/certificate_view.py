from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="CertificateView")



@_attrs_define
class CertificateView:
    """ What reads show of a webhook's client certificate.

        Attributes:
            fingerprint_sha256 (str): SHA-256 of the leaf certificate's DER, lowercase hex.
            not_after (str): When the leaf expires (RFC 3339).
            subject (str): The leaf's subject, as RFC 4514 text (`CN=…, O=…`).
     """

    fingerprint_sha256: str
    not_after: str
    subject: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        fingerprint_sha256 = self.fingerprint_sha256

        not_after = self.not_after

        subject = self.subject


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "fingerprint_sha256": fingerprint_sha256,
            "not_after": not_after,
            "subject": subject,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        fingerprint_sha256 = d.pop("fingerprint_sha256")

        not_after = d.pop("not_after")

        subject = d.pop("subject")

        certificate_view = cls(
            fingerprint_sha256=fingerprint_sha256,
            not_after=not_after,
            subject=subject,
        )


        certificate_view.additional_properties = d
        return certificate_view

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
