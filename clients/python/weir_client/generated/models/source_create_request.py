from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.source_create_request_api_key_type_0 import SourceCreateRequestApiKeyType0
  from ..models.source_create_request_basic_type_0 import SourceCreateRequestBasicType0
  from ..models.source_create_request_hmac_type_0 import SourceCreateRequestHmacType0





T = TypeVar("T", bound="SourceCreateRequest")



@_attrs_define
class SourceCreateRequest:
    """ `POST /api/v2/sources`

        Attributes:
            type_ (str): `stripe`, `github`, `shopify`, `slack`, `twilio`, `standard_webhooks`, `hmac`, `basic`,
                `api_key` or `none`.
            api_key (None | SourceCreateRequestApiKeyType0 | Unset): For `api_key`: `{"header", "key"}` (the key sealed).
            basic (None | SourceCreateRequestBasicType0 | Unset): For `basic`: `{"username", "password"}` (the password
                sealed).
            dedup_window (None | str | Unset): How long a request's duplicate id (the provider's delivery id, else the
                body's
                SHA-256) is remembered: `1s` to `7d`, default `24h`. Example: 24h.
            hmac (None | SourceCreateRequestHmacType0 | Unset): For `hmac`: `{"header": "X-Signature", "algorithm":
                "sha256"|"sha1"|"sha512",
                "encoding": "hex"|"base64", "prefix": "sha256="}`.
            name (None | str | Unset): Defaults to the kind's name (`Stripe`).
            secret (None | str | Unset): The provider's signing secret (Stripe's `whsec_…`, GitHub's webhook secret,
                Shopify's
                app secret, Slack's signing secret, Twilio's auth token, a Standard Webhooks
                `whsec_<base64>`; for `hmac` the key). Sealed, never shown again. Not given for
                `basic`, `api_key` and `none`.
     """

    type_: str
    api_key: None | SourceCreateRequestApiKeyType0 | Unset = UNSET
    basic: None | SourceCreateRequestBasicType0 | Unset = UNSET
    dedup_window: None | str | Unset = UNSET
    hmac: None | SourceCreateRequestHmacType0 | Unset = UNSET
    name: None | str | Unset = UNSET
    secret: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.source_create_request_api_key_type_0 import SourceCreateRequestApiKeyType0 # noqa: PLC0415
        from ..models.source_create_request_basic_type_0 import SourceCreateRequestBasicType0 # noqa: PLC0415
        from ..models.source_create_request_hmac_type_0 import SourceCreateRequestHmacType0 # noqa: PLC0415
        type_ = self.type_

        api_key: dict[str, Any] | None | Unset
        if isinstance(self.api_key, Unset):
            api_key = UNSET
        elif isinstance(self.api_key, SourceCreateRequestApiKeyType0):
            api_key = self.api_key.to_dict()
        else:
            api_key = self.api_key

        basic: dict[str, Any] | None | Unset
        if isinstance(self.basic, Unset):
            basic = UNSET
        elif isinstance(self.basic, SourceCreateRequestBasicType0):
            basic = self.basic.to_dict()
        else:
            basic = self.basic

        dedup_window: None | str | Unset
        if isinstance(self.dedup_window, Unset):
            dedup_window = UNSET
        else:
            dedup_window = self.dedup_window

        hmac: dict[str, Any] | None | Unset
        if isinstance(self.hmac, Unset):
            hmac = UNSET
        elif isinstance(self.hmac, SourceCreateRequestHmacType0):
            hmac = self.hmac.to_dict()
        else:
            hmac = self.hmac

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        secret: None | str | Unset
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "type": type_,
        })
        if api_key is not UNSET:
            field_dict["api_key"] = api_key
        if basic is not UNSET:
            field_dict["basic"] = basic
        if dedup_window is not UNSET:
            field_dict["dedup_window"] = dedup_window
        if hmac is not UNSET:
            field_dict["hmac"] = hmac
        if name is not UNSET:
            field_dict["name"] = name
        if secret is not UNSET:
            field_dict["secret"] = secret

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.source_create_request_api_key_type_0 import SourceCreateRequestApiKeyType0 # noqa: PLC0415
        from ..models.source_create_request_basic_type_0 import SourceCreateRequestBasicType0 # noqa: PLC0415
        from ..models.source_create_request_hmac_type_0 import SourceCreateRequestHmacType0 # noqa: PLC0415
        d = dict(src_dict)
        type_ = d.pop("type")

        def _parse_api_key(data: object) -> None | SourceCreateRequestApiKeyType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                api_key_type_0 = SourceCreateRequestApiKeyType0.from_dict(data)



                return api_key_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceCreateRequestApiKeyType0 | Unset, data)

        api_key = _parse_api_key(d.pop("api_key", UNSET))


        def _parse_basic(data: object) -> None | SourceCreateRequestBasicType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                basic_type_0 = SourceCreateRequestBasicType0.from_dict(data)



                return basic_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceCreateRequestBasicType0 | Unset, data)

        basic = _parse_basic(d.pop("basic", UNSET))


        def _parse_dedup_window(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dedup_window = _parse_dedup_window(d.pop("dedup_window", UNSET))


        def _parse_hmac(data: object) -> None | SourceCreateRequestHmacType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                hmac_type_0 = SourceCreateRequestHmacType0.from_dict(data)



                return hmac_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceCreateRequestHmacType0 | Unset, data)

        hmac = _parse_hmac(d.pop("hmac", UNSET))


        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))


        def _parse_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        secret = _parse_secret(d.pop("secret", UNSET))


        source_create_request = cls(
            type_=type_,
            api_key=api_key,
            basic=basic,
            dedup_window=dedup_window,
            hmac=hmac,
            name=name,
            secret=secret,
        )

        return source_create_request

