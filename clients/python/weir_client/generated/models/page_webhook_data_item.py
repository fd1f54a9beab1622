from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.endpoint_state import EndpointState
from ..models.ordering import Ordering
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.attachment import Attachment
  from ..models.certificate_view import CertificateView
  from ..models.page_webhook_data_item_destination_type_0 import PageWebhookDataItemDestinationType0
  from ..models.page_webhook_data_item_headers import PageWebhookDataItemHeaders





T = TypeVar("T", bound="PageWebhookDataItem")



@_attrs_define
class PageWebhookDataItem:
    """ A webhook subscription.

        Attributes:
            endpoint_state (EndpointState): The state of a webhook's endpoint.
            active (bool):
            created_at (str):
            headers (PageWebhookDataItemHeaders): Extra request headers sent with every delivery.
            id (str):
            name (str):
            ordering (Ordering): Whether a webhook's deliveries keep their subject's order (contract §7 `ordering`).
            plugins (list[Attachment]):
            signing_secret (str):
            subscribed_actions (list[str]):
            subscribed_sources (list[str]): The sources whose requests it receives (contract §10).
            updated_at (str):
            url (str):
            endpoint_state_reason (None | str | Unset): Why: the failure that began probing, or the answer that asked for
                the pause.
            endpoint_state_since (None | str | Unset): When the endpoint entered that state (`null` when it never left
                `healthy`).
            paused_until (None | str | Unset): Until when the endpoint asked for a pause (`null` when it is not paused).
            client_certificate (CertificateView | None | Unset):
            deactivated_at (None | str | Unset):
            deactivation_reason (None | str | Unset):
            destination (None | PageWebhookDataItemDestinationType0 | Unset): Where deliveries go when not to `url` over
                HTTP (contract §9), never with its
                credentials: `{"type": "nats", "url": "nats://host:port", "subject": "…"}`; absent for
                an HTTP endpoint.
            filter_ (None | str | Unset): A CEL expression over the event's envelope: only events for which it is `true` are
                delivered (`null`: every subscribed event).
            previous_secret_expires_at (None | str | Unset): When the previous secret stops signing (`null` when there is
                none).
            rate_limit (int | None | Unset): Deliveries per second to this webhook, every process together (`null`: no
                limit).
     """

    endpoint_state: EndpointState
    active: bool
    created_at: str
    headers: PageWebhookDataItemHeaders
    id: str
    name: str
    ordering: Ordering
    plugins: list[Attachment]
    signing_secret: str
    subscribed_actions: list[str]
    subscribed_sources: list[str]
    updated_at: str
    url: str
    endpoint_state_reason: None | str | Unset = UNSET
    endpoint_state_since: None | str | Unset = UNSET
    paused_until: None | str | Unset = UNSET
    client_certificate: CertificateView | None | Unset = UNSET
    deactivated_at: None | str | Unset = UNSET
    deactivation_reason: None | str | Unset = UNSET
    destination: None | PageWebhookDataItemDestinationType0 | Unset = UNSET
    filter_: None | str | Unset = UNSET
    previous_secret_expires_at: None | str | Unset = UNSET
    rate_limit: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.attachment import Attachment # noqa: PLC0415
        from ..models.certificate_view import CertificateView # noqa: PLC0415
        from ..models.page_webhook_data_item_destination_type_0 import PageWebhookDataItemDestinationType0 # noqa: PLC0415
        from ..models.page_webhook_data_item_headers import PageWebhookDataItemHeaders # noqa: PLC0415
        endpoint_state = self.endpoint_state.value

        active = self.active

        created_at = self.created_at

        headers = self.headers.to_dict()

        id = self.id

        name = self.name

        ordering = self.ordering.value

        plugins = []
        for plugins_item_data in self.plugins:
            plugins_item = plugins_item_data.to_dict()
            plugins.append(plugins_item)



        signing_secret = self.signing_secret

        subscribed_actions = self.subscribed_actions



        subscribed_sources = self.subscribed_sources



        updated_at = self.updated_at

        url = self.url

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

        client_certificate: dict[str, Any] | None | Unset
        if isinstance(self.client_certificate, Unset):
            client_certificate = UNSET
        elif isinstance(self.client_certificate, CertificateView):
            client_certificate = self.client_certificate.to_dict()
        else:
            client_certificate = self.client_certificate

        deactivated_at: None | str | Unset
        if isinstance(self.deactivated_at, Unset):
            deactivated_at = UNSET
        else:
            deactivated_at = self.deactivated_at

        deactivation_reason: None | str | Unset
        if isinstance(self.deactivation_reason, Unset):
            deactivation_reason = UNSET
        else:
            deactivation_reason = self.deactivation_reason

        destination: dict[str, Any] | None | Unset
        if isinstance(self.destination, Unset):
            destination = UNSET
        elif isinstance(self.destination, PageWebhookDataItemDestinationType0):
            destination = self.destination.to_dict()
        else:
            destination = self.destination

        filter_: None | str | Unset
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = self.filter_

        previous_secret_expires_at: None | str | Unset
        if isinstance(self.previous_secret_expires_at, Unset):
            previous_secret_expires_at = UNSET
        else:
            previous_secret_expires_at = self.previous_secret_expires_at

        rate_limit: int | None | Unset
        if isinstance(self.rate_limit, Unset):
            rate_limit = UNSET
        else:
            rate_limit = self.rate_limit


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "endpoint_state": endpoint_state,
            "active": active,
            "created_at": created_at,
            "headers": headers,
            "id": id,
            "name": name,
            "ordering": ordering,
            "plugins": plugins,
            "signing_secret": signing_secret,
            "subscribed_actions": subscribed_actions,
            "subscribed_sources": subscribed_sources,
            "updated_at": updated_at,
            "url": url,
        })
        if endpoint_state_reason is not UNSET:
            field_dict["endpoint_state_reason"] = endpoint_state_reason
        if endpoint_state_since is not UNSET:
            field_dict["endpoint_state_since"] = endpoint_state_since
        if paused_until is not UNSET:
            field_dict["paused_until"] = paused_until
        if client_certificate is not UNSET:
            field_dict["client_certificate"] = client_certificate
        if deactivated_at is not UNSET:
            field_dict["deactivated_at"] = deactivated_at
        if deactivation_reason is not UNSET:
            field_dict["deactivation_reason"] = deactivation_reason
        if destination is not UNSET:
            field_dict["destination"] = destination
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if previous_secret_expires_at is not UNSET:
            field_dict["previous_secret_expires_at"] = previous_secret_expires_at
        if rate_limit is not UNSET:
            field_dict["rate_limit"] = rate_limit

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attachment import Attachment # noqa: PLC0415
        from ..models.certificate_view import CertificateView # noqa: PLC0415
        from ..models.page_webhook_data_item_destination_type_0 import PageWebhookDataItemDestinationType0 # noqa: PLC0415
        from ..models.page_webhook_data_item_headers import PageWebhookDataItemHeaders # noqa: PLC0415
        d = dict(src_dict)
        endpoint_state = EndpointState(d.pop("endpoint_state"))




        active = d.pop("active")

        created_at = d.pop("created_at")

        headers = PageWebhookDataItemHeaders.from_dict(d.pop("headers"))




        id = d.pop("id")

        name = d.pop("name")

        ordering = Ordering(d.pop("ordering"))




        plugins = []
        _plugins = d.pop("plugins")
        for plugins_item_data in (_plugins):
            plugins_item = Attachment.from_dict(plugins_item_data)



            plugins.append(plugins_item)


        signing_secret = d.pop("signing_secret")

        subscribed_actions = cast(list[str], d.pop("subscribed_actions"))


        subscribed_sources = cast(list[str], d.pop("subscribed_sources"))


        updated_at = d.pop("updated_at")

        url = d.pop("url")

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


        def _parse_client_certificate(data: object) -> CertificateView | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                client_certificate_type_1 = CertificateView.from_dict(data)



                return client_certificate_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CertificateView | None | Unset, data)

        client_certificate = _parse_client_certificate(d.pop("client_certificate", UNSET))


        def _parse_deactivated_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deactivated_at = _parse_deactivated_at(d.pop("deactivated_at", UNSET))


        def _parse_deactivation_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deactivation_reason = _parse_deactivation_reason(d.pop("deactivation_reason", UNSET))


        def _parse_destination(data: object) -> None | PageWebhookDataItemDestinationType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                destination_type_0 = PageWebhookDataItemDestinationType0.from_dict(data)



                return destination_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PageWebhookDataItemDestinationType0 | Unset, data)

        destination = _parse_destination(d.pop("destination", UNSET))


        def _parse_filter_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))


        def _parse_previous_secret_expires_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        previous_secret_expires_at = _parse_previous_secret_expires_at(d.pop("previous_secret_expires_at", UNSET))


        def _parse_rate_limit(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        rate_limit = _parse_rate_limit(d.pop("rate_limit", UNSET))


        page_webhook_data_item = cls(
            endpoint_state=endpoint_state,
            active=active,
            created_at=created_at,
            headers=headers,
            id=id,
            name=name,
            ordering=ordering,
            plugins=plugins,
            signing_secret=signing_secret,
            subscribed_actions=subscribed_actions,
            subscribed_sources=subscribed_sources,
            updated_at=updated_at,
            url=url,
            endpoint_state_reason=endpoint_state_reason,
            endpoint_state_since=endpoint_state_since,
            paused_until=paused_until,
            client_certificate=client_certificate,
            deactivated_at=deactivated_at,
            deactivation_reason=deactivation_reason,
            destination=destination,
            filter_=filter_,
            previous_secret_expires_at=previous_secret_expires_at,
            rate_limit=rate_limit,
        )


        page_webhook_data_item.additional_properties = d
        return page_webhook_data_item

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
