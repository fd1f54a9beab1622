from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.portal_brand import PortalBrand





T = TypeVar("T", bound="PortalLinkRequest")



@_attrs_define
class PortalLinkRequest:
    """ `POST /api/v2/portal_links`: what the link opens, for how long, and who may frame it.

        Attributes:
            accent_color (None | str | Unset): The pages' accent colour.
            brand (None | PortalBrand | Unset):
            frame_ancestors (list[str] | None | Unset): The origins whose pages may show the portal in a frame
                (`https://app.example.com`);
                none: it may not be framed.
            permissions (None | str | Unset): `manage` (every page and control; the default) or `view` (the pages, no
                control that
                changes anything).
            refresh_url (None | str | Unset): Where a page of this link sends its frame once the link has expired or was
                used: your
                backend makes a new link there and redirects to it. `https`, or `http` on loopback.
            return_url (None | str | Unset): A "back" link in the portal to your product: `https`, or `http` on loopback.
            theme (None | str | Unset): `light` or `dark`; left out, the pages follow the browser's (and so the framing
                page's) preference.
            ttl_seconds (int | None | Unset): How long the link may be opened, in seconds (default 300); it opens once.
     """

    accent_color: None | str | Unset = UNSET
    brand: None | PortalBrand | Unset = UNSET
    frame_ancestors: list[str] | None | Unset = UNSET
    permissions: None | str | Unset = UNSET
    refresh_url: None | str | Unset = UNSET
    return_url: None | str | Unset = UNSET
    theme: None | str | Unset = UNSET
    ttl_seconds: int | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.portal_brand import PortalBrand # noqa: PLC0415
        accent_color: None | str | Unset
        if isinstance(self.accent_color, Unset):
            accent_color = UNSET
        else:
            accent_color = self.accent_color

        brand: dict[str, Any] | None | Unset
        if isinstance(self.brand, Unset):
            brand = UNSET
        elif isinstance(self.brand, PortalBrand):
            brand = self.brand.to_dict()
        else:
            brand = self.brand

        frame_ancestors: list[str] | None | Unset
        if isinstance(self.frame_ancestors, Unset):
            frame_ancestors = UNSET
        elif isinstance(self.frame_ancestors, list):
            frame_ancestors = self.frame_ancestors


        else:
            frame_ancestors = self.frame_ancestors

        permissions: None | str | Unset
        if isinstance(self.permissions, Unset):
            permissions = UNSET
        else:
            permissions = self.permissions

        refresh_url: None | str | Unset
        if isinstance(self.refresh_url, Unset):
            refresh_url = UNSET
        else:
            refresh_url = self.refresh_url

        return_url: None | str | Unset
        if isinstance(self.return_url, Unset):
            return_url = UNSET
        else:
            return_url = self.return_url

        theme: None | str | Unset
        if isinstance(self.theme, Unset):
            theme = UNSET
        else:
            theme = self.theme

        ttl_seconds: int | None | Unset
        if isinstance(self.ttl_seconds, Unset):
            ttl_seconds = UNSET
        else:
            ttl_seconds = self.ttl_seconds


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if accent_color is not UNSET:
            field_dict["accent_color"] = accent_color
        if brand is not UNSET:
            field_dict["brand"] = brand
        if frame_ancestors is not UNSET:
            field_dict["frame_ancestors"] = frame_ancestors
        if permissions is not UNSET:
            field_dict["permissions"] = permissions
        if refresh_url is not UNSET:
            field_dict["refresh_url"] = refresh_url
        if return_url is not UNSET:
            field_dict["return_url"] = return_url
        if theme is not UNSET:
            field_dict["theme"] = theme
        if ttl_seconds is not UNSET:
            field_dict["ttl_seconds"] = ttl_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.portal_brand import PortalBrand # noqa: PLC0415
        d = dict(src_dict)
        def _parse_accent_color(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        accent_color = _parse_accent_color(d.pop("accent_color", UNSET))


        def _parse_brand(data: object) -> None | PortalBrand | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                brand_type_1 = PortalBrand.from_dict(data)



                return brand_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PortalBrand | Unset, data)

        brand = _parse_brand(d.pop("brand", UNSET))


        def _parse_frame_ancestors(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                frame_ancestors_type_0 = cast(list[str], data)

                return frame_ancestors_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        frame_ancestors = _parse_frame_ancestors(d.pop("frame_ancestors", UNSET))


        def _parse_permissions(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        permissions = _parse_permissions(d.pop("permissions", UNSET))


        def _parse_refresh_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        refresh_url = _parse_refresh_url(d.pop("refresh_url", UNSET))


        def _parse_return_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        return_url = _parse_return_url(d.pop("return_url", UNSET))


        def _parse_theme(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        theme = _parse_theme(d.pop("theme", UNSET))


        def _parse_ttl_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        ttl_seconds = _parse_ttl_seconds(d.pop("ttl_seconds", UNSET))


        portal_link_request = cls(
            accent_color=accent_color,
            brand=brand,
            frame_ancestors=frame_ancestors,
            permissions=permissions,
            refresh_url=refresh_url,
            return_url=return_url,
            theme=theme,
            ttl_seconds=ttl_seconds,
        )

        return portal_link_request

