from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="ClientCertificateRequest")



@_attrs_define
class ClientCertificateRequest:
    """ A client certificate and its private key, both PEM (the key is write-only: reads show
    the certificate's fingerprint, subject and expiry).

        Attributes:
            certificate (str): PEM certificate, its chain may follow.
            private_key (str): PEM private key (PKCS#8, PKCS#1 or SEC1) matching the certificate.
     """

    certificate: str
    private_key: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        certificate = self.certificate

        private_key = self.private_key


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "certificate": certificate,
            "private_key": private_key,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        certificate = d.pop("certificate")

        private_key = d.pop("private_key")

        client_certificate_request = cls(
            certificate=certificate,
            private_key=private_key,
        )


        client_certificate_request.additional_properties = d
        return client_certificate_request

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
