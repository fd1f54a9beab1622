""" Contains all the data models used in inputs/outputs """

from .accepted import Accepted
from .amqp import Amqp
from .amqp_type import AmqpType
from .attachment import Attachment
from .attachment_config import AttachmentConfig
from .attachment_request import AttachmentRequest
from .attachment_request_config_type_0 import AttachmentRequestConfigType0
from .attempt import Attempt
from .catalogue import Catalogue
from .catalogue_category import CatalogueCategory
from .certificate_view import CertificateView
from .client_certificate_request import ClientCertificateRequest
from .count import Count
from .created_link import CreatedLink
from .creator import Creator
from .delivery import Delivery
from .delivery_request import DeliveryRequest
from .delivery_request_headers import DeliveryRequestHeaders
from .dry_run import DryRun
from .dry_run_logs_item import DryRunLogsItem
from .dry_run_request import DryRunRequest
from .dry_run_request_config_type_0 import DryRunRequestConfigType0
from .dry_run_request_event_type_0 import DryRunRequestEventType0
from .ended import Ended
from .endpoint_state import EndpointState
from .endpoint_view import EndpointView
from .error_body import ErrorBody
from .error_detail import ErrorDetail
from .event import Event
from .event_delivery import EventDelivery
from .event_envelope import EventEnvelope
from .eventbridge import Eventbridge
from .eventbridge_type import EventbridgeType
from .export_request import ExportRequest
from .exportable import Exportable
from .field_error import FieldError
from .figure import Figure
from .filter_test import FilterTest
from .filter_test_request import FilterTestRequest
from .filter_test_request_event_type_0 import FilterTestRequestEventType0
from .header import Header
from .health import Health
from .http import Http
from .http_type import HttpType
from .ingested import Ingested
from .kafka import Kafka
from .kafka_key import KafkaKey
from .kafka_type import KafkaType
from .kinesis import Kinesis
from .kinesis_type import KinesisType
from .logged_event import LoggedEvent
from .nats import Nats
from .nats_type import NatsType
from .o_auth_error_body import OAuthErrorBody
from .on_error import OnError
from .operations_openapi_json_response_200 import OperationsOpenapiJsonResponse200
from .ordering import Ordering
from .page_delivery import PageDelivery
from .page_delivery_data_item import PageDeliveryDataItem
from .page_logged_event import PageLoggedEvent
from .page_logged_event_data_item import PageLoggedEventDataItem
from .page_plugin import PagePlugin
from .page_plugin_data_item import PagePluginDataItem
from .page_source import PageSource
from .page_source_data_item import PageSourceDataItem
from .page_source_data_item_settings_type_0 import PageSourceDataItemSettingsType0
from .page_source_request import PageSourceRequest
from .page_source_request_data_item import PageSourceRequestDataItem
from .page_webhook import PageWebhook
from .page_webhook_data_item import PageWebhookDataItem
from .page_webhook_data_item_destination_type_0 import PageWebhookDataItemDestinationType0
from .page_webhook_data_item_headers import PageWebhookDataItemHeaders
from .plugin import Plugin
from .plugin_run import PluginRun
from .portal_brand import PortalBrand
from .portal_link_request import PortalLinkRequest
from .publish_request import PublishRequest
from .replay_request import ReplayRequest
from .replay_status import ReplayStatus
from .replay_view import ReplayView
from .report_export import ReportExport
from .report_exports_download_response_200 import ReportExportsDownloadResponse200
from .retry_failed_request import RetryFailedRequest
from .revoke_request import RevokeRequest
from .rotate_secret_request import RotateSecretRequest
from .sns import Sns
from .sns_type import SnsType
from .source import Source
from .source_create_request import SourceCreateRequest
from .source_create_request_api_key_type_0 import SourceCreateRequestApiKeyType0
from .source_create_request_basic_type_0 import SourceCreateRequestBasicType0
from .source_create_request_hmac_type_0 import SourceCreateRequestHmacType0
from .source_request import SourceRequest
from .source_rotate_request import SourceRotateRequest
from .source_settings_type_0 import SourceSettingsType0
from .source_update_request import SourceUpdateRequest
from .source_update_request_api_key_type_0 import SourceUpdateRequestApiKeyType0
from .source_update_request_basic_type_0 import SourceUpdateRequestBasicType0
from .source_update_request_hmac_type_0 import SourceUpdateRequestHmacType0
from .sqs import Sqs
from .sqs_type import SqsType
from .status import Status
from .subject import Subject
from .test_event_queued import TestEventQueued
from .test_event_request import TestEventRequest
from .token import Token
from .token_request import TokenRequest
from .usage import Usage
from .webhook import Webhook
from .webhook_create_request import WebhookCreateRequest
from .webhook_create_request_headers_type_0 import WebhookCreateRequestHeadersType0
from .webhook_destination_type_0 import WebhookDestinationType0
from .webhook_headers import WebhookHeaders
from .webhook_update_request import WebhookUpdateRequest
from .webhook_update_request_headers_type_0 import WebhookUpdateRequestHeadersType0

