from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.ordering import Ordering
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.amqp import Amqp
  from ..models.attachment_request import AttachmentRequest
  from ..models.client_certificate_request import ClientCertificateRequest
  from ..models.eventbridge import Eventbridge
  from ..models.http import Http
  from ..models.kafka import Kafka
  from ..models.kinesis import Kinesis
  from ..models.nats import Nats
  from ..models.sns import Sns
  from ..models.sqs import Sqs
  from ..models.webhook_update_request_headers_type_0 import WebhookUpdateRequestHeadersType0





T = TypeVar("T", bound="WebhookUpdateRequest")



@_attrs_define
class WebhookUpdateRequest:
    """ `PATCH /api/v2/webhooks/{id}`: fields left out keep their value.

        Attributes:
            active (bool | None | Unset): `true` reactivates a deactivated webhook and clears its failure streak.
            client_certificate (ClientCertificateRequest | None | Unset):
            destination (Amqp | Eventbridge | Http | Kafka | Kinesis | Nats | None | Sns | Sqs | Unset):
            filter_ (None | str | Unset): A CEL expression over the event's envelope (each top-level key a variable, `event`
                the whole), at most 4,096 bytes: only events for which it is `true` are delivered, e.g.
                `report_export.exportable.type == "Form" && creator.id in ["usr_1"]`; `null`: none.
            headers (None | Unset | WebhookUpdateRequestHeadersType0): Extra request headers sent with every delivery (at
                most 20; names Weir sets itself
                are refused); `null` or absent: none.
            name (None | str | Unset):
            ordering (None | Ordering | Unset):
            plugins (list[AttachmentRequest] | None | Unset):
            rate_limit (int | None | Unset): Deliveries per second (1 to 10,000); `null` removes the limit.
            subscribed_actions (list[str] | None | Unset):
            subscribed_sources (list[str] | None | Unset):
            url (None | str | Unset):
     """

    active: bool | None | Unset = UNSET
    client_certificate: ClientCertificateRequest | None | Unset = UNSET
    destination: Amqp | Eventbridge | Http | Kafka | Kinesis | Nats | None | Sns | Sqs | Unset = UNSET
    filter_: None | str | Unset = UNSET
    headers: None | Unset | WebhookUpdateRequestHeadersType0 = UNSET
    name: None | str | Unset = UNSET
    ordering: None | Ordering | Unset = UNSET
    plugins: list[AttachmentRequest] | None | Unset = UNSET
    rate_limit: int | None | Unset = UNSET
    subscribed_actions: list[str] | None | Unset = UNSET
    subscribed_sources: list[str] | None | Unset = UNSET
    url: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.amqp import Amqp # noqa: PLC0415
        from ..models.attachment_request import AttachmentRequest # noqa: PLC0415
        from ..models.client_certificate_request import ClientCertificateRequest # noqa: PLC0415
        from ..models.eventbridge import Eventbridge # noqa: PLC0415
        from ..models.http import Http # noqa: PLC0415
        from ..models.kafka import Kafka # noqa: PLC0415
        from ..models.kinesis import Kinesis # noqa: PLC0415
        from ..models.nats import Nats # noqa: PLC0415
        from ..models.sns import Sns # noqa: PLC0415
        from ..models.sqs import Sqs # noqa: PLC0415
        from ..models.webhook_update_request_headers_type_0 import WebhookUpdateRequestHeadersType0 # noqa: PLC0415
        active: bool | None | Unset
        if isinstance(self.active, Unset):
            active = UNSET
        else:
            active = self.active

        client_certificate: dict[str, Any] | None | Unset
        if isinstance(self.client_certificate, Unset):
            client_certificate = UNSET
        elif isinstance(self.client_certificate, ClientCertificateRequest):
            client_certificate = self.client_certificate.to_dict()
        else:
            client_certificate = self.client_certificate

        destination: dict[str, Any] | None | Unset
        if isinstance(self.destination, Unset):
            destination = UNSET
        elif isinstance(self.destination, Http):
            destination = self.destination.to_dict()
        elif isinstance(self.destination, Nats):
            destination = self.destination.to_dict()
        elif isinstance(self.destination, Amqp):
            destination = self.destination.to_dict()
        elif isinstance(self.destination, Sqs):
            destination = self.destination.to_dict()
        elif isinstance(self.destination, Sns):
            destination = self.destination.to_dict()
        elif isinstance(self.destination, Eventbridge):
            destination = self.destination.to_dict()
        elif isinstance(self.destination, Kinesis):
            destination = self.destination.to_dict()
        elif isinstance(self.destination, Kafka):
            destination = self.destination.to_dict()
        else:
            destination = self.destination

        filter_: None | str | Unset
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = self.filter_

        headers: dict[str, Any] | None | Unset
        if isinstance(self.headers, Unset):
            headers = UNSET
        elif isinstance(self.headers, WebhookUpdateRequestHeadersType0):
            headers = self.headers.to_dict()
        else:
            headers = self.headers

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        ordering: None | str | Unset
        if isinstance(self.ordering, Unset):
            ordering = UNSET
        elif isinstance(self.ordering, Ordering):
            ordering = self.ordering.value
        else:
            ordering = self.ordering

        plugins: list[dict[str, Any]] | None | Unset
        if isinstance(self.plugins, Unset):
            plugins = UNSET
        elif isinstance(self.plugins, list):
            plugins = []
            for plugins_type_0_item_data in self.plugins:
                plugins_type_0_item = plugins_type_0_item_data.to_dict()
                plugins.append(plugins_type_0_item)


        else:
            plugins = self.plugins

        rate_limit: int | None | Unset
        if isinstance(self.rate_limit, Unset):
            rate_limit = UNSET
        else:
            rate_limit = self.rate_limit

        subscribed_actions: list[str] | None | Unset
        if isinstance(self.subscribed_actions, Unset):
            subscribed_actions = UNSET
        elif isinstance(self.subscribed_actions, list):
            subscribed_actions = self.subscribed_actions


        else:
            subscribed_actions = self.subscribed_actions

        subscribed_sources: list[str] | None | Unset
        if isinstance(self.subscribed_sources, Unset):
            subscribed_sources = UNSET
        elif isinstance(self.subscribed_sources, list):
            subscribed_sources = self.subscribed_sources


        else:
            subscribed_sources = self.subscribed_sources

        url: None | str | Unset
        if isinstance(self.url, Unset):
            url = UNSET
        else:
            url = self.url


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if active is not UNSET:
            field_dict["active"] = active
        if client_certificate is not UNSET:
            field_dict["client_certificate"] = client_certificate
        if destination is not UNSET:
            field_dict["destination"] = destination
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if headers is not UNSET:
            field_dict["headers"] = headers
        if name is not UNSET:
            field_dict["name"] = name
        if ordering is not UNSET:
            field_dict["ordering"] = ordering
        if plugins is not UNSET:
            field_dict["plugins"] = plugins
        if rate_limit is not UNSET:
            field_dict["rate_limit"] = rate_limit
        if subscribed_actions is not UNSET:
            field_dict["subscribed_actions"] = subscribed_actions
        if subscribed_sources is not UNSET:
            field_dict["subscribed_sources"] = subscribed_sources
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.amqp import Amqp # noqa: PLC0415
        from ..models.attachment_request import AttachmentRequest # noqa: PLC0415
        from ..models.client_certificate_request import ClientCertificateRequest # noqa: PLC0415
        from ..models.eventbridge import Eventbridge # noqa: PLC0415
        from ..models.http import Http # noqa: PLC0415
        from ..models.kafka import Kafka # noqa: PLC0415
        from ..models.kinesis import Kinesis # noqa: PLC0415
        from ..models.nats import Nats # noqa: PLC0415
        from ..models.sns import Sns # noqa: PLC0415
        from ..models.sqs import Sqs # noqa: PLC0415
        from ..models.webhook_update_request_headers_type_0 import WebhookUpdateRequestHeadersType0 # noqa: PLC0415
        d = dict(src_dict)
        def _parse_active(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        active = _parse_active(d.pop("active", UNSET))


        def _parse_client_certificate(data: object) -> ClientCertificateRequest | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                client_certificate_type_1 = ClientCertificateRequest.from_dict(data)



                return client_certificate_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ClientCertificateRequest | None | Unset, data)

        client_certificate = _parse_client_certificate(d.pop("client_certificate", UNSET))


        def _parse_destination(data: object) -> Amqp | Eventbridge | Http | Kafka | Kinesis | Nats | None | Sns | Sqs | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_destination_request_http = Http.from_dict(data)



                return componentsschemas_destination_request_http
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_destination_request_nats = Nats.from_dict(data)



                return componentsschemas_destination_request_nats
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_destination_request_amqp = Amqp.from_dict(data)



                return componentsschemas_destination_request_amqp
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_destination_request_sqs = Sqs.from_dict(data)



                return componentsschemas_destination_request_sqs
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_destination_request_sns = Sns.from_dict(data)



                return componentsschemas_destination_request_sns
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_destination_request_eventbridge = Eventbridge.from_dict(data)



                return componentsschemas_destination_request_eventbridge
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_destination_request_kinesis = Kinesis.from_dict(data)



                return componentsschemas_destination_request_kinesis
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_destination_request_kafka = Kafka.from_dict(data)



                return componentsschemas_destination_request_kafka
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Amqp | Eventbridge | Http | Kafka | Kinesis | Nats | None | Sns | Sqs | Unset, data)

        destination = _parse_destination(d.pop("destination", UNSET))


        def _parse_filter_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))


        def _parse_headers(data: object) -> None | Unset | WebhookUpdateRequestHeadersType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                headers_type_0 = WebhookUpdateRequestHeadersType0.from_dict(data)



                return headers_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WebhookUpdateRequestHeadersType0, data)

        headers = _parse_headers(d.pop("headers", UNSET))


        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))


        def _parse_ordering(data: object) -> None | Ordering | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ordering_type_1 = Ordering(data)



                return ordering_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Ordering | Unset, data)

        ordering = _parse_ordering(d.pop("ordering", UNSET))


        def _parse_plugins(data: object) -> list[AttachmentRequest] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                plugins_type_0 = []
                _plugins_type_0 = data
                for plugins_type_0_item_data in (_plugins_type_0):
                    plugins_type_0_item = AttachmentRequest.from_dict(plugins_type_0_item_data)



                    plugins_type_0.append(plugins_type_0_item)

                return plugins_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[AttachmentRequest] | None | Unset, data)

        plugins = _parse_plugins(d.pop("plugins", UNSET))


        def _parse_rate_limit(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        rate_limit = _parse_rate_limit(d.pop("rate_limit", UNSET))


        def _parse_subscribed_actions(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                subscribed_actions_type_0 = cast(list[str], data)

                return subscribed_actions_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        subscribed_actions = _parse_subscribed_actions(d.pop("subscribed_actions", UNSET))


        def _parse_subscribed_sources(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                subscribed_sources_type_0 = cast(list[str], data)

                return subscribed_sources_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        subscribed_sources = _parse_subscribed_sources(d.pop("subscribed_sources", UNSET))


        def _parse_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        url = _parse_url(d.pop("url", UNSET))


        webhook_update_request = cls(
            active=active,
            client_certificate=client_certificate,
            destination=destination,
            filter_=filter_,
            headers=headers,
            name=name,
            ordering=ordering,
            plugins=plugins,
            rate_limit=rate_limit,
            subscribed_actions=subscribed_actions,
            subscribed_sources=subscribed_sources,
            url=url,
        )

        return webhook_update_request

