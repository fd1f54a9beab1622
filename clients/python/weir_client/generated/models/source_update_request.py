from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.source_update_request_api_key_type_0 import SourceUpdateRequestApiKeyType0
  from ..models.source_update_request_basic_type_0 import SourceUpdateRequestBasicType0
  from ..models.source_update_request_hmac_type_0 import SourceUpdateRequestHmacType0





T = TypeVar("T", bound="SourceUpdateRequest")



@_attrs_define
class SourceUpdateRequest:
    """ `PATCH /api/v2/sources/{id}`: fields left out keep their value; `type` cannot change and
    the secret changes by rotation.

        Attributes:
            api_key (None | SourceUpdateRequestApiKeyType0 | Unset):
            basic (None | SourceUpdateRequestBasicType0 | Unset):
            dedup_window (None | str | Unset):
            hmac (None | SourceUpdateRequestHmacType0 | Unset):
            name (None | str | Unset):
     """

    api_key: None | SourceUpdateRequestApiKeyType0 | Unset = UNSET
    basic: None | SourceUpdateRequestBasicType0 | Unset = UNSET
    dedup_window: None | str | Unset = UNSET
    hmac: None | SourceUpdateRequestHmacType0 | Unset = UNSET
    name: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.source_update_request_api_key_type_0 import SourceUpdateRequestApiKeyType0 # noqa: PLC0415
        from ..models.source_update_request_basic_type_0 import SourceUpdateRequestBasicType0 # noqa: PLC0415
        from ..models.source_update_request_hmac_type_0 import SourceUpdateRequestHmacType0 # noqa: PLC0415
        api_key: dict[str, Any] | None | Unset
        if isinstance(self.api_key, Unset):
            api_key = UNSET
        elif isinstance(self.api_key, SourceUpdateRequestApiKeyType0):
            api_key = self.api_key.to_dict()
        else:
            api_key = self.api_key

        basic: dict[str, Any] | None | Unset
        if isinstance(self.basic, Unset):
            basic = UNSET
        elif isinstance(self.basic, SourceUpdateRequestBasicType0):
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
        elif isinstance(self.hmac, SourceUpdateRequestHmacType0):
            hmac = self.hmac.to_dict()
        else:
            hmac = self.hmac

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name


        field_dict: dict[str, Any] = {}

        field_dict.update({
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

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.source_update_request_api_key_type_0 import SourceUpdateRequestApiKeyType0 # noqa: PLC0415
        from ..models.source_update_request_basic_type_0 import SourceUpdateRequestBasicType0 # noqa: PLC0415
        from ..models.source_update_request_hmac_type_0 import SourceUpdateRequestHmacType0 # noqa: PLC0415
        d = dict(src_dict)
        def _parse_api_key(data: object) -> None | SourceUpdateRequestApiKeyType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                api_key_type_0 = SourceUpdateRequestApiKeyType0.from_dict(data)



                return api_key_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceUpdateRequestApiKeyType0 | Unset, data)

        api_key = _parse_api_key(d.pop("api_key", UNSET))


        def _parse_basic(data: object) -> None | SourceUpdateRequestBasicType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                basic_type_0 = SourceUpdateRequestBasicType0.from_dict(data)



                return basic_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceUpdateRequestBasicType0 | Unset, data)

        basic = _parse_basic(d.pop("basic", UNSET))


        def _parse_dedup_window(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dedup_window = _parse_dedup_window(d.pop("dedup_window", UNSET))


        def _parse_hmac(data: object) -> None | SourceUpdateRequestHmacType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                hmac_type_0 = SourceUpdateRequestHmacType0.from_dict(data)



                return hmac_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceUpdateRequestHmacType0 | Unset, data)

        hmac = _parse_hmac(d.pop("hmac", UNSET))


        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))


        source_update_request = cls(
            api_key=api_key,
            basic=basic,
            dedup_window=dedup_window,
            hmac=hmac,
            name=name,
        )

        return source_update_request