__all__ = (
    "Accepted",
    "Amqp",
    "AmqpType",
    "Attachment",
    "AttachmentConfig",
    "AttachmentRequest",
    "AttachmentRequestConfigType0",
    "Attempt",
    "Catalogue",
    "CatalogueCategory",
    "CertificateView",
    "ClientCertificateRequest",
    "Count",
    "CreatedLink",
    "Creator",
    "Delivery",
    "DeliveryRequest",
    "DeliveryRequestHeaders",
    "DryRun",
    "DryRunLogsItem",
    "DryRunRequest",
    "DryRunRequestConfigType0",
    "DryRunRequestEventType0",
    "Ended",
    "EndpointState",
    "EndpointView",
    "ErrorBody",
    "ErrorDetail",
    "Event",
    "Eventbridge",
    "EventbridgeType",
    "EventDelivery",
    "EventEnvelope",
    "Exportable",
    "ExportRequest",
    "FieldError",
    "Figure",
    "FilterTest",
    "FilterTestRequest",
    "FilterTestRequestEventType0",
    "Header",
    "Health",
    "Http",
    "HttpType",
    "Ingested",
    "Kafka",
    "KafkaKey",
    "KafkaType",
    "Kinesis",
    "KinesisType",
    "LoggedEvent",
    "Nats",
    "NatsType",
    "OAuthErrorBody",
    "OnError",
    "OperationsOpenapiJsonResponse200",
    "Ordering",
    "PageDelivery",
    "PageDeliveryDataItem",
    "PageLoggedEvent",
    "PageLoggedEventDataItem",
    "PagePlugin",
    "PagePluginDataItem",
    "PageSource",
    "PageSourceDataItem",
    "PageSourceDataItemSettingsType0",
    "PageSourceRequest",
    "PageSourceRequestDataItem",
    "PageWebhook",
    "PageWebhookDataItem",
    "PageWebhookDataItemDestinationType0",
    "PageWebhookDataItemHeaders",
    "Plugin",
    "PluginRun",
    "PortalBrand",
    "PortalLinkRequest",
    "PublishRequest",
    "ReplayRequest",
    "ReplayStatus",
    "ReplayView",
    "ReportExport",
    "ReportExportsDownloadResponse200",
    "RetryFailedRequest",
    "RevokeRequest",
    "RotateSecretRequest",
    "Sns",
    "SnsType",
    "Source",
    "SourceCreateRequest",
    "SourceCreateRequestApiKeyType0",
    "SourceCreateRequestBasicType0",
    "SourceCreateRequestHmacType0",
    "SourceRequest",
    "SourceRotateRequest",
    "SourceSettingsType0",
    "SourceUpdateRequest",
    "SourceUpdateRequestApiKeyType0",
    "SourceUpdateRequestBasicType0",
    "SourceUpdateRequestHmacType0",
    "Sqs",
    "SqsType",
    "Status",
    "Subject",
    "TestEventQueued",
    "TestEventRequest",
    "Token",
    "TokenRequest",
    "Usage",
    "Webhook",
    "WebhookCreateRequest",
    "WebhookCreateRequestHeadersType0",
    "WebhookDestinationType0",
    "WebhookHeaders",
    "WebhookUpdateRequest",
    "WebhookUpdateRequestHeadersType0",
)
